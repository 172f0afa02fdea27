"""The calendar and task records the tools return, and the conversions between them
and iCalendar components; shared by the calendar and the task tools."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, tzinfo
from typing import Any, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import icalendar
from pydantic import BaseModel, Field

from satchel._errors import ToolRetry
from satchel.toolkit._config import ToolkitConfig
from satchel.toolkit._ical_store import CalendarStore, LocalCalendarStore, moment, texts

__all__ = [
    "CalendarEvent",
    "TaskItem",
    "event_record",
    "open_calendar_store",
    "show",
    "task_record",
    "text_of",
    "zone_of",
]

MAX_TITLE = 500
MAX_TEXT = 20_000


class CalendarEvent(BaseModel):
    """One event (or one occurrence of a repeating event)."""

    event_id: str = Field(
        description="Pass this to update_calendar_event or delete_calendar_event."
    )
    title: str
    start: str = Field(description="ISO 8601 in the shown zone; a date alone for all-day.")
    end: str | None = None
    all_day: bool
    description: str = ""
    location: str | None = None
    attendees: list[str] = Field(default_factory=list[str])
    recurrence: str | None = Field(default=None, description="The RRULE, when it repeats.")
    timezone: str


class TaskItem(BaseModel):
    """One task (an iCalendar VTODO)."""

    task_id: str = Field(description="Pass this to update_task, mark_task_complete, delete_task.")
    title: str
    notes: str = ""
    due: str | None = Field(default=None, description="ISO 8601; a date alone for a day.")
    status: Literal["needs_action", "completed"]
    completed: str | None = None
    task_list: str | None = None
    estimate_minutes: int | None = Field(
        default=None, description="How long it takes, in minutes (ESTIMATED-DURATION)."
    )


def open_calendar_store(config: ToolkitConfig) -> CalendarStore:
    """The CalDAV store when ``config.calendar_url`` is set, else the local one in
    ``<data dir>/calendar``."""
    if config.calendar_url:
        from satchel.toolkit._caldav_store import CalDAVCalendarStore, check_url

        password = config.calendar_password
        return CalDAVCalendarStore(
            check_url(config.calendar_url),
            username=config.calendar_username,
            password=password.get_secret_value() if password is not None else None,
            calendar=config.calendar_name,
            tasks=config.tasks_name,
        )
    return LocalCalendarStore(config.data_dir / "calendar")


def zone_of(name: str | None, config: ToolkitConfig, *, field: str = "timezone") -> ZoneInfo:
    """The zone a tool argument names, else the user's.

    Raises:
        ToolRetry: ``name`` is not an IANA zone.
    """
    if name is None or not name.strip():
        return config.zone()
    try:
        return ZoneInfo(name.strip())
    except (ZoneInfoNotFoundError, ValueError):
        raise ToolRetry(
            f"{field} {name[:60]!r} is not an IANA time zone; use a name such as "
            "'Europe/Paris', 'America/New_York' or 'UTC'.",
            details={"field": field, "value": name[:60]},
        ) from None


def show(value: date | datetime, zone: tzinfo) -> str:
    """ISO text of a date, or of a datetime in ``zone`` (a floating time as it is)."""
    if isinstance(value, datetime):
        return value.astimezone(zone).isoformat() if value.tzinfo else value.isoformat()
    return value.isoformat()


def text_of(component: icalendar.Component, name: str) -> str | None:
    """A text property as ``str``, or ``None``."""
    value = component.get(name)
    return None if value is None else str(value)


def _when(component: icalendar.Component, name: str) -> date | datetime | None:
    value = moment(component, name)
    return value if isinstance(value, date) else None


def event_record(event: icalendar.Component, zone: ZoneInfo) -> CalendarEvent:
    """The tools' view of a ``VEVENT``."""
    start = _when(event, "DTSTART")
    end = _when(event, "DTEND")
    if start is None:
        start = datetime.fromtimestamp(0, UTC)
    all_day = not isinstance(start, datetime)
    if end is None:
        duration = moment(event, "DURATION")
        if isinstance(duration, timedelta):
            end = start + duration
        elif all_day:
            end = start + timedelta(days=1)
    attendees = texts(event, "ATTENDEE")
    rule: Any = event.get("RRULE")
    return CalendarEvent(
        event_id=str(event.get("UID", "")),
        title=text_of(event, "SUMMARY") or "",
        start=show(start, zone),
        end=None if end is None else show(end, zone),
        all_day=all_day,
        description=text_of(event, "DESCRIPTION") or "",
        location=text_of(event, "LOCATION"),
        attendees=[a.removeprefix("mailto:").removeprefix("MAILTO:") for a in attendees],
        recurrence=None if rule is None else rule.to_ical().decode(),
        timezone=zone.key,
    )


def task_record(todo: icalendar.Component, zone: ZoneInfo, task_list: str | None) -> TaskItem:
    """The tools' view of a ``VTODO``."""
    due = _when(todo, "DUE")
    completed = _when(todo, "COMPLETED")
    status = text_of(todo, "STATUS") or "NEEDS-ACTION"
    return TaskItem(
        task_id=str(todo.get("UID", "")),
        title=text_of(todo, "SUMMARY") or "",
        notes=text_of(todo, "DESCRIPTION") or "",
        due=None if due is None else show(due, zone),
        status="completed" if status.upper() == "COMPLETED" else "needs_action",
        completed=None if completed is None else show(completed, zone),
        task_list=task_list,
        estimate_minutes=estimate_of(todo),
    )


ESTIMATE = "ESTIMATED-DURATION"
"""The property that holds a task's estimate (from the iCalendar task extensions
draft; clients that do not know it keep it as it is)."""


def estimate_of(todo: icalendar.Component) -> int | None:
    """A task's estimate in whole minutes, or ``None``."""
    raw: Any = todo.get(ESTIMATE)
    if raw is None:
        return None
    value: Any = getattr(raw, "dt", None)
    if not isinstance(value, timedelta):  # read back from a file: the text of a duration
        try:
            value = icalendar.vDuration.from_ical(str(raw))  # pyright: ignore[reportUnknownMemberType]
        except ValueError:
            return None
    if not isinstance(value, timedelta) or value <= timedelta():
        return None
    return max(1, round(value / timedelta(minutes=1)))
