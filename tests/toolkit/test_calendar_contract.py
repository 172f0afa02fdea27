"""The calendar and task tools' contract, on local files and on a real Radicale server.

"Now" is fixed at Tuesday 2026-11-24 10:30 in Europe/Paris.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from satchel.registry import ToolRegistry
from satchel.toolkit import ToolkitConfig
from satchel.toolkit._calendar_tools import calendar_tools
from satchel.toolkit._ical_store import CalendarStore
from satchel.toolkit._task_tools import task_tools

pytestmark = pytest.mark.anyio

PARIS = ZoneInfo("Europe/Paris")
NOW = datetime(2026, 11, 24, 10, 30, tzinfo=PARIS)


@pytest.fixture
def tools(config: ToolkitConfig, store: CalendarStore) -> ToolRegistry:
    return ToolRegistry(
        [
            *calendar_tools(config, store=store, now=lambda: NOW),
            *task_tools(config, store=store, now=lambda: NOW),
        ]
    )


async def ok(tools: ToolRegistry, name: str, args: dict[str, Any]) -> dict[str, Any]:
    result = await tools.call(name, args)
    assert result.error is None, result.error
    output = result.output
    assert output is not None
    return output.model_dump() if hasattr(output, "model_dump") else dict(output)


async def listed(tools: ToolRegistry, time_min: str, time_max: str) -> list[dict[str, Any]]:
    out = await ok(tools, "list_calendar_events", {"time_min": time_min, "time_max": time_max})
    return list(out["events"])


async def test_an_event_for_tomorrow_at_3pm_lists_at_15_00_in_the_users_zone(
    tools: ToolRegistry,
) -> None:
    made = await ok(
        tools, "add_calendar_event", {"title": "Dentist", "start_time": "tomorrow at 3pm"}
    )
    events = await listed(tools, "tomorrow", "tomorrow")
    assert [(e["event_id"], e["start"], e["end"]) for e in events] == [
        (made["event_id"], "2026-11-25T15:00:00+01:00", "2026-11-25T16:00:00+01:00")
    ]
    assert events[0]["all_day"] is False


async def test_in_two_hours_is_timed_and_a_bare_day_is_all_day(tools: ToolRegistry) -> None:
    await ok(
        tools,
        "add_calendar_event",
        {"title": "Call", "start_time": "in 2 hours", "duration": "1h30m"},
    )
    await ok(tools, "add_calendar_event", {"title": "Holiday", "start_time": "friday"})
    events = await listed(tools, "today", "friday")
    by_title = {e["title"]: e for e in events}
    assert by_title["Call"]["start"] == "2026-11-24T12:30:00+01:00"
    assert by_title["Call"]["end"] == "2026-11-24T14:00:00+01:00"
    assert by_title["Call"]["all_day"] is False
    assert (by_title["Holiday"]["start"], by_title["Holiday"]["all_day"]) == ("2026-11-27", True)


async def test_an_all_day_event_spans_the_days_named_inclusive(tools: ToolRegistry) -> None:
    made = await ok(
        tools, "add_calendar_event", {"title": "Trip", "start_time": "friday", "end_time": "sunday"}
    )
    assert (made["start"], made["end"], made["all_day"]) == ("2026-11-27", "2026-11-30", True)
    timed_end = await ok(
        tools,
        "add_calendar_event",
        {"title": "Fair", "start_time": "saturday", "end_time": "sunday at 5pm"},
    )
    assert (timed_end["start"], timed_end["end"]) == ("2026-11-28", "2026-11-30")
    events = await listed(tools, "saturday", "saturday")
    assert sorted(e["title"] for e in events) == ["Fair", "Trip"]


async def test_an_event_in_another_zone_lists_at_its_instant_in_the_users_zone(
    tools: ToolRegistry,
) -> None:
    await ok(
        tools,
        "add_calendar_event",
        {"title": "NY call", "start_time": "tomorrow at 9am", "timezone": "America/New_York"},
    )
    events = await listed(tools, "tomorrow", "day after tomorrow")
    assert events[0]["start"] == "2026-11-25T15:00:00+01:00"


async def test_a_weekly_event_lists_once_per_week_at_the_same_local_time(
    tools: ToolRegistry,
) -> None:
    made = await ok(
        tools, "add_calendar_event", {"title": "Team", "start_time": "every Monday at 9"}
    )
    assert made["recurrence"] == "FREQ=WEEKLY;BYDAY=MO"
    events = await listed(tools, "2026-11-30", "2026-12-20")
    assert [e["start"] for e in events] == [
        "2026-11-30T09:00:00+01:00",
        "2026-12-07T09:00:00+01:00",
        "2026-12-14T09:00:00+01:00",
    ]
    assert {e["event_id"] for e in events} == {made["event_id"]}
    assert {e["recurrence"] for e in events} == {"FREQ=WEEKLY;BYDAY=MO"}


async def test_every_other_friday_skips_a_week(tools: ToolRegistry) -> None:
    await ok(
        tools,
        "add_calendar_event",
        {"title": "Review", "start_time": "friday at 4pm", "recurrence": "every other Friday"},
    )
    events = await listed(tools, "2026-11-24", "2026-12-31")
    assert [e["start"][:10] for e in events] == ["2026-11-27", "2026-12-11", "2026-12-25"]


@pytest.mark.parametrize(
    ("recurrence", "days"),
    [
        ("every day at 9am for 3 times", ["2026-11-25", "2026-11-26", "2026-11-27"]),
        ("every day at 9am until November 27 at 10am", ["2026-11-25", "2026-11-26", "2026-11-27"]),
        ("every day at 9am until November 27 at 8am", ["2026-11-25", "2026-11-26"]),
    ],
)
async def test_a_repeating_event_ends_at_its_count_or_until_counted_from_its_start(
    tools: ToolRegistry, recurrence: str, days: list[str]
) -> None:
    await ok(tools, "add_calendar_event", {"title": "Pills", "start_time": recurrence})
    events = await listed(tools, "2026-11-24", "2026-12-10")
    assert [e["start"] for e in events] == [f"{day}T09:00:00+01:00" for day in days]
    later = await listed(tools, "2026-11-26", "2026-12-10")  # a window after the start
    assert [e["start"][:10] for e in later] == days[1:]


async def test_a_start_off_the_rule_moves_to_the_rules_first_day(
    config: ToolkitConfig, store: CalendarStore
) -> None:
    friday = datetime(2026, 11, 27, 10, 30, tzinfo=PARIS)  # so "tomorrow" is a Saturday
    tools = ToolRegistry(calendar_tools(config, store=store, now=lambda: friday))
    made = await ok(
        tools,
        "add_calendar_event",
        {"title": "Review", "start_time": "tomorrow 10am", "recurrence": "every other Friday"},
    )
    assert made["start"] == "2026-12-04T10:00:00+01:00"
    events = await listed(tools, "2026-11-27", "2026-12-31")
    assert [e["start"] for e in events] == [
        "2026-12-04T10:00:00+01:00",
        "2026-12-18T10:00:00+01:00",
    ]


async def test_a_start_time_holding_a_length_is_a_retry_naming_the_duration_field(
    tools: ToolRegistry,
) -> None:
    result = await tools.call(
        "add_calendar_event",
        {"title": "Sync", "start_time": "next Tuesday at 3pm for 45 minutes"},
    )
    assert result.error is not None
    assert result.error.kind == "retry"
    assert "duration" in result.error.message
    assert "'45 minutes'" in result.error.message
    assert await listed(tools, "2026-11-01", "2027-01-31") == []
    fixed = await ok(
        tools,
        "add_calendar_event",
        {"title": "Sync", "start_time": "next Tuesday at 3pm", "duration": "45 minutes"},
    )
    assert (fixed["start"], fixed["end"]) == (
        "2026-12-01T15:00:00+01:00",
        "2026-12-01T15:45:00+01:00",
    )


async def test_an_update_moves_the_event_and_keeps_its_length(tools: ToolRegistry) -> None:
    made = await ok(
        tools,
        "add_calendar_event",
        {
            "title": "Lunch",
            "start_time": "tomorrow at noon",
            "duration": "90 minutes",
            "location": "Cafe",
        },
    )
    moved = await ok(
        tools,
        "update_calendar_event",
        {"event_id": made["event_id"], "start_time": "friday at 1pm"},
    )
    assert (moved["start"], moved["end"]) == (
        "2026-11-27T13:00:00+01:00",
        "2026-11-27T14:30:00+01:00",
    )
    assert moved["location"] == "Cafe"
    events = await listed(tools, "today", "end of week")
    assert [(e["title"], e["start"]) for e in events] == [("Lunch", "2026-11-27T13:00:00+01:00")]


async def test_a_new_repeat_moves_an_off_rule_start_onto_the_rule_keeping_the_length(
    tools: ToolRegistry,
) -> None:
    made = await ok(
        tools,
        "add_calendar_event",
        {"title": "Review", "start_time": "wednesday at 2pm", "duration": "45 minutes"},
    )
    updated = await ok(
        tools, "update_calendar_event", {"event_id": made["event_id"], "recurrence": "every Friday"}
    )
    assert (updated["start"], updated["end"]) == (
        "2026-11-27T14:00:00+01:00",
        "2026-11-27T14:45:00+01:00",
    )
    events = await listed(tools, "2026-11-24", "2026-12-06")
    assert [e["start"] for e in events] == [
        "2026-11-27T14:00:00+01:00",
        "2026-12-04T14:00:00+01:00",
    ]


async def test_a_repeat_given_with_a_new_start_repeats_from_the_new_start(
    tools: ToolRegistry,
) -> None:
    made = await ok(tools, "add_calendar_event", {"title": "Yoga", "start_time": "wednesday 9am"})
    updated = await ok(
        tools,
        "update_calendar_event",
        {"event_id": made["event_id"], "start_time": "monday 8am", "recurrence": "every Monday"},
    )
    assert updated["start"] == "2026-11-30T08:00:00+01:00"
    assert updated["recurrence"] == "FREQ=WEEKLY;BYDAY=MO"


async def test_a_deleted_event_is_gone_and_a_second_delete_is_a_retry(tools: ToolRegistry) -> None:
    keep = await ok(tools, "add_calendar_event", {"title": "Keep", "start_time": "tomorrow at 10"})
    gone = await ok(tools, "add_calendar_event", {"title": "Drop", "start_time": "tomorrow at 11"})
    out = await ok(tools, "delete_calendar_event", {"event_id": gone["event_id"]})
    assert out == {"deleted": gone["event_id"], "title": "Drop"}
    again = await tools.call("delete_calendar_event", {"event_id": gone["event_id"]})
    assert again.error is not None
    assert again.error.kind == "retry"
    events = await listed(tools, "tomorrow", "tomorrow")
    assert [e["event_id"] for e in events] == [keep["event_id"]]


async def test_search_finds_events_by_word_and_leans_to_the_past(tools: ToolRegistry) -> None:
    await ok(
        tools, "add_calendar_event", {"title": "Dentist check-up", "start_time": "2026-11-20T09:00"}
    )
    await ok(
        tools, "add_calendar_event", {"title": "Dentist again", "start_time": "2026-12-20T09:00"}
    )
    await ok(tools, "add_calendar_event", {"title": "Gym", "start_time": "2026-11-20T18:00"})
    every = await ok(tools, "search_calendar_events", {"query": "DENTIST"})
    assert sorted(e["title"] for e in every["events"]) == ["Dentist again", "Dentist check-up"]
    recent = await ok(
        tools,
        "search_calendar_events",
        {"query": "dentist", "time_min": "friday", "time_max": "today"},
    )
    assert [e["title"] for e in recent["events"]] == ["Dentist check-up"]


@pytest.mark.parametrize(
    ("args", "field"),
    [
        ({"title": "X", "start_time": "blursday"}, "start_time"),
        ({"title": "X", "start_time": "tomorrow at 3pm", "end_time": "2pm"}, "end_time"),
        ({"title": "X", "start_time": "tomorrow at 3pm", "duration": "forever"}, "duration"),
        ({"title": "X", "start_time": "tomorrow", "timezone": "Mars/Base"}, "timezone"),
        ({"title": "X", "start_time": "tomorrow", "recurrence": "now and then"}, "recurrence"),
        (
            {"title": "X", "start_time": "tomorrow at 3pm", "end_time": "4pm", "duration": "1h"},
            "end_time",
        ),
    ],
)
async def test_a_bad_event_is_a_retry_and_stores_nothing(
    tools: ToolRegistry, args: dict[str, Any], field: str
) -> None:
    before = await listed(tools, "2026-11-01", "2027-01-31")
    result = await tools.call("add_calendar_event", args)
    assert result.error is not None
    assert result.error.kind == "retry"
    assert field in result.error.message
    assert await listed(tools, "2026-11-01", "2027-01-31") == before


async def test_an_unknown_event_id_is_a_retry_that_names_the_way_to_find_it(
    tools: ToolRegistry,
) -> None:
    result = await tools.call("update_calendar_event", {"event_id": "nope", "title": "Y"})
    assert result.error is not None
    assert result.error.kind == "retry"
    assert "list_calendar_events" in result.error.message


async def test_a_task_is_created_completed_and_listed(tools: ToolRegistry) -> None:
    made = await ok(
        tools, "create_task", {"title": "Send report", "notes": "Q4", "due": "tomorrow end of day"}
    )
    assert made["due"] == "2026-11-25T17:00:00+01:00"
    assert made["status"] == "needs_action"
    other = await ok(tools, "create_task", {"title": "Buy milk", "due": "friday"})
    assert other["due"] == "2026-11-27"
    listing = await ok(tools, "list_tasks", {})
    assert [t["title"] for t in listing["tasks"]] == ["Send report", "Buy milk"]
    done = await ok(tools, "mark_task_complete", {"task_id": made["task_id"]})
    assert done["status"] == "completed"
    assert done["completed"] is not None
    open_only = await ok(tools, "list_tasks", {})
    assert [t["title"] for t in open_only["tasks"]] == ["Buy milk"]
    everything = await ok(tools, "list_tasks", {"show_completed": True})
    assert [(t["title"], t["status"]) for t in everything["tasks"]] == [
        ("Buy milk", "needs_action"),
        ("Send report", "completed"),
    ]
    back = await ok(tools, "mark_task_incomplete", {"task_id": made["task_id"]})
    assert (back["status"], back["completed"]) == ("needs_action", None)


async def test_a_task_is_updated_and_deleted(tools: ToolRegistry) -> None:
    made = await ok(tools, "create_task", {"title": "Draft"})
    changed = await ok(
        tools, "update_task", {"task_id": made["task_id"], "title": "Final", "due": "in 3 days"}
    )
    assert (changed["title"], changed["due"]) == ("Final", "2026-11-27")
    cleared = await ok(tools, "update_task", {"task_id": made["task_id"], "due": "none"})
    assert cleared["due"] is None
    await ok(tools, "delete_task", {"task_id": made["task_id"]})
    assert (await ok(tools, "list_tasks", {"show_completed": True}))["tasks"] == []
    gone = await tools.call("mark_task_complete", {"task_id": made["task_id"]})
    assert gone.error is not None
    assert gone.error.kind == "retry"


async def test_get_task_lists_names_at_least_one_list(tools: ToolRegistry) -> None:
    lists = await ok(tools, "get_task_lists", {})
    assert len(lists["task_lists"]) >= 1
    made = await ok(tools, "create_task", {"title": "T", "task_list": lists["task_lists"][0]["id"]})
    listing = await ok(tools, "list_tasks", {"task_list": lists["task_lists"][0]["id"]})
    assert [t["task_id"] for t in listing["tasks"]] == [made["task_id"]]


async def test_a_bad_due_date_is_a_retry_and_creates_no_task(tools: ToolRegistry) -> None:
    result = await tools.call("create_task", {"title": "X", "due": "someday maybe"})
    assert result.error is not None
    assert result.error.kind == "retry"
    assert "due" in result.error.message
    assert (await ok(tools, "list_tasks", {"show_completed": True}))["tasks"] == []


async def test_a_weekly_event_keeps_its_wall_clock_time_across_daylight_saving(
    tools: ToolRegistry,
) -> None:
    await ok(
        tools,
        "add_calendar_event",
        {"title": "Yoga", "start_time": "2027-03-22T09:00", "recurrence": "every Monday"},
    )
    events = await listed(tools, "2027-03-22", "2027-04-06")
    assert [e["start"] for e in events] == [
        "2027-03-22T09:00:00+01:00",
        "2027-03-29T09:00:00+02:00",
        "2027-04-05T09:00:00+02:00",
    ]


async def test_every_task_tool_names_the_list_a_task_is_on_as_list_tasks_does(
    tools: ToolRegistry,
) -> None:
    made = await ok(tools, "create_task", {"title": "Water plants"})
    [listed_task] = (await ok(tools, "list_tasks", {}))["tasks"]
    assert listed_task["task_list"] is not None
    assert made["task_list"] == listed_task["task_list"]
    task_id = made["task_id"]
    updated = await ok(tools, "update_task", {"task_id": task_id, "notes": "ferns"})
    done = await ok(tools, "mark_task_complete", {"task_id": task_id})
    reopened = await ok(tools, "mark_task_incomplete", {"task_id": task_id})
    assert {updated["task_list"], done["task_list"], reopened["task_list"]} == {
        listed_task["task_list"]
    }


async def test_a_task_keeps_its_estimate_in_minutes(tools: ToolRegistry) -> None:
    made = await ok(tools, "create_task", {"title": "Taxes", "estimate_minutes": 45})
    assert made["estimate_minutes"] == 45
    [listed_task] = (await ok(tools, "list_tasks", {}))["tasks"]
    assert listed_task["estimate_minutes"] == 45
    changed = await ok(tools, "update_task", {"task_id": made["task_id"], "estimate_minutes": 90})
    assert changed["estimate_minutes"] == 90
    [again] = (await ok(tools, "list_tasks", {}))["tasks"]
    assert again["estimate_minutes"] == 90


async def test_tasks_due_the_same_day_list_by_priority(
    tools: ToolRegistry, store: CalendarStore
) -> None:
    low = await ok(tools, "create_task", {"title": "Low", "due": "Friday"})
    high = await ok(tools, "create_task", {"title": "High", "due": "Friday"})
    await ok(tools, "create_task", {"title": "Earlier", "due": "Thursday"})
    for task_id, priority in ((low["task_id"], 9), (high["task_id"], 1)):
        todo = store.get("todo", task_id)
        assert todo is not None
        todo.add("PRIORITY", priority)  # another client set them
        store.save("todo", todo)
    listing = await ok(tools, "list_tasks", {})
    assert [t["title"] for t in listing["tasks"]] == ["Earlier", "High", "Low"]
