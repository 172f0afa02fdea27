"""Lengths of time as people write them: ``90 minutes``, ``1h30m``, ``2 hrs``, ``half an
hour``, ``an hour and a half``.

Hand-written because ``dateparser`` reads dates, not durations, and the few duration
libraries either miss these forms (``2 hrs`` or ``1h30m`` silently become an hour in
AgenticPal) or are unmaintained; the grammar is one regular expression over numbers
(digits or words) and units.
"""

from __future__ import annotations

import re
from datetime import timedelta

from satchel._errors import ToolRetry

__all__ = ["AMOUNT", "DURATION_EXAMPLES", "amounts", "months_in", "normalise", "read_duration"]

_MAX_TEXT = 120

_UNITS: dict[str, str] = {
    "s": "seconds",
    "sec": "seconds",
    "secs": "seconds",
    "second": "seconds",
    "seconds": "seconds",
    "m": "minutes",
    "min": "minutes",
    "mins": "minutes",
    "minute": "minutes",
    "minutes": "minutes",
    "h": "hours",
    "hr": "hours",
    "hrs": "hours",
    "hour": "hours",
    "hours": "hours",
    "d": "days",
    "day": "days",
    "days": "days",
    "w": "weeks",
    "wk": "weeks",
    "wks": "weeks",
    "week": "weeks",
    "weeks": "weeks",
    "month": "months",
    "months": "months",
    "year": "years",
    "years": "years",
}
_WORD_NUMBERS = {
    "a": 1.0,
    "an": 1.0,
    "one": 1.0,
    "two": 2.0,
    "three": 3.0,
    "four": 4.0,
    "five": 5.0,
    "six": 6.0,
    "seven": 7.0,
    "eight": 8.0,
    "nine": 9.0,
    "ten": 10.0,
    "eleven": 11.0,
    "twelve": 12.0,
    "fifteen": 15.0,
    "twenty": 20.0,
    "thirty": 30.0,
    "forty-five": 45.0,
    "forty five": 45.0,
    "a couple of": 2.0,
    "a couple": 2.0,
    "a few": 3.0,
    "half an": 0.5,
    "half a": 0.5,
    "a half": 0.5,
    "quarter of an": 0.25,
    "a quarter of an": 0.25,
    "a quarter": 0.25,
}
_WORDS_RE = "|".join(re.escape(w) for w in sorted(_WORD_NUMBERS, key=len, reverse=True))
_UNIT_RE = "|".join(sorted(_UNITS, key=len, reverse=True))
AMOUNT = re.compile(
    rf"(?:(?<![\d.])(?P<n>\d+(?:\.\d+)?)\s*|(?<![a-z])(?P<w>{_WORDS_RE})\s+)"
    rf"(?P<unit>{_UNIT_RE})(?![a-z])"
)
"""One amount of a duration: ``90 minutes``, ``2 hrs``, ``1h``, ``half an hour``."""


DURATION_EXAMPLES = "'90 minutes', '1h30m', '2 hrs', 'half an hour', 'an hour and a half', 'PT45M'"


def read_duration(text: str, *, field: str = "duration") -> timedelta:
    """A length of time as people write it: ``90 minutes``, ``1h30m``, ``2 hrs``,
    ``half an hour``, ``an hour and a half``, ``1:30``, ISO 8601 ``PT1H30M``; a bare
    number is minutes.

    Raises:
        ToolRetry: Not a length of time, or not positive; the message shows forms that
            work.
    """
    cleaned = normalise(text)
    span: timedelta | None = None
    if re.fullmatch(r"\d+(?:\.\d+)?", cleaned):
        span = timedelta(minutes=float(cleaned))
    elif (clock := re.fullmatch(r"(\d{1,2})\s*(?::|h)\s*(\d{2})", cleaned)) is not None:
        span = timedelta(hours=int(clock.group(1)), minutes=int(clock.group(2)))
    elif (
        iso := re.fullmatch(r"p(?:(\d+)d)?(?:t(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?)?", cleaned)
    ) is not None:
        d, h, m, sec = (int(g or 0) for g in iso.groups())
        span = timedelta(days=d, hours=h, minutes=m, seconds=sec)
    elif len(cleaned) <= _MAX_TEXT:
        span = amounts(re.sub(r"^(?:for|lasting)\s+", "", cleaned))
    if span is None or span <= timedelta():
        raise ToolRetry(
            f"{field} {text[:_MAX_TEXT]!r} is not a length of time I can read. Use a form "
            f"such as {DURATION_EXAMPLES}.",
            details={"field": field, "value": text[:_MAX_TEXT], "examples": DURATION_EXAMPLES},
        )
    return span


def _amount(match: re.Match[str]) -> tuple[float, str]:
    word = match.group("w")
    number = _WORD_NUMBERS[word] if word else float(match.group("n"))
    return number, _UNITS[match.group("unit")]


def amounts(text: str) -> timedelta | None:
    """The sum of the amounts in ``text`` when that is all it holds (``1h30m``, ``an
    hour and a half``, ``2 days``), else ``None``. Months count as 30 days, years 365."""
    half = re.search(r"\s+and\s+a\s+half$", text)
    body = text[: half.start()] if half else text
    matches = list(AMOUNT.finditer(body))
    if not matches or AMOUNT.sub(" ", body).replace(",", " ").replace("and", " ").strip():
        return None
    total = timedelta()
    for match in matches:
        number, unit = _amount(match)
        if half and match is matches[-1]:
            number += 0.5
        if unit == "months":
            unit, number = "days", number * 30
        elif unit == "years":
            unit, number = "days", number * 365
        total += timedelta(**{unit: number})
    return total


def normalise(text: str) -> str:
    """``text`` lower-cased, with single spaces, no closing punctuation, and
    ``N o'clock`` as ``N:00``."""
    lowered = " ".join(text.strip().lower().split())
    lowered = re.sub(r"[.,!?]+$", "", lowered)
    return re.sub(r"(\d{1,2})\s*o'?clock\b", r"\1:00", lowered).strip()


def months_in(text: str) -> int:
    """The whole months in an amount of months or years (``2 years``: 24)."""
    match = AMOUNT.search(text)
    if match is None:
        return 0
    number, unit = _amount(match)
    return int(number * (12 if unit == "years" else 1))
