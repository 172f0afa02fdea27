"""The calendar tools, with AgenticPal's names and parameters: ``add_calendar_event``,
``update_calendar_event``, ``delete_calendar_event``, ``list_calendar_events``,
``search_calendar_events``."""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable, Generator
from contextlib import contextmanager
from datetime import UTC, date, datetime, time, timedelta
from typing import Annotated, Any
from zoneinfo import ZoneInfo

import icalendar
from pydantic import BaseModel, Field

from satchel._errors import ToolRetry
from satchel.toolkit._calendar_model import (
    MAX_TEXT,
    MAX_TITLE,
    CalendarEvent,
    event_record,
    open_calendar_store,
    zone_of,
)
from satchel.toolkit._config import ToolkitConfig
from satchel.toolkit._dates import DateReader, When
from satchel.toolkit._durations import amounts, normalise, read_duration
from satchel.toolkit._ical_store import CalendarStore, append, drop, moment, put, texts
from satchel.toolkit._recurrence import looks_recurring, read_recurrence
from satchel.tools import BaseTool, tool

__all__ = ["DeletedEvent", "EventList", "calendar_tools"]

Title = Annotated[str, Field(min_length=1, max_length=MAX_TITLE)]
Text = Annotated[str, Field(max_length=MAX_TEXT)]
Attendees = Annotated[list[Annotated[str, Field(max_length=320)]], Field(max_length=200)]
MaxResults = Annotated[int, Field(ge=1, le=500)]
_LIST_SPAN = timedelta(days=7)


class EventList(BaseModel):
    """Events, soonest first."""

    events: list[CalendarEvent]
    time_min: str | None = None
    time_max: str | None = None
    truncated: bool = Field(default=False, description="More matched than max_results.")


class DeletedEvent(BaseModel):
    """What ``delete_calendar_event`` removed."""

    deleted: str
    title: str


class _Calendar:
    """What the calendar tools share: the store, the config and the clock."""

    def __init__(
        self, config: ToolkitConfig, store: CalendarStore, now: Callable[[], datetime] | None
    ) -> None:
        self.config = config
        self.store = store
        self.now = now

    def reader(self, zone: ZoneInfo) -> DateReader:
        return DateReader(zone, now=self.now)

    def event(self, event_id: str) -> icalendar.Component:
        found = self.store.get("event", event_id)
        if found is None:
            raise ToolRetry(
                f"There is no event with event_id {event_id[:100]!r}. Find it with "
                "list_calendar_events or search_calendar_events.",
                details={"field": "event_id", "value": event_id[:100]},
            )
        return found


@contextmanager
def _within_calendar(field: str) -> Generator[None]:
    """Date arithmetic that runs past year 9999 (an event's end, a search window, the day
    after) is a retry for the model, not an ``internal`` error."""
    try:
        yield
    except OverflowError:
        raise ToolRetry(
            f"{field} is too close to the end of the calendar (9999-12-31): the event or "
            "window would end after it. Give an earlier time.",
            details={"field": field},
        ) from None


def _set_times(
    event: icalendar.Component, start: When, end: datetime | date | None, *, field: str
) -> None:
    for name in ("DTSTART", "DTEND", "DURATION"):
        drop(event, name)
    first: date | datetime = start.day if start.all_day else start.start
    if end is None:
        end = start.day + timedelta(days=1) if start.all_day else start.start + timedelta(hours=1)
    if (end <= first) if type(end) is type(first) else False:
        raise ToolRetry(
            f"{field} must come after start_time ({first.isoformat()}); give a later end or a "
            "duration such as '1 hour'.",
            details={"field": field},
        )
    put(event, "DTSTART", first)
    put(event, "DTEND", end)


def _end_of(
    reader: DateReader, start: When, end_time: str | None, duration: str | None
) -> datetime | date | None:
    if end_time is not None and duration is not None:
        raise ToolRetry("Give end_time or duration, not both.", details={"field": "end_time"})
    if duration is not None:
        span = read_duration(duration)
        if start.all_day:
            return start.day + max(timedelta(days=1), timedelta(days=span.days))
        return start.start + span
    if end_time is None:
        return start.end.date() if start.all_day and start.end is not None else None
    end = reader.when(end_time, field="end_time", on=None if start.all_day else start.day)
    if start.all_day:
        # the end names the last day included (DTEND excludes it); a time on it is
        # dropped, since an all-day event's start and end must both be dates
        return end.day + timedelta(days=1)
    return end.start if not end.all_day else end.start + timedelta(days=1)


def _start_of(
    reader: DateReader, start_time: str, recurrence: str | None
) -> tuple[When, str | None]:
    """The first start and the RRULE (when it repeats)."""
    if recurrence is None and looks_recurring(start_time):
        repeat = read_recurrence(reader, start_time, field="start_time")
        return repeat.first, repeat.rule
    start = _read_start(reader, start_time)
    if recurrence is None or not recurrence.strip() or recurrence.strip().lower() == "none":
        return start, None
    repeat = read_recurrence(reader, recurrence, start=start)
    return repeat.first, repeat.rule


_HELD_DURATION = re.compile(r"^(?P<moment>.+?)\s+for\s+(?P<span>.+)$", re.IGNORECASE)


def _read_start(reader: DateReader, start_time: str) -> When:
    """``start_time`` read; one that holds a length ('next Tuesday at 3pm for 45
    minutes') is a retry that says to put the length in ``duration``."""
    try:
        return reader.when(start_time, field="start_time")
    except ToolRetry as exc:
        held = _HELD_DURATION.match(start_time.strip())
        if held is None or amounts(normalise(held.group("span"))) is None:
            raise
        moment, span = held.group("moment"), held.group("span")
        raise ToolRetry(
            f"start_time {start_time[:200]!r} holds a length ({span[:100]!r}): give the "
            f"moment alone in start_time ({moment[:100]!r}) and the length in the duration "
            f"field (duration: {span[:100]!r}).",
            details={"field": "start_time", "value": start_time[:200], "use": "duration"},
        ) from exc


def _fill(
    event: icalendar.Component,
    *,
    title: str | None,
    description: str | None,
    location: str | None,
    attendees: list[str] | None,
) -> None:
    for name, value in (("SUMMARY", title), ("DESCRIPTION", description), ("LOCATION", location)):
        if value is not None:
            drop(event, name)
            if value:
                put(event, name, value)
    if attendees is not None:
        drop(event, "ATTENDEE")
        for person in attendees:
            address = person.strip()
            if address:
                append(event, "ATTENDEE", f"mailto:{address}")


def _set_rule(event: icalendar.Component, rule: str | None) -> None:
    drop(event, "RRULE")
    if rule:
        put(event, "RRULE", icalendar.vRecur.from_ical(rule))


def calendar_tools(
    config: ToolkitConfig,
    *,
    store: CalendarStore | None = None,
    now: Callable[[], datetime] | None = None,
) -> list[BaseTool]:
    """The five calendar tools on ``store`` (default: the one ``config`` names).

    Args:
        config: The user's zone and where the calendar lives.
        store: The calendar store to use instead of the configured one.
        now: The clock (for tests).
    """
    cal = _Calendar(config, store if store is not None else open_calendar_store(config), now)
    return [
        _add_calendar_event(cal),
        _update_calendar_event(cal),
        _delete_calendar_event(cal),
        _list_calendar_events(cal),
        _search_calendar_events(cal),
    ]


def _add_calendar_event(cal: _Calendar) -> BaseTool:
    @tool(
        category="calendar",
        actions=["create"],
        summary="Schedule a new event, meeting or appointment on the calendar.",
    )
    def add_calendar_event(
        title: Title,
        start_time: Annotated[str, Field(max_length=200)],
        end_time: Annotated[str | None, Field(max_length=200)] = None,
        duration: Annotated[str | None, Field(max_length=100)] = None,
        description: Text = "",
        location: Annotated[str | None, Field(max_length=1000)] = None,
        attendees: Attendees | None = None,
        timezone: Annotated[str | None, Field(max_length=64)] = None,
        recurrence: Annotated[str | None, Field(max_length=200)] = None,
    ) -> CalendarEvent:
        """Schedule a new event, meeting or appointment (or a repeating one) on the user's
        calendar, or block time for something. Times are read in the user's zone.

        Args:
            title: What the event is.
            start_time: When it starts, in words or ISO 8601: 'tomorrow at 3pm', 'in 2
                hours', 'next Tuesday morning', 'Friday' (a day alone makes an all-day
                event), '2026-12-03T10:30'; or a recurrence such as 'every Monday at 9'.
            end_time: When it ends ('4pm', 'Sunday'); default one hour (or one day).
            duration: Instead of end_time: '90 minutes', '1h30m', 'half an hour'.
            description: Notes for the event.
            location: Where it happens.
            attendees: Email addresses of the people invited.
            timezone: The IANA zone the times are in, e.g. 'Europe/Paris'; default the
                user's.
            recurrence: How it repeats: 'every Monday', 'every other Friday', 'daily',
                'monthly on the 1st', 'every weekday until December 31', or an RRULE.
        """
        zone = zone_of(timezone, cal.config)
        reader = cal.reader(zone)
        with _within_calendar("start_time"):
            start, rule = _start_of(reader, start_time, recurrence)
            end = _end_of(reader, start, end_time, duration)
        event = icalendar.Event()
        put(event, "UID", str(uuid.uuid4()))
        put(event, "DTSTAMP", datetime.now(UTC).replace(microsecond=0))
        _fill(event, title=title, description=description, location=location, attendees=attendees)
        with _within_calendar("start_time"):
            _set_times(event, start, end, field="end_time" if end_time is not None else "duration")
        _set_rule(event, rule)
        cal.store.save("event", event, new=True)
        return event_record(event, zone)

    return add_calendar_event


def _update_calendar_event(cal: _Calendar) -> BaseTool:
    @tool(
        category="calendar",
        actions=["update"],
        summary="Reschedule or edit a calendar event: move it, rename it, change details.",
    )
    def update_calendar_event(
        event_id: Annotated[str, Field(min_length=1, max_length=500)],
        title: Annotated[str | None, Field(min_length=1, max_length=MAX_TITLE)] = None,
        start_time: Annotated[str | None, Field(max_length=200)] = None,
        end_time: Annotated[str | None, Field(max_length=200)] = None,
        duration: Annotated[str | None, Field(max_length=100)] = None,
        description: Annotated[str | None, Field(max_length=MAX_TEXT)] = None,
        location: Annotated[str | None, Field(max_length=1000)] = None,
        attendees: Attendees | None = None,
        timezone: Annotated[str | None, Field(max_length=64)] = None,
        recurrence: Annotated[str | None, Field(max_length=200)] = None,
    ) -> CalendarEvent:
        """Reschedule or edit an existing calendar event: move its time, change its length,
        title, place, notes or attendees. Only the fields given change.

        Args:
            event_id: The event's id, from list_calendar_events or search_calendar_events.
            title: The new title.
            start_time: The new start ('Friday at 10am'); the length stays unless
                end_time or duration is given.
            end_time: The new end.
            duration: The new length ('45 minutes').
            description: The new notes ('' clears them).
            location: The new place ('' clears it).
            attendees: The new list of invited addresses.
            timezone: The IANA zone the times are in; default the user's.
            recurrence: The new repetition ('every Tuesday'), or 'none' to stop repeating.
        """
        zone = zone_of(timezone, cal.config)
        reader = cal.reader(zone)
        event = cal.event(event_id)
        if start_time is not None or end_time is not None or duration is not None:
            with _within_calendar("start_time"):
                _move(event, reader, zone, start_time, end_time, duration)
        if recurrence is not None:
            _repeat(event, reader, zone, recurrence)
        _fill(event, title=title, description=description, location=location, attendees=attendees)
        sequence = str(event.get("SEQUENCE", "0"))
        put(event, "SEQUENCE", int(sequence) + 1 if sequence.isdigit() else 1)
        cal.store.save("event", event)
        return event_record(event, zone)

    return update_calendar_event


def _delete_calendar_event(cal: _Calendar) -> BaseTool:
    @tool(
        category="calendar",
        actions=["delete"],
        summary="Cancel and delete a calendar event or appointment.",
        destructive=True,
    )
    def delete_calendar_event(
        event_id: Annotated[str, Field(min_length=1, max_length=500)],
    ) -> DeletedEvent:
        """Cancel and delete a calendar event or appointment (every occurrence, if it
        repeats). Needs the user's approval.

        Args:
            event_id: The event's id, from list_calendar_events or search_calendar_events.
        """
        event = cal.event(event_id)
        title = str(event.get("SUMMARY", ""))
        if not cal.store.delete("event", event_id):
            raise ToolRetry(f"The event {event_id[:100]!r} was already gone.")
        return DeletedEvent(deleted=event_id, title=title)

    return delete_calendar_event


def _list_calendar_events(cal: _Calendar) -> BaseTool:
    @tool(
        category="calendar",
        actions=["read"],
        summary="Show the calendar schedule between two times: what is on, when I am free.",
        read_only=True,
    )
    def list_calendar_events(
        time_min: Annotated[str | None, Field(max_length=200)] = None,
        time_max: Annotated[str | None, Field(max_length=200)] = None,
        max_results: MaxResults = 50,
        timezone: Annotated[str | None, Field(max_length=64)] = None,
    ) -> EventList:
        """Show the user's schedule: the calendar events between time_min and time_max,
        soonest first (to see what is on, or when they are free or busy); repeating
        events appear once per occurrence.

        Args:
            time_min: From when ('today', 'monday', '2026-12-01'); default now.
            time_max: Until when ('friday', 'end of month'; a day counts whole); default
                a week after time_min.
            max_results: At most this many events.
            timezone: The IANA zone to read and show times in; default the user's.
        """
        zone = zone_of(timezone, cal.config)
        reader = cal.reader(zone)
        start = reader.now() if time_min is None else reader.when(time_min, field="time_min").start
        with _within_calendar("time_min"):
            end = _window_end(reader, time_max, start)
        return _listed(cal.store.between(start, end), zone, start, end, max_results)

    return list_calendar_events


def _search_calendar_events(cal: _Calendar) -> BaseTool:
    @tool(
        category="calendar",
        actions=["read", "search"],
        summary="Find calendar events or appointments by who, what or where, past or upcoming.",
        read_only=True,
    )
    def search_calendar_events(
        query: Annotated[str, Field(min_length=1, max_length=500)],
        time_min: Annotated[str | None, Field(max_length=200)] = None,
        time_max: Annotated[str | None, Field(max_length=200)] = None,
        max_results: MaxResults = 50,
        timezone: Annotated[str | None, Field(max_length=64)] = None,
    ) -> EventList:
        """Find events whose title, description, location or attendees contain every
        word of the query.

        Args:
            query: Words to find, e.g. 'dentist' or 'team lunch'.
            time_min: Only events from then ('last monday', 'last month'); default: any.
            time_max: Only events until then; default: any.
            max_results: At most this many events.
            timezone: The IANA zone to read and show times in; default the user's.
        """
        zone = zone_of(timezone, cal.config)
        reader = cal.reader(zone)
        words = query.lower().split()
        if time_min is None and time_max is None:
            items = cal.store.items("event")
            start, end = None, None
        else:
            start = (
                datetime(1970, 1, 1, tzinfo=UTC)
                if time_min is None
                else reader.when(time_min, field="time_min", prefer="past").start
            )
            with _within_calendar("time_min"):
                end = _window_end(
                    reader, time_max, start, prefer="past", default=timedelta(days=3650)
                )
            items = cal.store.between(start, end)
        hits = [e for e in items if all(w in _haystack(e) for w in words)]
        return _listed(hits, zone, start, end, max_results)

    return search_calendar_events


def _move(
    event: icalendar.Component,
    reader: DateReader,
    zone: ZoneInfo,
    start_time: str | None,
    end_time: str | None,
    duration: str | None,
) -> None:
    """``update_calendar_event``'s new times: a new start keeps the old length unless
    ``end_time`` or ``duration`` says otherwise; a new end alone keeps the old start."""
    if start_time is not None:
        start, rule = _start_of(reader, start_time, None)
    else:
        start, rule = _old_start(event, zone), None
    end = _end_of(reader, start, end_time, duration)
    if end is None and start_time is not None:
        end = _kept_length(event, start)
    _set_times(event, start, end, field="end_time" if end_time else "duration")
    if rule is not None:
        _set_rule(event, rule)


def _old_start(event: icalendar.Component, zone: ZoneInfo) -> When:
    """The start ``event`` has now, read in ``zone``."""
    old = moment(event, "DTSTART")
    if isinstance(old, datetime):
        return When(start=old.astimezone(zone), all_day=False)
    if isinstance(old, date):
        return When(start=datetime.combine(old, time(), zone), all_day=True)
    raise ToolRetry("The event has no start; give start_time.")


def _repeat(
    event: icalendar.Component, reader: DateReader, zone: ZoneInfo, recurrence: str
) -> None:
    """Set (or, for 'none'/'never'/'', clear) the repetition of ``event`` from its start
    (as this update left it). A start the new rule does not land on moves to the rule's
    first occurrence from it, keeping the event's length: 'every Friday' given to a
    Tuesday event starts on the Friday after, not with one stray Tuesday."""
    if not recurrence.strip() or recurrence.strip().lower() in ("none", "never"):
        _set_rule(event, None)
        return
    start = _old_start(event, zone)
    repeat = read_recurrence(reader, recurrence, start=start)
    if repeat.first.start != start.start:
        with _within_calendar("recurrence"):
            _set_times(event, repeat.first, _kept_length(event, repeat.first), field="recurrence")
    _set_rule(event, repeat.rule)


def _kept_length(event: icalendar.Component, start: When) -> date | datetime | None:
    """The end that keeps the event's earlier length from its new ``start``."""
    old_start, old_end = moment(event, "DTSTART"), moment(event, "DTEND")
    length: timedelta
    if isinstance(old_start, datetime) and isinstance(old_end, datetime):
        length = old_end - old_start
    elif (
        isinstance(old_start, date)
        and isinstance(old_end, date)
        and not isinstance(old_start, datetime)
        and not isinstance(old_end, datetime)
    ):
        length = old_end - old_start
        if not start.all_day:
            return None
    else:
        return None
    if start.all_day:
        return start.day + max(timedelta(days=1), timedelta(days=length.days))
    return start.start + length


def _window_end(
    reader: DateReader,
    time_max: str | None,
    start: datetime,
    *,
    prefer: Any = "future",
    default: timedelta = _LIST_SPAN,
) -> datetime:
    if time_max is None:
        return start + default
    end = reader.when(time_max, field="time_max", prefer=prefer)
    last = end.start
    if end.all_day:
        last = end.end if end.end is not None else end.start + timedelta(days=1)
    if last <= start:
        raise ToolRetry(
            f"time_max {time_max[:100]!r} is not after time_min ({start.isoformat()}).",
            details={"field": "time_max"},
        )
    return last


def _haystack(event: icalendar.Component) -> str:
    parts = [str(event.get(n, "")) for n in ("SUMMARY", "DESCRIPTION", "LOCATION")]
    return " ".join(parts + texts(event, "ATTENDEE")).lower()


def _sort_key(event: icalendar.Component, zone: ZoneInfo) -> datetime:
    value = moment(event, "DTSTART")
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=zone)
    if isinstance(value, date):
        return datetime.combine(value, time(), zone)
    return datetime.min.replace(tzinfo=UTC)


def _listed(
    items: list[icalendar.Component],
    zone: ZoneInfo,
    start: datetime | None,
    end: datetime | None,
    max_results: int,
) -> EventList:
    ordered = sorted(items, key=lambda e: _sort_key(e, zone))
    return EventList(
        events=[event_record(e, zone) for e in ordered[:max_results]],
        time_min=None if start is None else start.astimezone(zone).isoformat(),
        time_max=None if end is None else end.astimezone(zone).isoformat(),
        truncated=len(ordered) > max_results,
    )
