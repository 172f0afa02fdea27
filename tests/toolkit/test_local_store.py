"""The local calendar store: files another program broke, odd ids, and any text a
model sends."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import anyio
import anyio.to_thread
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from satchel.registry import ToolRegistry
from satchel.toolkit import ToolkitConfig, productivity_toolkit
from satchel.toolkit._calendar_tools import calendar_tools
from satchel.toolkit._ical_store import LocalCalendarStore
from satchel.toolkit._task_tools import task_tools

PARIS = ZoneInfo("Europe/Paris")
NOW = datetime(2026, 11, 24, 10, 30, tzinfo=PARIS)


def registry(root: Path) -> ToolRegistry:
    config = ToolkitConfig(data_dir=root, timezone="Europe/Paris")
    store = LocalCalendarStore(root / "calendar")
    return ToolRegistry(
        [
            *calendar_tools(config, store=store, now=lambda: NOW),
            *task_tools(config, store=store, now=lambda: NOW),
        ]
    )


@pytest.mark.anyio
async def test_a_broken_file_is_skipped_and_the_other_events_still_list(tmp_path: Path) -> None:
    tools = registry(tmp_path)
    made = await tools.call("add_calendar_event", {"title": "A", "start_time": "tomorrow 9am"})
    assert made.error is None
    (tmp_path / "calendar" / "events" / "junk.ics").write_text("BEGIN:VCALENDAR\nnot ical")
    listed = await tools.call("list_calendar_events", {"time_min": "today"})
    assert listed.error is None
    assert [e.title for e in listed.output.events] == ["A"]  # type: ignore[union-attr]


@pytest.mark.anyio
async def test_an_id_with_path_characters_stays_inside_the_calendar_folder(
    tmp_path: Path,
) -> None:
    tools = registry(tmp_path)
    result = await tools.call("delete_calendar_event", {"event_id": "../../memory.db"})
    assert result.error is not None
    assert result.error.kind == "retry"
    left = await anyio.to_thread.run_sync(lambda: sorted(p.name for p in tmp_path.iterdir()))
    assert left == []


def test_the_productivity_toolkit_has_agenticpals_calendar_and_task_tools(
    tmp_path: Path,
) -> None:
    tools = productivity_toolkit(ToolkitConfig(data_dir=tmp_path, timezone="UTC"))
    specs = {t.spec.name: t.spec for t in tools}
    expected = {
        "add_calendar_event": ("calendar", ("create",)),
        "update_calendar_event": ("calendar", ("update",)),
        "delete_calendar_event": ("calendar", ("delete",)),
        "list_calendar_events": ("calendar", ("read",)),
        "search_calendar_events": ("calendar", ("read", "search")),
        "create_task": ("tasks", ("create",)),
        "update_task": ("tasks", ("update",)),
        "mark_task_complete": ("tasks", ("update",)),
        "mark_task_incomplete": ("tasks", ("update",)),
        "delete_task": ("tasks", ("delete",)),
        "list_tasks": ("tasks", ("read",)),
        "get_task_lists": ("tasks", ("read",)),
    }
    for name, (category, actions) in expected.items():
        assert (specs[name].category, specs[name].actions) == (category, actions)
        assert specs[name].summary
    assert {n for n, s in specs.items() if s.is_destructive()} >= {
        "delete_calendar_event",
        "delete_task",
    }
    params = specs["add_calendar_event"].input_schema["properties"]
    assert set(params) == {
        "title",
        "start_time",
        "end_time",
        "duration",
        "description",
        "location",
        "attendees",
        "timezone",
        "recurrence",
    }
    assert set(specs["list_calendar_events"].input_schema["properties"]) >= {"time_min", "time_max"}


texts = st.one_of(st.text(max_size=80), st.sampled_from(["", " ", "\x00", "tomorrow", "9am"]))


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(title=texts, start=texts, duration=st.one_of(st.none(), texts))
def test_any_text_gives_an_event_or_a_structured_error_and_keeps_what_was_stored(
    tmp_path: Path, title: str, start: str, duration: str | None
) -> None:
    tools = registry(tmp_path)

    async def run() -> None:
        keep = await tools.call("create_task", {"title": "keep me"})
        assert keep.error is None
        args = {"title": title, "start_time": start}
        if duration is not None:
            args["duration"] = duration
        result = await tools.call("add_calendar_event", args)
        if result.error is not None:
            assert result.error.kind in ("retry", "invalid_arguments"), result.error
        listing = await tools.call("list_tasks", {})
        assert listing.error is None
        assert "keep me" in [t.title for t in listing.output.tasks]  # type: ignore[union-attr]
        deleted = await tools.call("delete_task", {"task_id": keep.output.task_id})  # type: ignore[union-attr]
        assert deleted.error is None

    anyio.run(run)


@pytest.mark.anyio
async def test_a_listing_follows_changes_made_by_another_process(tmp_path: Path) -> None:
    first, other = registry(tmp_path), registry(tmp_path)  # two stores, as two processes
    made = await first.call("add_calendar_event", {"title": "A", "start_time": "tomorrow 9am"})
    assert made.error is None
    week = {"time_min": "today", "time_max": "friday"}
    assert [e.title for e in (await first.call("list_calendar_events", week)).output.events] == [
        "A"
    ]  # type: ignore[union-attr]
    moved = await other.call(
        "update_calendar_event",
        {"event_id": made.output.event_id, "start_time": "2027-03-01T09:00"},  # type: ignore[union-attr]
    )
    assert moved.error is None
    added = await other.call("add_calendar_event", {"title": "B", "start_time": "thursday"})
    assert added.error is None
    listed = (await first.call("list_calendar_events", week)).output
    assert [e.title for e in listed.events] == ["B"]  # type: ignore[union-attr]


@pytest.mark.anyio
async def test_a_damaged_index_is_rebuilt(tmp_path: Path) -> None:
    tools = registry(tmp_path)
    made = await tools.call("add_calendar_event", {"title": "A", "start_time": "tomorrow 9am"})
    assert made.error is None
    week = {"time_min": "today", "time_max": "friday"}
    await tools.call("list_calendar_events", week)
    index = tmp_path / "calendar" / "events" / ".satchel-index.json"
    index.write_text('{"version": 1, "files": {"x": [1]}}')
    fresh = registry(tmp_path)
    listed = (await fresh.call("list_calendar_events", week)).output
    assert [e.title for e in listed.events] == ["A"]  # type: ignore[union-attr]


@pytest.mark.anyio
async def test_listings_running_at_once_all_see_every_event(tmp_path: Path) -> None:
    tools = registry(tmp_path)
    for hour in range(9, 19):
        made = await tools.call(
            "add_calendar_event", {"title": f"E{hour}", "start_time": f"tomorrow at {hour}:00"}
        )
        assert made.error is None
    seen: list[list[str]] = []

    async def list_once() -> None:
        result = await tools.call("list_calendar_events", {"time_min": "tomorrow"})
        assert result.error is None
        seen.append([e.title for e in result.output.events])  # type: ignore[union-attr]

    async with anyio.create_task_group() as group:
        for _ in range(8):
            group.start_soon(list_once)
    assert seen == [[f"E{h}" for h in range(9, 19)]] * 8
