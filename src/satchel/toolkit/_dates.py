"""Dates people actually say, read in the user's zone: ``tomorrow at 3pm``, ``in 2
hours``, ``next Tuesday morning``, ``this weekend``, ``end of day``.

Why a hand-written layer in front of ``dateparser``: dateparser alone (what AgenticPal
uses) cannot tell a phrase with a time from one without (so ``in 2 hours`` would become
an all-day event), does not know ``end of day``, ``this weekend`` or ``morning``, and
reads ``at 3pm`` as today even when today's 3pm has passed. This module reads the common
shape of a spoken date, *a day* and/or *a time of day*, itself; a day it does not know
(``December 3rd``, ``3 Dec 2026``) goes to dateparser, and the time is then put back.

Rules (documented in docs/toolkit.md):

* every result is aware, in the user's zone; ISO text with an offset keeps its instant;
* a phrase with no time of day is all-day (``tomorrow``, ``in 3 days``, ``Friday``);
  one with a time, or a relative amount under a day (``in 2 hours``), is timed;
* ``prefer="future"`` (scheduling) picks the next matching day or time,
  ``prefer="past"`` (searching) the last one; ``next``/``last`` always mean what they say;
* a bare hour from 1 to 6 (``at 3``, ``4:30``) is in the afternoon; ``03:00`` and
  ``3am`` are not; other bare hours are read on a 24-hour clock (``at 9``, ``at 20``);
* ``morning`` 09:00, ``noon`` 12:00, ``afternoon`` 14:00, ``end of day`` 17:00,
  ``evening`` 18:00, ``tonight``/``night`` 20:00; ``this weekend`` is Saturday and
  Sunday (all-day, with an end).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from typing import Literal, Protocol, cast
from zoneinfo import ZoneInfo

from satchel._errors import ToolRetry
from satchel.toolkit._durations import amounts, months_in, normalise

__all__ = ["DATE_EXAMPLES", "DateReader", "Prefer", "When"]

Prefer = Literal["future", "past"]
"""Which way an ambiguous day or time leans: the next one (scheduling) or the last one
(searching)."""

_MAX_TEXT = 120
DATE_EXAMPLES = (
    "'tomorrow at 3pm', 'in 2 hours', 'next Tuesday morning', 'Friday', 'this weekend', "
    "'tomorrow end of day', 'December 3 at 10:30', '2026-12-03T10:30'"
)

_WEEKDAYS = {
    "monday": 0,
    "mon": 0,
    "tuesday": 1,
    "tue": 1,
    "tues": 1,
    "wednesday": 2,
    "wed": 2,
    "thursday": 3,
    "thu": 3,
    "thur": 3,
    "thurs": 3,
    "friday": 4,
    "fri": 4,
    "saturday": 5,
    "sat": 5,
    "sunday": 6,
    "sun": 6,
}
_WEEKDAY_RE = "|".join(sorted(_WEEKDAYS, key=len, reverse=True))

_PARTS_OF_DAY = {
    "morning": time(9),
    "noon": time(12),
    "midday": time(12),
    "lunchtime": time(12),
    "lunch": time(12),
    "afternoon": time(14),
    "end of day": time(17),
    "end of the day": time(17),
    "end of business": time(17),
    "close of business": time(17),
    "eod": time(17),
    "cob": time(17),
    "evening": time(18),
    "tonight": time(20),
    "night": time(20),
    "midnight": time(0),
}
_PART_RE = "|".join(re.escape(p) for p in sorted(_PARTS_OF_DAY, key=len, reverse=True))

_CLOCK = re.compile(
    r"(?<![\w:.])(?P<at>at\s+|@\s*)?(?P<h>\d{1,2})(?:[:.h](?P<m>\d{2}))?"
    r"\s*(?P<ampm>a\.?m\.?|p\.?m\.?)?(?![\w:])"
)
_PART = re.compile(rf"(?:(?:in\s+the|this|at|by|the)\s+)?(?P<part>{_PART_RE})(?!\w)")


@dataclass(frozen=True, kw_only=True, slots=True)
class When:
    """A moment or a day, read from a person's words.

    Attributes:
        start: The moment (aware, in the user's zone); for an all-day value, the day's
            first moment.
        all_day: The words named a day (or days), not a time of day.
        end: The end of a span the words named (``this weekend``: the Monday after);
            ``None`` for a single moment or day.
    """

    start: datetime
    all_day: bool
    end: datetime | None = None

    @property
    def day(self) -> date:
        """The (first) day, in the user's zone."""
        return self.start.date()


class _DateData(Protocol):
    date_obj: datetime | None
    period: str | None


class DateReader:
    """Read dates, times and spans the way people say them, in one time zone.

    Args:
        zone: The user's time zone.
        now: The clock (for tests); default the current time.
        languages: The languages dateparser understands for days this reader does not
            know itself.
        precise: Relative times keep their seconds ("in 20 seconds" is 20 s from now;
            reminders); by default they are to the minute ("in 2 hours" has no seconds;
            calendar events).

    Example:
        >>> reader = DateReader(ZoneInfo("Europe/Paris"))
        >>> reader.when("tomorrow at 3pm").start.hour
        15
    """

    def __init__(
        self,
        zone: ZoneInfo,
        *,
        now: Callable[[], datetime] | None = None,
        languages: tuple[str, ...] = ("en",),
        precise: bool = False,
    ) -> None:
        self.zone = zone
        self._clock = now
        self.languages = languages
        self.precise = precise

    def now(self) -> datetime:
        """The current moment in the reader's zone."""
        moment = self._clock() if self._clock is not None else datetime.now(self.zone)
        return moment.astimezone(self.zone)

    # -- the entry point -----------------------------------------------------------

    def when(
        self,
        text: str,
        *,
        prefer: Prefer = "future",
        field: str = "start_time",
        on: date | None = None,
    ) -> When:
        """Read ``text`` as a moment or a day.

        Args:
            text: The words: ``tomorrow at 3pm``, ``in 2 hours``, ``2026-12-03``...
            prefer: Lean to the next (``future``) or the last (``past``) match.
            field: The argument's name, for the error message.
            on: The day a bare time of day (``4pm``) falls on, e.g. an event's start day
                when reading its end; default: the next (or last) such time.

        Raises:
            ToolRetry: The words are not a date or time; the message shows forms that
                work.
        """
        cleaned = normalise(text)
        result = None
        if 0 < len(cleaned) <= _MAX_TEXT:
            try:
                result = self._read(cleaned, prefer, on)
            except (ValueError, OverflowError):  # out of datetime's range
                result = None
        if result is None:
            raise ToolRetry(
                f"{field} {text[:_MAX_TEXT]!r} is not a date or time I can read. Use a "
                f"form such as {DATE_EXAMPLES}.",
                details={"field": field, "value": text[:_MAX_TEXT], "examples": DATE_EXAMPLES},
            )
        return result

    def _read(self, text: str, prefer: Prefer, on: date | None) -> When | None:
        now = self.now()
        iso = self._iso(text)
        if iso is not None:
            return iso
        relative = self._relative(text, now)
        if relative is not None:
            return relative
        if text == "now" or text == "right now":
            return When(start=now, all_day=False)
        span = self._span(text, now, prefer)
        if span is not None:
            return span
        clock, rest = _take_time(text)
        day = self._day(rest, now, prefer) if rest else None
        if rest and day is None:
            return None
        if clock is None:
            if day is None:
                return None
            return When(start=self._at(day, time()), all_day=True)
        if day is not None:
            return When(start=self._at(day, clock), all_day=False)
        if on is not None:
            return When(start=self._at(on, clock), all_day=False)
        moment = self._at(now.date(), clock)
        if prefer == "future" and moment < now:
            moment = self._at(now.date() + timedelta(days=1), clock)
        elif prefer == "past" and moment > now:
            moment = self._at(now.date() - timedelta(days=1), clock)
        return When(start=moment, all_day=False)

    def _at(self, day: date, clock: time) -> datetime:
        """``day`` at ``clock`` in the zone (a time skipped by a DST change moves on)."""
        naive = datetime.combine(day, clock)
        aware = naive.replace(tzinfo=self.zone)
        # round-trip through UTC settles a nonexistent wall time onto a real instant
        return aware.astimezone(ZoneInfo("UTC")).astimezone(self.zone)

    # -- the forms -----------------------------------------------------------------

    def _iso(self, text: str) -> When | None:
        candidate = text.upper().replace(" ", "T", 1) if re.match(r"^\d{4}-\d\d-\d\d", text) else ""
        if not candidate:
            return None
        if re.fullmatch(r"\d{4}-\d\d-\d\d", text):
            return When(start=self._at(date.fromisoformat(text), time()), all_day=True)
        try:
            moment = datetime.fromisoformat(candidate.replace("Z", "+00:00"))
        except ValueError:
            return None
        if moment.tzinfo is None:
            return When(start=self._at(moment.date(), moment.time()), all_day=False)
        return When(start=moment.astimezone(self.zone), all_day=False)

    def _relative(self, text: str, now: datetime) -> When | None:
        match = re.fullmatch(r"(?:in\s+(?P<a>.+?)|(?P<b>.+?)\s+from\s+now|(?P<c>.+?)\s+ago)", text)
        if match is None:
            return None
        amount_text = match.group("a") or match.group("b") or match.group("c")
        clock, rest = _take_time(amount_text)
        span = amounts(rest)
        if span is None:
            return None
        sign = -1 if match.group("c") else 1
        months = re.search(r"\b(months?|years?)\b", rest)
        if months is not None:
            target = _add_months(now.date(), sign * months_in(rest))
            if clock is None:
                return When(start=self._at(target, time()), all_day=True)
            return When(start=self._at(target, clock), all_day=False)
        if span < timedelta(days=1) or span % timedelta(days=1):
            if clock is not None:
                return None
            moment = (now + sign * span).replace(microsecond=0)
            if not self.precise:  # to the minute: "in 2 hours" has no seconds
                moment = moment.replace(second=0)
            return When(start=moment, all_day=False)
        target = now.date() + sign * span
        if clock is None:
            return When(start=self._at(target, time()), all_day=True)
        return When(start=self._at(target, clock), all_day=False)

    def _span(self, text: str, now: datetime, prefer: Prefer) -> When | None:
        match = re.fullmatch(r"(?P<which>this|next|last|the)?\s*weekend", text)
        if match is None:
            return None
        today = now.date()
        saturday = today + timedelta(days=(5 - today.weekday()) % 7)
        if today.weekday() == 6:  # Sunday: this weekend began yesterday
            saturday = today - timedelta(days=1)
        which = match.group("which")
        if which == "next":
            saturday += timedelta(days=7)
        elif which == "last" or (which is None and prefer == "past" and today.weekday() < 5):
            saturday -= timedelta(days=7)
        return When(
            start=self._at(saturday, time()),
            all_day=True,
            end=self._at(saturday + timedelta(days=2), time()),
        )

    def _day(self, text: str, now: datetime, prefer: Prefer) -> date | None:
        today = now.date()
        simple = {
            "today": 0,
            "tonight": 0,
            "tomorrow": 1,
            "tmrw": 1,
            "tmr": 1,
            "yesterday": -1,
            "day after tomorrow": 2,
            "the day after tomorrow": 2,
            "day before yesterday": -2,
            "the day before yesterday": -2,
        }
        if text in simple:
            return today + timedelta(days=simple[text])
        weekday = re.fullmatch(
            rf"(?:(?P<which>this|next|last|coming|on)\s+)?(?P<d>{_WEEKDAY_RE})", text
        )
        if weekday is not None:
            return _weekday(today, _WEEKDAYS[weekday.group("d")], weekday.group("which"), prefer)
        period = re.fullmatch(
            r"(?:the\s+)?end\s+of\s+(?:the\s+)?(?P<which>this\s+|next\s+)?(?P<p>week|month|year)",
            text,
        )
        if period is not None:
            return _end_of(
                today,
                period.group("p"),
                bool(period.group("which") and "next" in period.group("which")),
            )
        week = re.fullmatch(r"(?P<which>next|last|this)\s+(?P<p>week|month|year)", text)
        if week is not None:
            return _start_of(
                today, week.group("p"), {"next": 1, "last": -1, "this": 0}[week.group("which")]
            )
        ordinal = re.fullmatch(r"(?:on\s+)?(?:the\s+)?(?P<n>\d{1,2})(?:st|nd|rd|th)", text)
        if ordinal is not None:
            return _day_of_month(today, int(ordinal.group("n")), prefer)
        return self._dateparser_day(text, now, prefer)

    def _dateparser_day(self, text: str, now: datetime, prefer: Prefer) -> date | None:
        if not re.search(r"[a-z0-9]", text):
            return None
        data = self._data(text, now, prefer)
        if data is None or data.date_obj is None or data.period == "time":
            return None  # only days come from dateparser; times are read above
        day = data.date_obj.date()
        if re.search(r"\b\d{4}\b", text) is None:
            day = _nearest_year(day, now.date(), prefer)
        return day

    def _data(self, text: str, now: datetime, prefer: Prefer) -> _DateData | None:
        from dateparser.date import DateDataParser

        settings = {
            "PREFER_DATES_FROM": prefer,
            "RELATIVE_BASE": now.replace(tzinfo=None),
            "RETURN_TIME_AS_PERIOD": True,
            "PREFER_DAY_OF_MONTH": "first",
        }
        try:  # a parser per call: the "now" it reads relative to is a setting
            parser = DateDataParser(languages=list(self.languages), settings=settings)
            return cast(_DateData, parser.get_date_data(text))
        except (ValueError, OverflowError):  # dateparser's own parse failures
            return None


# -- helpers -----------------------------------------------------------------------


def _clock_of(match: re.Match[str]) -> time | None:
    hour = int(match.group("h"))
    minute = int(match.group("m") or 0)
    ampm = (match.groupdict().get("ampm") or "").replace(".", "")
    if ampm:
        if not 1 <= hour <= 12:
            return None
        hour = hour % 12 + (12 if ampm == "pm" else 0)
    elif 1 <= hour <= 6 and not match.group("h").startswith("0"):
        hour += 12  # "at 3" is said of the afternoon; "at 03:00" and "3am" are not
    if hour > 23 or minute > 59:
        return None
    return time(hour, minute)


def _take_time(text: str) -> tuple[time | None, str]:
    """The time of day in ``text`` (``at 3pm``, ``15:00``, ``morning``) and the rest."""
    part = _PART.search(text)
    if part is not None:
        rest = (text[: part.start()] + " " + text[part.end() :]).strip()
        clock = _PARTS_OF_DAY[part.group("part")]
        inner, rest2 = _take_time_clock(rest)
        if inner is not None:  # "tomorrow morning at 10": the clock wins
            clock, rest = inner, rest2
        said_this = part.group(0).startswith("this ")
        if (part.group("part") == "tonight" or said_this) and not rest:
            rest = "today"
        return clock, _tidy(rest)
    clock, rest = _take_time_clock(text)
    return clock, _tidy(rest)


def _take_time_clock(text: str) -> tuple[time | None, str]:
    for match in _CLOCK.finditer(text):
        if not (match.group("at") or match.group("m") or match.group("ampm")):
            continue  # a bare number is a day of the month, not a time
        before = text[: match.start()]
        if re.search(r"[-/]$", before):
            continue  # part of a date such as 12/25
        clock = _clock_of(match)
        if clock is None:
            return None, text
        return clock, (before + " " + text[match.end() :]).strip()
    return None, text


def _tidy(rest: str) -> str:
    rest = re.sub(r"\s+", " ", rest).strip(" ,")
    return re.sub(r"^(?:on|at|by)\s+|\s+(?:on|at|by)$", "", rest).strip()


def _weekday(today: date, target: int, which: str | None, prefer: Prefer) -> date:
    ahead = (target - today.weekday()) % 7
    behind = (today.weekday() - target) % 7
    if which == "next":
        return today + timedelta(days=ahead or 7)
    if which == "last":
        return today - timedelta(days=behind or 7)
    if which in ("coming",):
        return today + timedelta(days=ahead or 7)
    if prefer == "past" and which is None:
        return today - timedelta(days=behind)
    return today + timedelta(days=ahead)


def _nearest_year(day: date, today: date, prefer: Prefer) -> date:
    """``day`` moved to the nearest year on the preferred side of ``today``, today
    included: dateparser counts today's own date as past, so "October 21" said on
    October 21 would be next year's."""
    step = -1 if prefer == "future" else 1
    try:
        closer = day.replace(year=day.year + step)
    except ValueError:  # February 29 in a year without one
        return day
    if (closer >= today) if prefer == "future" else (closer <= today):
        return closer
    return day


def _day_of_month(today: date, day: int, prefer: Prefer) -> date | None:
    if not 1 <= day <= 31:
        return None
    step = 1 if prefer == "future" else -1
    month = today.replace(day=1)
    for _ in range(13):  # the next (or last) month that has that day
        if day <= _last_day(month.year, month.month):
            candidate = month.replace(day=day)
            if (candidate >= today) if step == 1 else (candidate <= today):
                return candidate
        month = _add_months(month, step)
    return None


def _add_months(day: date, months: int) -> date:
    index = day.year * 12 + day.month - 1 + months
    year, month = divmod(index, 12)
    last = _last_day(year, month + 1)
    return date(year, month + 1, min(day.day, last))


def _last_day(year: int, month: int) -> int:
    following = date(year + month // 12, month % 12 + 1, 1)
    return (following - timedelta(days=1)).day


def _end_of(today: date, period: str, following: bool) -> date:
    if period == "week":
        friday = today + timedelta(days=(4 - today.weekday()) % 7)
        if today.weekday() > 4:
            friday = today + timedelta(days=(4 - today.weekday()) + 7)
        return friday + timedelta(days=7 if following else 0)
    if period == "month":
        base = _add_months(today.replace(day=1), 1 if following else 0)
        return base.replace(day=_last_day(base.year, base.month))
    return date(today.year + (1 if following else 0), 12, 31)


def _start_of(today: date, period: str, offset: int) -> date:
    if period == "week":
        monday = today - timedelta(days=today.weekday())
        return monday + timedelta(days=7 * offset)
    if period == "month":
        return _add_months(today.replace(day=1), offset)
    return date(today.year + offset, 1, 1)
