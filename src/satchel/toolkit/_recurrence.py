"""Recurrences as people say them, as RFC 5545 ``RRULE``\\ s: ``every Monday at 9``,
``every other Friday at 4pm``, ``every weekday``, ``monthly on the 1st``.

Hand-written because no maintained library reads English recurrences into RRULEs (the
ones that exist are unmaintained or pull in an NLP stack); the RRULE itself is checked
by ``dateutil.rrule`` (which ``icalendar`` and ``recurring-ical-events`` use too).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta

from satchel._errors import InvalidInputError, ToolRetry
from satchel.toolkit._dates import DateReader, When

__all__ = ["RECURRENCE_EXAMPLES", "Recurrence", "looks_recurring", "read_recurrence"]

RECURRENCE_EXAMPLES = (
    "'every Monday at 9', 'every other Friday at 4pm', 'every weekday at 8:30', 'daily', "
    "'every 2 weeks on Tuesday', 'monthly on the 1st', 'every Monday until December 31', "
    "'every day for 10 times', or an RRULE such as 'FREQ=WEEKLY;BYDAY=MO'"
)

_DAYS = ("MO", "TU", "WE", "TH", "FR", "SA", "SU")
_DAY_WORDS = {
    "monday": 0,
    "mon": 0,
    "mondays": 0,
    "tuesday": 1,
    "tue": 1,
    "tues": 1,
    "tuesdays": 1,
    "wednesday": 2,
    "wed": 2,
    "wednesdays": 2,
    "thursday": 3,
    "thu": 3,
    "thurs": 3,
    "thursdays": 3,
    "friday": 4,
    "fri": 4,
    "fridays": 4,
    "saturday": 5,
    "sat": 5,
    "saturdays": 5,
    "sunday": 6,
    "sun": 6,
    "sundays": 6,
}
_FREQ_WORDS = {
    "daily": "DAILY",
    "weekly": "WEEKLY",
    "monthly": "MONTHLY",
    "yearly": "YEARLY",
    "annually": "YEARLY",
    "fortnightly": "WEEKLY",
}
_UNIT_FREQ = {"day": "DAILY", "week": "WEEKLY", "month": "MONTHLY", "year": "YEARLY"}
_ORDINAL_WORDS = {"other": 2, "second": 2, "third": 3, "fourth": 4}


@dataclass(frozen=True, kw_only=True, slots=True)
class Recurrence:
    """A repeating schedule.

    Attributes:
        rule: The RRULE value (``FREQ=WEEKLY;INTERVAL=2;BYDAY=FR``), no ``RRULE:``.
        first: The first occurrence (timed or all-day), in the user's zone.
    """

    rule: str
    first: When


def looks_recurring(text: str) -> bool:
    """Whether ``text`` reads as a recurrence rather than one date."""
    lowered = text.strip().lower()
    return bool(
        re.match(
            r"(?:every|each)\b|(?:daily|weekly|monthly|yearly|annually|fortnightly)\b", lowered
        )
        or lowered.startswith(("rrule:", "freq="))
    )


def read_recurrence(
    reader: DateReader, text: str, *, field: str = "recurrence", start: When | None = None
) -> Recurrence:
    """Read ``text`` as a recurrence whose first occurrence is ``start`` (default: the
    next one the words name, from ``reader``'s now).

    Raises:
        ToolRetry: Not a recurrence; the message shows forms that work.
    """
    try:
        result = _read(reader, " ".join(text.strip().lower().split()).rstrip("."), start)
    except (ValueError, OverflowError):
        result = None
    if result is None:
        raise ToolRetry(
            f"{field} {text[:120]!r} is not a recurrence I can read. Use a form such as "
            f"{RECURRENCE_EXAMPLES}.",
            details={"field": field, "value": text[:120], "examples": RECURRENCE_EXAMPLES},
        )
    return result


def _read(reader: DateReader, text: str, start: When | None) -> Recurrence | None:
    if text.startswith(("rrule:", "freq=")):
        rule = text.removeprefix("rrule:").upper()
        first = start if start is not None else When(start=reader.now(), all_day=False)
        _check(rule, first)
        return Recurrence(rule=rule, first=first)
    parts: list[str] = []
    text, until = _split(text, r"\s+until\s+(?P<v>.+)$")
    text, count = _split(text, r"\s+for\s+(?P<v>\d+)\s*(?:times|occurrences|\w+)?$")
    clock, text = _clock(reader, text)
    freq, interval, days, month_day = _frequency(text)
    if freq is None or (text in ("every", "each") and clock is None):
        return None
    parts.append(f"FREQ={freq}")
    if interval > 1:
        parts.append(f"INTERVAL={interval}")
    if days:
        parts.append("BYDAY=" + ",".join(_DAYS[d] for d in sorted(days)))
    if month_day is not None:
        parts.append(f"BYMONTHDAY={month_day}")
    if start is None:
        first = _first(reader, clock, days, month_day)
    else:
        first = _onto_rule(reader, start, days, month_day)
    if count is not None:
        parts.append(f"COUNT={int(count)}")
    if until is not None:
        end = reader.when(until, field="until", prefer="future")
        last = end.start + timedelta(days=1) - timedelta(seconds=1) if end.all_day else end.start
        if first.all_day:
            parts.append(f"UNTIL={last.date().strftime('%Y%m%d')}")
        else:
            parts.append(f"UNTIL={last.astimezone(UTC).strftime('%Y%m%dT%H%M%SZ')}")
    rule = ";".join(parts)
    _check(rule, first)
    if until is not None and not _occurs(rule, first):
        raise ToolRetry(
            f"the repeat ends ({until[:60]!r}) before its first occurrence "
            f"({first.start:%Y-%m-%d %H:%M}). Give a later end, or leave it out.",
            details={"field": "until", "value": until[:60], "first": first.start.isoformat()},
        )
    return Recurrence(rule=rule, first=first)


def _occurs(rule: str, first: When) -> bool:
    """Whether ``rule`` has an occurrence at all from ``first`` on."""
    from dateutil.rrule import rrulestr

    anchor = first.start if not first.all_day else datetime.combine(first.day, time())
    series = rrulestr(rule, dtstart=anchor if "Z" in rule else anchor.replace(tzinfo=None))
    return next(iter(series), None) is not None


def _split(text: str, pattern: str) -> tuple[str, str | None]:
    match = re.search(pattern, text)
    if match is None:
        return text, None
    return text[: match.start()].strip(), match.group("v")


def _clock(reader: DateReader, text: str) -> tuple[time | None, str]:
    match = re.search(r"\s+(?P<t>(?:at|@|in the)\s+.+)$", text)
    if match is None:
        match = re.search(r"\s+(?P<t>(?:morning|afternoon|evening|night|noon))$", text)
    if match is None:
        return None, text
    moment = reader.when(match.group("t"), field="recurrence", on=date(2000, 1, 3))
    if moment.all_day or moment.day != date(2000, 1, 3):
        raise InvalidInputError("not a time of day")
    return moment.start.time().replace(tzinfo=None), text[: match.start()].strip()


def _frequency(text: str) -> tuple[str | None, int, set[int], int | None]:
    """(FREQ, INTERVAL, weekdays, day of month) of ``text`` without its time."""
    words = re.sub(r"[,&]|\band\b|\bon\b|\bthe\b", " ", text).split()
    if not words:
        return None, 1, set(), None
    freq: str | None = _FREQ_WORDS.get(words[0])
    interval = 2 if words[0] == "fortnightly" else 1
    rest = words[1:]
    if freq is None:
        if words[0] not in ("every", "each"):
            return None, 1, set(), None
        if rest and rest[0].isdigit():
            interval, rest = int(rest[0]), rest[1:]
        elif rest and rest[0] in _ORDINAL_WORDS:
            interval, rest = _ORDINAL_WORDS[rest[0]], rest[1:]
        if not rest:
            return (
                ("DAILY", interval, set(), None) if words == ["every"] else (None, 1, set(), None)
            )
        unit = rest[0].removesuffix("s")
        if unit in _UNIT_FREQ:
            freq, rest = _UNIT_FREQ[unit], rest[1:]
        elif rest[0] in ("weekday", "weekdays"):
            return "WEEKLY", interval, {0, 1, 2, 3, 4}, None
        elif rest[0] in ("weekend", "weekends"):
            return "WEEKLY", interval, {5, 6}, None
        elif rest[0] in _DAY_WORDS:
            freq = "WEEKLY"
        else:
            return None, 1, set(), None
    days: set[int] = set()
    month_day: int | None = None
    for word in rest:
        if word in _DAY_WORDS:
            days.add(_DAY_WORDS[word])
        elif (ordinal := re.fullmatch(r"(\d{1,2})(?:st|nd|rd|th)?", word)) is not None:
            month_day = int(ordinal.group(1))
        elif word not in ("day", "of", "month"):
            return None, 1, set(), None
    if days and freq not in ("WEEKLY", "DAILY"):
        return None, 1, set(), None
    if days and freq == "DAILY":
        freq = "WEEKLY"
    if month_day is not None and (freq != "MONTHLY" or not 1 <= month_day <= 31):
        return None, 1, set(), None
    return freq, interval, days, month_day


def _first(reader: DateReader, clock: time | None, days: set[int], month_day: int | None) -> When:
    now = reader.now()
    day = now.date()
    for _ in range(400):
        fits = (not days or day.weekday() in days) and (month_day is None or day.day == month_day)
        if fits:
            if clock is None:
                return When(start=reader.when(day.isoformat()).start, all_day=True)
            moment = reader.when(f"{day.isoformat()}T{clock.isoformat()}").start
            if moment >= now:
                return When(start=moment, all_day=False)
        day += timedelta(days=1)
    raise InvalidInputError("no occurrence within a year")


def _onto_rule(reader: DateReader, start: When, days: set[int], month_day: int | None) -> When:
    """``start`` moved on, at its time of day, to the first day the rule names.

    An RRULE's DTSTART is always its first occurrence, and ``INTERVAL`` counts from its
    week: a start on a Saturday with 'every other Friday' would give that Saturday, then
    a Friday two weeks out. The first occurrence is the first Friday from the start.
    """
    day = start.day
    for _ in range(400):
        if (not days or day.weekday() in days) and (month_day is None or day.day == month_day):
            break
        day += timedelta(days=1)
    else:
        raise InvalidInputError("no occurrence within a year")
    if day == start.day:
        return start
    if start.all_day:
        return When(start=reader.when(day.isoformat()).start, all_day=True)
    clock = start.start.astimezone(reader.zone).time().replace(tzinfo=None)
    return When(start=reader.when(f"{day.isoformat()}T{clock.isoformat()}").start, all_day=False)


def _check(rule: str, first: When) -> None:
    """Raise ``ValueError`` unless ``rule`` is an RRULE dateutil accepts."""
    from dateutil.rrule import rrulestr

    anchor = first.start if not first.all_day else datetime.combine(first.day, time())
    if not first.all_day and "UNTIL=" in rule and not rule.split("UNTIL=")[1].endswith("Z"):
        raise InvalidInputError("a timed UNTIL must be in UTC")
    rrulestr(rule, dtstart=anchor.replace(tzinfo=None) if "UNTIL=" not in rule else anchor)
