"""Dates at the end of the calendar (year 9999): the fuzz soak's findings (issue 28,
Fuzzing). A time whose end, window or next day falls past what a date can hold is a
retry that says so, never an ``internal`` error."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import icalendar
import pytest

from satchel.registry import ToolRegistry
from satchel.toolkit import ToolkitConfig
from satchel.toolkit._calendar_tools import calendar_tools
from satchel.toolkit._ical_store import LocalCalendarStore, expand

pytestmark = pytest.mark.anyio

PARIS = ZoneInfo("Europe/Paris")
NOW = datetime(2026, 11, 24, 10, 30, tzinfo=PARIS)


def registry(root: Path) -> ToolRegistry:
    config = ToolkitConfig(data_dir=root, timezone="Europe/Paris")
    return ToolRegistry(
        calendar_tools(config, store=LocalCalendarStore(root / "calendar"), now=lambda: NOW)
    )


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("add_calendar_event", {"title": "Last", "start_time": "9999-12-31T23:59:59"}),
        ("add_calendar_event", {"title": "Last", "start_time": "9999-12-31"}),
        (
            "add_calendar_event",
            {"title": "Last", "start_time": "9999-12-31T22:00", "duration": "3 hours"},
        ),
        (
            "add_calendar_event",
            {"title": "Last", "start_time": "9999-12-30", "end_time": "9999-12-31"},
        ),
        ("list_calendar_events", {"time_min": "9999-12-31T23:00"}),
        ("list_calendar_events", {"time_min": "2026-12-01", "time_max": "9999-12-31"}),
        ("search_calendar_events", {"query": "x", "time_min": "9999-12-31T23:00"}),
    ],
)
async def test_a_time_at_the_end_of_the_calendar_is_a_retry_not_an_internal_error(
    tmp_path: Path, tool: str, args: dict[str, Any]
) -> None:
    result = await registry(tmp_path).call(tool, args)
    assert result.error is not None
    assert result.error.kind == "retry", result.error
    assert "9999" in result.error.message


async def test_moving_an_event_to_the_end_of_the_calendar_keeps_it_whole(tmp_path: Path) -> None:
    tools = registry(tmp_path)
    made = await tools.call("add_calendar_event", {"title": "A", "start_time": "tomorrow 9am"})
    assert made.error is None
    event_id = made.output.event_id  # type: ignore[union-attr]
    moved = await tools.call(
        "update_calendar_event", {"event_id": event_id, "start_time": "9999-12-31T23:30"}
    )
    assert moved.error is not None
    assert moved.error.kind == "retry"
    listed = await tools.call("list_calendar_events", {"time_min": "today"})
    assert [e.event_id for e in listed.output.events] == [event_id]  # type: ignore[union-attr]


async def test_events_in_year_one_and_year_9999_never_break_a_listing(tmp_path: Path) -> None:
    config = ToolkitConfig(data_dir=tmp_path, timezone="Pacific/Kiritimati")  # UTC+14
    tools = ToolRegistry(
        calendar_tools(config, store=LocalCalendarStore(tmp_path / "calendar"), now=lambda: NOW)
    )
    for start, rule in (("0001-01-01", None), ("9999-12-01", "daily"), ("tomorrow 9am", None)):
        args = {"title": f"at {start}", "start_time": start}
        made = await tools.call("add_calendar_event", args | ({"recurrence": rule} if rule else {}))
        assert made.error is None, made.error
    for args in (
        {"time_min": "today"},
        {"time_min": "0001-01-01T00:30"},
        {"time_min": "9999-12-01"},
    ):
        listed = await tools.call("list_calendar_events", args)
        assert listed.error is None, (args, listed.error)
    week = await tools.call("list_calendar_events", {"time_min": "today"})
    assert [e.title for e in week.output.events] == ["at tomorrow 9am"]  # type: ignore[union-attr]
    window = {"query": "at", "time_min": "0001-01-01", "time_max": "2030-01-01"}
    found = await tools.call("search_calendar_events", window)
    assert found.error is None, found.error
    assert "at tomorrow 9am" in [e.title for e in found.output.events]  # type: ignore[union-attr]


@pytest.mark.parametrize("tool", ["list_calendar_events", "search_calendar_events"])
async def test_a_whole_day_time_max_before_time_min_is_a_retry(tmp_path: Path, tool: str) -> None:
    tools = registry(tmp_path)
    made = await tools.call("add_calendar_event", {"title": "x", "start_time": "tomorrow 9am"})
    assert made.error is None
    args = {"time_min": "2026-12-01", "time_max": "2026-11-28"}
    result = await tools.call(tool, args | ({"query": "x"} if tool.startswith("search") else {}))
    assert result.error is not None
    assert result.error.kind == "retry", result.error
    assert "time_max" in result.error.message


def test_an_event_out_of_range_is_warned_about_once_not_at_every_listing(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The soak's calendar filled with such events: every listing expanded each event on
    its own and warned again for each, and the listings slowed to a crawl."""

    def event(uid: str, start: datetime, end: datetime, rule: dict[str, Any] | None = None) -> Any:
        made = icalendar.Event()
        made.add("UID", uid)
        made.add("DTSTART", start)
        made.add("DTEND", end)
        if rule is not None:
            made.add("RRULE", rule)
        return made

    items = [
        event(
            "daily-to-9999",
            datetime(9998, 12, 30, tzinfo=UTC),
            datetime(9999, 12, 31, 23, 59, tzinfo=UTC),
            {"FREQ": "DAILY"},
        ),
        event(
            "meeting", datetime(2026, 11, 25, 9, tzinfo=UTC), datetime(2026, 11, 25, 10, tzinfo=UTC)
        ),
    ]
    window = (datetime(1, 1, 2, tzinfo=UTC), datetime(9999, 12, 30, tzinfo=UTC))
    with caplog.at_level("WARNING", logger="satchel.toolkit.calendar"):
        for _ in range(3):
            assert [str(e.get("UID")) for e in expand(items, *window)] == ["meeting"]
    warned = [r.getMessage() for r in caplog.records if "run out of range" in r.getMessage()]
    assert warned == ["skipped event daily-to-9999: its dates run out of range"]
