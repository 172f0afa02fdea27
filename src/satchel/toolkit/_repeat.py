"""Where a repeating reminder stands in its RRULE: the next occurrence after a moment,
counted from the rule's start so that ``COUNT`` and ``UNTIL`` end it when they should.

A reminder keeps the occurrence it waits for (``due``) and which one of the rule that is
(``occurrence``, 1 for DTSTART). Moving on from there gives exactly what the rule
anchored at DTSTART gives (an occurrence's period keeps the rule's ``INTERVAL`` step,
its weekday, day and time of day), without walking every occurrence since DTSTART;
``COUNT`` is counted here, against ``occurrence``, rather than by ``dateutil``.

Occurrences are computed in the user's wall-clock time (they keep their time of day
across daylight-saving changes), so a ``UNTIL`` in UTC is turned into that zone's wall
time first, and a ``UNTIL`` that is a date holds through the end of that day.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, time
from zoneinfo import ZoneInfo

__all__ = ["MAX_MISSED", "Advance", "advance", "next_occurrence"]

MAX_MISSED = 1000
"""Missed occurrences are counted up to this many (a secondly rule after a year away)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Advance:
    """A repeating reminder moved on past a moment.

    Attributes:
        due: The first occurrence after the moment (UTC); ``None`` when the rule ended.
        occurrence: Which occurrence of the rule ``due`` is (from 1); when the rule
            ended, one past the last.
        passed: How many occurrences, from the one that was due, fell at or before the
            moment (they fire once, together).
    """

    due: datetime | None
    occurrence: int
    passed: int


def _local_until(value: str, zone: ZoneInfo) -> datetime:
    """An RRULE ``UNTIL`` value as naive wall time in ``zone``."""
    if value.endswith("Z"):
        moment = datetime.strptime(value, "%Y%m%dT%H%M%SZ").replace(tzinfo=UTC)
        return moment.astimezone(zone).replace(tzinfo=None)
    if "T" in value:  # floating: already wall time
        return datetime.strptime(value, "%Y%m%dT%H%M%S")
    return datetime.combine(datetime.strptime(value, "%Y%m%d").date(), time(23, 59, 59))


def _parts(rule: str, zone: ZoneInfo) -> tuple[str, int | None]:
    """``rule`` with its ``UNTIL`` in ``zone``'s wall time and without its ``COUNT``,
    and that ``COUNT``."""
    kept: list[str] = []
    count: int | None = None
    for part in rule.strip().removeprefix("RRULE:").split(";"):
        key, _, value = part.partition("=")
        match key.strip().upper():
            case "":
                continue
            case "COUNT":
                count = int(value)
            case "UNTIL":
                kept.append(f"UNTIL={_local_until(value.strip().upper(), zone):%Y%m%dT%H%M%S}")
            case _:
                kept.append(part)
    return ";".join(kept), count


def _wall(moment: datetime, zone: ZoneInfo) -> datetime:
    return moment.astimezone(zone).replace(tzinfo=None)


def _utc(wall: datetime, zone: ZoneInfo) -> datetime:
    return wall.replace(tzinfo=zone).astimezone(UTC)


def advance(rule: str, zone: ZoneInfo, due: datetime, occurrence: int, now: datetime) -> Advance:
    """Move a repeating reminder on past ``now``.

    Args:
        rule: Its RRULE.
        zone: The user's zone (occurrences keep their wall-clock time).
        due: The occurrence it waited for.
        occurrence: Which occurrence of ``rule`` ``due`` is (1 for DTSTART).
        now: The moment to move past.

    Returns:
        The first occurrence after ``now`` (``None`` once ``COUNT`` or ``UNTIL`` ends
        the rule), which occurrence that is, and how many fell from ``due`` to ``now``.
    """
    if due > now:
        return Advance(due=due, occurrence=occurrence, passed=0)
    from dateutil.rrule import rrulestr

    text, count = _parts(rule, zone)
    anchor = _wall(due, zone)
    limit = _wall(now, zone)
    rules = rrulestr(text, dtstart=anchor, ignoretz=True)
    index, passed = occurrence, 1
    for found in rules.xafter(anchor, inc=False):  # pyright: ignore[reportUnknownVariableType]
        index += 1
        if count is not None and index > count:
            break
        assert isinstance(found, datetime)
        if found > limit:
            return Advance(due=_utc(found, zone), occurrence=index, passed=passed)
        passed += 1
        if passed >= MAX_MISSED and count is None:  # the index no longer matters
            following = rules.after(limit)
            return Advance(
                due=None if following is None else _utc(following, zone),
                occurrence=index + 1,
                passed=passed,
            )
    return Advance(due=None, occurrence=index, passed=passed)


def next_occurrence(rule: str, first: datetime, after: datetime, zone: ZoneInfo) -> datetime | None:
    """The first occurrence of ``rule`` (anchored at ``first``, its DTSTART) strictly after
    ``after``, in UTC; ``None`` when the rule has ended. Wall-clock times stay put across
    DST; ``COUNT`` counts from ``first`` and ``UNTIL`` holds in ``zone``."""
    if after < first:
        return first
    found = advance(rule, zone, first, 1, after)
    return found.due
