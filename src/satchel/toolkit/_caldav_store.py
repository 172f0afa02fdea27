"""The CalDAV store: events and tasks on any CalDAV server (Fastmail, Nextcloud, iCloud,
Radicale...), through the ``caldav`` library. Its errors are mapped here, at the
boundary, to :class:`~satchel.ToolFailed`."""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable
from datetime import datetime
from typing import Any, TypeVar, cast

import icalendar

from satchel._errors import SatchelUsageError, ToolFailed
from satchel._redact import redact_urls, strip_userinfo
from satchel.toolkit._ical_store import Kind, components, expand, wrap

__all__ = ["CalDAVCalendarStore"]

logger = logging.getLogger("satchel.toolkit.caldav")

T = TypeVar("T")


class CalDAVCalendarStore:
    """Events and tasks on a CalDAV server.

    Args:
        url: The server's or a calendar's URL.
        username: The account (from the config or the environment, never a tool).
        password: Its password or app password.
        calendar: The name of the calendar holding events (default: the first one, or
            the calendar ``url`` points at); created when missing.
        tasks: The name of the calendar holding tasks (default: ``calendar``).

    Example:
        >>> store = CalDAVCalendarStore("https://caldav.fastmail.com/", username="me",
        ...                             password=os.environ["CALDAV_PASSWORD"])
    """

    def __init__(
        self,
        url: str,
        *,
        username: str | None = None,
        password: str | None = None,
        calendar: str | None = None,
        tasks: str | None = None,
    ) -> None:
        self.url = url
        self.safe_url = strip_userinfo(url)
        """``url`` without any credentials in it: what messages and logs show."""
        self._username = username
        self._password = password
        self._calendar_name = calendar
        self._tasks_name = tasks
        self._client: Any = None
        self._calendars: dict[str, Any] = {}
        self._lock = threading.RLock()

    # -- connection ----------------------------------------------------------------

    def _guard(self, what: str, action: Callable[[], T]) -> T:
        from caldav.lib import error as dav_error  # pyright: ignore[reportMissingTypeStubs]

        try:
            return action()
        except dav_error.NotFoundError:
            raise
        except (dav_error.DAVError, OSError, ConnectionError) as exc:
            raise ToolFailed(
                f"The calendar server at {self.safe_url} failed to {what}: {redact_urls(str(exc))}",
                details={"server": self.safe_url},
            ) from exc
        except Exception as exc:  # niquests' errors have no common base we can import
            if type(exc).__module__.startswith(("niquests", "urllib3", "requests")):
                raise ToolFailed(
                    f"The calendar server at {self.safe_url} cannot be reached: "
                    f"{redact_urls(str(exc))}",
                    details={"server": self.safe_url},
                ) from exc
            raise

    def _calendar(self, kind: Kind, task_list: str | None = None) -> Any:
        name = task_list or (self._tasks_name if kind == "todo" else None) or self._calendar_name
        key = name or ""
        with self._lock:
            if key in self._calendars:
                return self._calendars[key]
            calendar = self._guard("open the calendar", lambda: self._open(name))
            self._calendars[key] = calendar
            return calendar

    def _open(self, name: str | None) -> Any:
        import caldav  # pyright: ignore[reportMissingTypeStubs]

        if self._client is None:
            client_class: Any = caldav.DAVClient
            self._client = client_class(
                url=self.url, username=self._username, password=self._password
            )
        client: Any = self._client
        principal: Any = client.principal()
        calendars: list[Any] = list(principal.calendars())
        if name is None:
            direct = [c for c in calendars if str(c.url).rstrip("/") == self.url.rstrip("/")]
            if direct or calendars:
                return (direct or calendars)[0]
            name = "satchel"
        for calendar in calendars:
            if calendar.get_display_name() == name or str(calendar.url).rstrip("/").endswith(
                "/" + name
            ):
                return calendar
        logger.info("creating the calendar %r on %s", name, self.safe_url)
        made: Any = principal.make_calendar(
            name=name, supported_calendar_component_set=["VEVENT", "VTODO"]
        )
        return made

    # -- the store -----------------------------------------------------------------

    def _object(self, kind: Kind, uid: str) -> Any | None:
        from caldav.lib import error as dav_error  # pyright: ignore[reportMissingTypeStubs]

        calendars = [self._calendar(kind)]
        if kind == "todo":
            calendars += [self._calendar(kind, n) for n in self.task_lists()]
        for calendar in calendars:
            try:
                found: Any = self._guard(
                    "look up an item",
                    lambda c=calendar: (
                        c.get_event_by_uid(uid) if kind == "event" else c.get_todo_by_uid(uid)
                    ),
                )
            except dav_error.NotFoundError:
                continue
            return found
        return None

    def save(
        self,
        kind: Kind,
        component: icalendar.Component,
        task_list: str | None = None,
        *,
        new: bool = False,
    ) -> None:
        """Create or replace the component on the server (``new``: it has a fresh
        ``UID``, so no lookup is needed)."""
        data = wrap(component).to_ical().decode()
        existing = None if new else self._object(kind, str(component["UID"]))

        def write() -> None:
            if existing is not None:
                existing.data = data
                existing.save()
            elif kind == "event":
                self._calendar(kind, task_list).add_event(data)
            else:
                self._calendar(kind, task_list).add_todo(data)

        self._guard("save an item", write)

    def get(self, kind: Kind, uid: str) -> icalendar.Component | None:
        """The component with ``uid``, or ``None``."""
        found = self._object(kind, uid)
        if found is None:
            return None
        items = components(cast(icalendar.Calendar, found.icalendar_instance), kind)
        return items[0] if items else None

    def delete(self, kind: Kind, uid: str) -> bool:
        """Delete the component on the server."""
        found = self._object(kind, uid)
        if found is None:
            return False
        self._guard("delete an item", found.delete)
        return True

    def items(self, kind: Kind, task_list: str | None = None) -> list[icalendar.Component]:
        """Every event, or every task (completed ones too)."""
        calendar = self._calendar(kind, task_list)
        if kind == "event":
            objects: list[Any] = self._guard("list events", calendar.get_events)
        else:
            objects = self._guard("list tasks", lambda: calendar.get_todos(include_completed=True))
        found: list[icalendar.Component] = []
        for obj in objects:
            found += components(cast(icalendar.Calendar, obj.icalendar_instance), kind)[:1]
        return found

    def between(self, start: datetime, end: datetime) -> list[icalendar.Component]:
        """Event occurrences overlapping ``[start, end)``: the server finds the events
        (a CalDAV time-range query), the client expands repeats as the local store
        does."""
        calendar = self._calendar("event")
        objects: list[Any] = self._guard(
            "search events",
            lambda: calendar.search(start=start, end=end, event=True, expand=False),
        )
        found: list[icalendar.Component] = []
        for obj in objects:
            found += components(cast(icalendar.Calendar, obj.icalendar_instance), "event")
        return expand(found, start, end)

    def task_lists(self) -> list[str]:
        """The calendars that hold tasks."""
        self._calendar("todo")
        principal: Any = self._guard("list calendars", lambda: self._client.principal())
        names: list[str] = []
        for calendar in self._guard("list calendars", lambda: list(principal.calendars())):
            supported: list[str] = self._guard("read a calendar", calendar.get_supported_components)
            if "VTODO" in supported:
                names.append(str(calendar.get_display_name() or calendar.url))
        return names

    def close(self) -> None:
        """Close the HTTP session."""
        with self._lock:
            if self._client is not None:
                client, self._client = self._client, None
                self._calendars.clear()
                with contextlib.suppress(AttributeError):
                    client.close()


def check_url(url: str) -> str:
    """``url`` when it is an http(s) URL.

    Raises:
        SatchelUsageError: It is not.
    """
    if not url.startswith(("http://", "https://")):
        raise SatchelUsageError(f"The CalDAV URL {url!r} must start with http:// or https://.")
    return url
