"""Human dates for search filters: ``yesterday``, ``2026-11-01``, ISO 8601 times.

A date without a time of day stands for the whole day: as ``start_time`` it means the
day's first moment, as ``end_time`` its last. Likewise a month or a year alone. Times
are read in UTC unless they carry their own offset.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol, cast

import anyio.to_thread

from satchel._errors import ToolRetry

__all__ = ["TimeParser"]

_MAX_TEXT = 100
_EXAMPLES = "2026-11-01, 2026-11-01T14:30:00Z, yesterday or '3 days ago'"


class _DateData(Protocol):
    date_obj: datetime | None
    period: str | None


class TimeParser:
    """Turn a person's or a model's date text into a timezone-aware UTC datetime.

    Backed by ``dateparser``, restricted to ``languages`` (checking every language
    makes an unparseable text take seconds). The parser is built on first use and
    shared; parsing runs in a worker thread.

    Args:
        languages: The languages whose words are understood (ISO 639-1 codes).

    Example:
        >>> parser = TimeParser()
        >>> parser.parse_sync("2026-11-01", end=True, field="end_time")
        datetime.datetime(2026, 11, 1, 23, 59, 59, 999999, tzinfo=datetime.timezone.utc)
    """

    def __init__(self, languages: Sequence[str] = ("en",)) -> None:
        self.languages = tuple(languages)
        self._parser: Any = None
        self._lock = threading.Lock()

    async def parse(self, text: str, *, end: bool, field: str) -> datetime:
        """:meth:`parse_sync` in a worker thread."""
        return await anyio.to_thread.run_sync(lambda: self.parse_sync(text, end=end, field=field))

    def parse_sync(self, text: str, *, end: bool, field: str) -> datetime:
        """Parse ``text``; a bare day, month or year covers all of it (its first moment
        for a start, its last for an end, ``end=True``).

        Raises:
            ToolRetry: The text is not a date or time; the message names ``field`` and
                shows forms that work.
        """
        cleaned = text.strip()
        data = self._data(cleaned) if 0 < len(cleaned) <= _MAX_TEXT else None
        moment = data.date_obj if data is not None else None
        if moment is not None and data is not None:
            try:
                moment = moment.astimezone(UTC) if moment.tzinfo else moment.replace(tzinfo=UTC)
                return _bound(moment, data.period or "time", end=end)
            except (ValueError, OverflowError):  # at the edge of what datetime holds
                pass
        raise ToolRetry(
            f"{field} {text[:_MAX_TEXT]!r} is not a date or time I can read. Use a form "
            f"such as {_EXAMPLES}.",
            details={"field": field, "value": text[:_MAX_TEXT]},
        )

    def _data(self, text: str) -> _DateData | None:
        with self._lock:
            if self._parser is None:
                from dateparser.date import DateDataParser

                self._parser = DateDataParser(
                    languages=list(self.languages),
                    settings={
                        "RETURN_AS_TIMEZONE_AWARE": True,
                        "TIMEZONE": "UTC",
                        "TO_TIMEZONE": "UTC",
                        "PREFER_DATES_FROM": "past",
                        "RETURN_TIME_AS_PERIOD": True,
                    },
                )
            parser = self._parser
        try:
            return cast(_DateData, parser.get_date_data(text))
        except (ValueError, OverflowError):  # dateparser's own parse failures
            return None


def _bound(moment: datetime, period: str, *, end: bool) -> datetime:
    """The first (or last, ``end``) moment of the ``period`` that ``moment`` falls in."""
    if period == "time":
        return moment
    day = moment.replace(hour=0, minute=0, second=0, microsecond=0)
    if period == "year":
        start = day.replace(month=1, day=1)
        following = start.replace(year=start.year + 1)
    elif period == "month":
        start = day.replace(day=1)
        following = (start + timedelta(days=32)).replace(day=1)
    else:  # "day", and "week" (dateparser gives the day a week ago)
        start, following = day, day + timedelta(days=1)
    return following - timedelta(microseconds=1) if end else start
