"""A sidecar index of a folder of ``.ics`` events: for each file its stamp (modification
time and size), its first start, its end and whether it repeats.

Parsing an iCalendar file costs about a millisecond, so a fresh process listing one
week of a 5,000-event folder would spend seconds parsing files that cannot reach that
week. With the index it parses only the files that may. It is a cache and nothing
more: every entry is checked against the file's current stamp, a changed or new file
is parsed and its entry replaced, and a missing or unreadable index is rebuilt.
Hand-written because it is a few lines of JSON over ``os.scandir``.
"""

from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass
from datetime import date, datetime, timedelta, tzinfo
from pathlib import Path
from typing import Any

import icalendar

__all__ = ["FolderIndex", "Span", "reaches", "span_of"]

logger = logging.getLogger("satchel.toolkit.calendar")

_NAME = ".satchel-index.json"
_VERSION = 1
_SLACK = timedelta(days=1, hours=14)  # the widest zone offset, plus a day


@dataclass(frozen=True, slots=True)
class Span:
    """What the index keeps of one event file."""

    stamp: tuple[int, int]
    start: str | None
    end: str | None
    repeats: bool


def _text(value: Any) -> str | None:
    if isinstance(value, datetime | date):
        return value.isoformat()
    return None


def _value(text: str | None) -> date | datetime | None:
    if text is None:
        return None
    try:
        return date.fromisoformat(text) if len(text) == 10 else datetime.fromisoformat(text)
    except ValueError:
        return None


def span_of(event: icalendar.Component, stamp: tuple[int, int]) -> Span:
    """The index entry of ``event``, read from a file with ``stamp``."""
    start_prop: Any = event.get("DTSTART")
    end_prop: Any = event.get("DTEND")
    start = getattr(start_prop, "dt", None)
    end = getattr(end_prop, "dt", None)
    if end is None and start is not None:
        duration: Any = getattr(event.get("DURATION"), "dt", None)
        if isinstance(duration, timedelta):
            end = start + duration
    return Span(
        stamp=stamp,
        start=_text(start),
        end=_text(end),
        repeats="RRULE" in event or "RDATE" in event,
    )


def _instant(value: date | datetime | None, zone: tzinfo | None) -> datetime | None:
    if isinstance(value, datetime):
        return value if value.tzinfo is not None else value.replace(tzinfo=zone)
    if isinstance(value, date):
        return datetime(value.year, value.month, value.day, tzinfo=zone)
    return None


def reaches(span: Span, start: datetime, end: datetime) -> bool:
    """Whether the event may have an occurrence in ``[start, end)`` (with a day of
    slack for all-day and floating times; the exact test is made after parsing)."""
    first = _instant(_value(span.start), start.tzinfo)
    if first is None:
        return True
    try:
        if first - _SLACK >= end:
            return False  # it begins after the window, and so does every repeat
        if span.repeats:
            return True
        last = _instant(_value(span.end), start.tzinfo) or first + timedelta(days=1)
        return last + _SLACK > start
    except OverflowError:  # an event in year 1 or 9999: the exact test decides
        return True


class FolderIndex:
    """The index of one folder, loaded and saved as ``.satchel-index.json`` in it."""

    def __init__(self, folder: Path) -> None:
        self.path = folder / _NAME
        self.spans: dict[str, Span] = {}
        self._stamp: tuple[int, int] | None = None

    def load(self) -> None:
        """Read the index file unless it is unchanged since the last read."""
        try:
            status = self.path.stat()
        except FileNotFoundError:
            return
        stamp = (status.st_mtime_ns, status.st_size)
        if stamp == self._stamp:
            return
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            if data.get("version") != _VERSION:
                return
            self.spans = {
                name: Span((int(v[0]), int(v[1])), v[2], v[3], bool(v[4]))
                for name, v in data["files"].items()
            }
            self._stamp = stamp
        except (OSError, ValueError, KeyError, TypeError, IndexError) as exc:
            logger.debug("rebuilding the calendar index %s: %s", self.path, exc)
            self.spans = {}

    def save(self) -> None:
        """Write the index atomically; a failure only costs the next process time."""
        files = {n: [*s.stamp, s.start, s.end, s.repeats] for n, s in self.spans.items()}
        temporary = self.path.with_suffix(".tmp")
        try:
            temporary.write_text(json.dumps({"version": _VERSION, "files": files}), "utf-8")
            os.replace(temporary, self.path)
            status = self.path.stat()
            self._stamp = (status.st_mtime_ns, status.st_size)
        except OSError as exc:
            logger.warning("cannot write the calendar index %s: %s", self.path, exc)
