"""Where calendar events and tasks live: a :class:`CalendarStore` protocol of iCalendar
(RFC 5545) components, and the local store (a folder of ``.ics`` files, one per item,
the ``vdir`` layout that khal and vdirsyncer use).

The local store keeps what it parsed, keyed by each file's modification time and size,
so listing a large calendar parses only the files that changed; recurrences are
expanded by ``recurring-ical-events``.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any, Literal, Protocol, cast

import icalendar
import recurring_ical_events  # pyright: ignore[reportMissingTypeStubs]

from satchel._errors import ToolFailed
from satchel.toolkit._ical_index import FolderIndex, reaches, span_of

__all__ = [
    "DEFAULT_TASK_LIST",
    "CalendarStore",
    "Kind",
    "LocalCalendarStore",
    "append",
    "components",
    "drop",
    "expand",
    "moment",
    "put",
    "texts",
    "wrap",
]

logger = logging.getLogger("satchel.toolkit.calendar")
_FIRST = datetime(2, 1, 1, tzinfo=UTC)  # windows are cut to these to leave room for the
_LAST = datetime(9998, 12, 31, tzinfo=UTC)  # steps the expansion takes past their ends

Kind = Literal["event", "todo"]
"""A calendar event (``VEVENT``) or a task (``VTODO``)."""

DEFAULT_TASK_LIST = "tasks"
"""The name of the local store's task list when there is no other."""

_PRODID = "-//satchel//productivity toolkit//EN"
_SAFE = re.compile(r"[^A-Za-z0-9_.@-]")


class CalendarStore(Protocol):
    """Events and tasks as iCalendar components, found by their ``UID``.

    Implementations are synchronous (the tools call them in a worker thread) and map
    their own failures to :class:`~satchel.ToolFailed`.
    """

    def save(
        self,
        kind: Kind,
        component: icalendar.Component,
        task_list: str | None = None,
        *,
        new: bool = False,
    ) -> None:
        """Create the component, or replace the one with its ``UID`` (``new``: the
        ``UID`` was just made, so there is nothing to replace)."""
        ...

    def get(self, kind: Kind, uid: str) -> icalendar.Component | None:
        """The component with ``uid`` (in any task list), or ``None``."""
        ...

    def delete(self, kind: Kind, uid: str) -> bool:
        """Delete the component with ``uid``; ``False`` when there was none."""
        ...

    def items(self, kind: Kind, task_list: str | None = None) -> list[icalendar.Component]:
        """Every stored component of ``kind`` (masters, not expanded occurrences)."""
        ...

    def between(self, start: datetime, end: datetime) -> list[icalendar.Component]:
        """The event occurrences overlapping ``[start, end)``, recurrences expanded."""
        ...

    def task_lists(self) -> list[str]:
        """The names of the task lists."""
        ...

    def close(self) -> None:
        """Release connections."""
        ...


# icalendar's ``add`` and property values are loosely typed; these four helpers are the
# one place that touches them.


def put(component: icalendar.Component, name: str, value: object) -> None:
    """Set the property ``name`` to ``value``, replacing what it held."""
    drop(component, name)
    append(component, name, value)


def append(component: icalendar.Component, name: str, value: object) -> None:
    """Add one more value of ``name`` (e.g. an ``ATTENDEE``)."""
    component.add(name, value)  # pyright: ignore[reportUnknownMemberType]


def drop(component: icalendar.Component, name: str) -> None:
    """Remove every value of ``name``."""
    if name.upper() in component:
        del component[name.upper()]


def moment(component: icalendar.Component, name: str) -> date | datetime | timedelta | None:
    """The date, date-time or duration that ``name`` holds, or ``None``."""
    prop: Any = component.get(name)
    if prop is None:
        return None
    value: Any = getattr(prop, "dt", None)
    return value if isinstance(value, (date, timedelta)) else None


def texts(component: icalendar.Component, name: str) -> list[str]:
    """Every value of ``name`` as text."""
    raw: Any = component.get(name)
    if raw is None:
        return []
    values: list[Any] = raw if isinstance(raw, list) else [raw]  # pyright: ignore[reportUnknownVariableType]
    return [str(v) for v in values]


def wrap(component: icalendar.Component) -> icalendar.Calendar:
    """``component`` in a ``VCALENDAR`` with the time zones it refers to."""
    calendar = icalendar.Calendar()
    put(calendar, "prodid", _PRODID)
    put(calendar, "version", "2.0")
    calendar.add_component(component)
    with contextlib.suppress(ValueError, KeyError):  # a zone icalendar cannot describe
        calendar.add_missing_timezones()
    return calendar


def components(calendar: icalendar.Calendar, kind: Kind) -> list[icalendar.Component]:
    """The ``VEVENT``\\ s or ``VTODO``\\ s in ``calendar``."""
    name = "VEVENT" if kind == "event" else "VTODO"
    found: list[icalendar.Component] = calendar.walk(name)  # pyright: ignore[reportUnknownMemberType]
    return found


def expand(
    items: Sequence[icalendar.Component], start: datetime, end: datetime
) -> list[icalendar.Component]:
    """The occurrences of ``items`` (events) overlapping ``[start, end)``.

    Events that cannot reach the window (a single event wholly outside it, a repeating
    one that begins after it) are dropped before ``recurring-ical-events`` expands the
    rest, with a day of slack for all-day and floating times; it decides the exact
    overlap."""
    near = [item for item in items if _may_overlap(item, start, end)]
    if _OUT_OF_RANGE:  # skip the events already known to overflow, without a word
        near = [item for item in near if _range_key(item) not in _OUT_OF_RANGE]
    start, end = max(start, _FIRST), min(end, _LAST)  # the expansion steps past the window
    try:
        return _occurrences(near, start, end)
    except OverflowError:  # an event or window at year 1 or 9999: expand one by one
        found: list[icalendar.Component] = []
        for item in near:
            try:
                found += _occurrences([item], start, end)
            except OverflowError:
                # Warned once: the next listings leave it out before expanding together
                # (every listing expanded one by one and warned again before).
                _OUT_OF_RANGE.add(_range_key(item))
                logger.warning("skipped event %s: its dates run out of range", item.get("UID"))
        return found


_OUT_OF_RANGE: set[tuple[str, ...]] = set()
"""Events (by :func:`_range_key`) whose dates overflow the expansion, in this process."""


def _range_key(item: icalendar.Component) -> tuple[str, ...]:
    """An event's identity and dates: an edit that moves it back into range changes it."""
    return tuple(str(item.get(name, "")) for name in ("UID", "DTSTART", "DTEND", "RRULE"))


def _occurrences(
    items: list[icalendar.Component], start: datetime, end: datetime
) -> list[icalendar.Component]:
    calendar = icalendar.Calendar()
    for item in items:
        calendar.add_component(item)
    query: Any = recurring_ical_events.of(  # pyright: ignore[reportUnknownMemberType]
        calendar, keep_recurrence_attributes=True
    )
    return cast(list[icalendar.Component], list(query.between(start, end)))


def _may_overlap(item: icalendar.Component, start: datetime, end: datetime) -> bool:
    return reaches(span_of(item, (0, 0)), start, end)


@dataclass(frozen=True, slots=True)
class _Parsed:
    stamp: tuple[int, int]
    component: icalendar.Component


class LocalCalendarStore:
    """Events and tasks in a folder: ``events/<uid>.ics`` and ``tasks/<list>/<uid>.ics``.

    Args:
        root: The folder (created on first write), e.g. ``<data dir>/calendar``.

    Example:
        >>> store = LocalCalendarStore(Path("~/.local/share/satchel/calendar").expanduser())
        >>> store.task_lists()
        ['tasks']
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        self._cache: dict[Path, _Parsed] = {}
        self._indexes: dict[Path, FolderIndex] = {}
        self._index_lock = threading.Lock()
        self._lock = threading.Lock()

    def _folder(self, kind: Kind, task_list: str | None = None) -> Path:
        if kind == "event":
            return self.root / "events"
        return self.root / "tasks" / _SAFE.sub("_", task_list or DEFAULT_TASK_LIST)

    def _folders(self, kind: Kind) -> list[Path]:
        if kind == "event":
            return [self._folder("event")]
        base = self.root / "tasks"
        found = sorted(p for p in base.iterdir() if p.is_dir()) if base.is_dir() else []
        return found or [self._folder("todo")]

    @staticmethod
    def _file_name(uid: str) -> str:
        safe = _SAFE.sub("_", uid)
        if safe != uid or len(safe) > 120:  # keep distinct uids in distinct files
            safe = safe[:80] + "-" + hashlib.sha256(uid.encode()).hexdigest()[:16]
        return safe + ".ics"

    def save(
        self,
        kind: Kind,
        component: icalendar.Component,
        task_list: str | None = None,
        *,
        new: bool = False,
    ) -> None:
        """Write the component's file atomically (replacing its earlier version)."""
        uid = str(component["UID"])
        existing = None if new else self._find(kind, uid)
        folder = existing.parent if existing is not None and task_list is None else None
        folder = folder or self._folder(kind, task_list)
        path = folder / self._file_name(uid)
        data = wrap(component).to_ical()
        try:
            folder.mkdir(parents=True, exist_ok=True)
            temporary = path.with_suffix(".tmp")
            temporary.write_bytes(data)
            os.replace(temporary, path)
            if existing is not None and existing != path:
                existing.unlink(missing_ok=True)
        except OSError as exc:
            raise ToolFailed(f"Cannot write the calendar file {path}: {exc}") from exc

    def _find(self, kind: Kind, uid: str) -> Path | None:
        name = self._file_name(uid)
        for folder in self._folders(kind):
            path = folder / name
            if path.exists():
                return path
        return None

    def get(self, kind: Kind, uid: str) -> icalendar.Component | None:
        """The component with ``uid``, or ``None``."""
        path = self._find(kind, uid)
        return None if path is None else self._load(path, kind)

    def delete(self, kind: Kind, uid: str) -> bool:
        """Remove the component's file."""
        path = self._find(kind, uid)
        if path is None:
            return False
        try:
            path.unlink()
        except FileNotFoundError:
            return False
        except OSError as exc:
            raise ToolFailed(f"Cannot delete the calendar file {path}: {exc}") from exc
        return True

    def items(self, kind: Kind, task_list: str | None = None) -> list[icalendar.Component]:
        """Every component of ``kind`` (in ``task_list`` when given)."""
        folders = [self._folder(kind, task_list)] if task_list is not None else self._folders(kind)
        found: list[icalendar.Component] = []
        for folder in folders:
            if not folder.is_dir():
                continue
            with os.scandir(folder) as entries:
                paths = [Path(e.path) for e in entries if e.name.endswith(".ics")]
            for path in sorted(paths):
                component = self._load(path, kind)
                if component is not None:
                    found.append(component)
        return found

    def between(self, start: datetime, end: datetime) -> list[icalendar.Component]:
        """Event occurrences overlapping ``[start, end)``; files the index shows cannot
        reach the window are not parsed."""
        folder = self._folder("event")
        if not folder.is_dir():
            return []
        with self._index_lock:  # one listing at a time updates the index
            return expand(self._candidates(folder, start, end), start, end)

    def _candidates(
        self, folder: Path, start: datetime, end: datetime
    ) -> list[icalendar.Component]:
        index = self._indexes.setdefault(folder, FolderIndex(folder))
        index.load()
        candidates: list[icalendar.Component] = []
        seen: set[str] = set()
        changed = False
        with os.scandir(folder) as entries:
            found = [(e.name, e.path, e.stat()) for e in entries if e.name.endswith(".ics")]
        for name, path_text, status in sorted(found):
            path, stamp = Path(path_text), (status.st_mtime_ns, status.st_size)
            seen.add(name)
            span = index.spans.get(name)
            if span is None or span.stamp != stamp:
                component = self._load(path, "event")
                if component is None:
                    continue
                index.spans[name], changed = span_of(component, stamp), True
                span = index.spans[name]
            if reaches(span, start, end):
                component = self._load(path, "event")
                if component is not None:
                    candidates.append(component)
        for name in set(index.spans) - seen:
            del index.spans[name]
            changed = True
        if changed:
            index.save()
        return candidates

    def task_lists(self) -> list[str]:
        """The folder names under ``tasks/`` (``tasks`` when there is none)."""
        return [p.name for p in self._folders("todo")]

    def _load(self, path: Path, kind: Kind) -> icalendar.Component | None:
        try:
            status = path.stat()
        except FileNotFoundError:
            return None
        stamp = (status.st_mtime_ns, status.st_size)
        with self._lock:
            cached = self._cache.get(path)
        if cached is not None and cached.stamp == stamp:
            return cached.component
        try:
            calendar = icalendar.Calendar.from_ical(path.read_bytes())
        except FileNotFoundError:  # deleted since it was listed
            return None
        except (OSError, ValueError) as exc:
            # one broken file (written by another program) must not hide the others
            logger.warning("skipping the unreadable calendar file %s: %s", path, exc)
            return None
        found = components(calendar, kind)
        if not found:
            return None
        with self._lock:
            self._cache[path] = _Parsed(stamp, found[0])
        return found[0]

    def close(self) -> None:
        """Forget the parsed files."""
        with self._lock:
            self._cache.clear()
