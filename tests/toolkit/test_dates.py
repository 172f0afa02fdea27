"""Dates people say, read at a fixed now (Tuesday 2026-11-24 10:30, Europe/Paris)."""

from __future__ import annotations

from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given
from hypothesis import strategies as st

from satchel._errors import ToolRetry
from satchel.toolkit._dates import DateReader
from satchel.toolkit._durations import read_duration
from satchel.toolkit._recurrence import looks_recurring, read_recurrence

PARIS = ZoneInfo("Europe/Paris")
NOW = datetime(2026, 11, 24, 10, 30, tzinfo=PARIS)  # a Tuesday


@pytest.fixture
def reader() -> DateReader:
    return DateReader(PARIS, now=lambda: NOW)


def at(day: int, hour: int = 0, minute: int = 0, month: int = 11, year: int = 2026) -> datetime:
    return datetime(year, month, day, hour, minute, tzinfo=PARIS)


DAY = "day"
TIMED = "timed"

# (phrase, expected start, all-day or timed) with prefer="future"
FUTURE: list[tuple[str, datetime, str]] = [
    ("tomorrow", at(25), DAY),
    ("today", at(24), DAY),
    ("yesterday", at(23), DAY),
    ("day after tomorrow", at(26), DAY),
    ("monday", at(30), DAY),
    ("tuesday", at(24), DAY),
    ("wednesday", at(25), DAY),
    ("sunday", at(29), DAY),
    ("Fri", at(27), DAY),
    ("next friday", at(27), DAY),
    ("this friday", at(27), DAY),
    ("on friday", at(27), DAY),
    ("coming friday", at(27), DAY),
    ("next tuesday", at(1, month=12), DAY),
    ("last monday", at(23), DAY),
    ("next week", at(30), DAY),
    ("next month", at(1, month=12), DAY),
    ("next year", at(1, month=1, year=2027), DAY),
    ("end of week", at(27), DAY),
    ("end of next week", at(4, month=12), DAY),
    ("end of the month", at(30), DAY),
    ("this weekend", at(28), DAY),
    ("next weekend", at(5, month=12), DAY),
    ("tomorrow morning", at(25, 9), TIMED),
    ("tomorrow afternoon", at(25, 14), TIMED),
    ("tomorrow evening", at(25, 18), TIMED),
    ("tomorrow night", at(25, 20), TIMED),
    ("tonight", at(24, 20), TIMED),
    ("this evening", at(24, 18), TIMED),
    ("this afternoon", at(24, 14), TIMED),
    ("this morning", at(24, 9), TIMED),
    ("noon", at(24, 12), TIMED),
    ("at noon", at(24, 12), TIMED),
    ("midnight", at(25, 0), TIMED),
    ("lunchtime", at(24, 12), TIMED),
    ("tomorrow lunch", at(25, 12), TIMED),
    ("3pm", at(24, 15), TIMED),
    ("3 pm", at(24, 15), TIMED),
    ("3:30pm", at(24, 15, 30), TIMED),
    ("15:45", at(24, 15, 45), TIMED),
    ("at 8", at(25, 8), TIMED),
    ("at 11", at(24, 11), TIMED),
    ("tomorrow at 3", at(25, 15), TIMED),
    ("at 4:30", at(24, 16, 30), TIMED),
    ("tomorrow at 03:00", at(25, 3), TIMED),
    ("tomorrow at 3am", at(25, 3), TIMED),
    ("at 20", at(24, 20), TIMED),
    ("8:00 am", at(25, 8), TIMED),
    ("10.30am", at(24, 10, 30), TIMED),
    ("7 p.m.", at(24, 19), TIMED),
    ("9 o'clock", at(25, 9), TIMED),
    ("tomorrow at 3pm", at(25, 15), TIMED),
    ("Tomorrow at 3PM.", at(25, 15), TIMED),
    ("  tomorrow   at 3pm ", at(25, 15), TIMED),
    ("tomorrow 3pm", at(25, 15), TIMED),
    ("tmrw 3pm", at(25, 15), TIMED),
    ("3pm tomorrow", at(25, 15), TIMED),
    ("tomorrow at 9:15", at(25, 9, 15), TIMED),
    ("tomorrow at noon", at(25, 12), TIMED),
    ("noon tomorrow", at(25, 12), TIMED),
    ("tomorrow at midnight", at(25, 0), TIMED),
    ("friday at 5pm", at(27, 17), TIMED),
    ("friday 5pm", at(27, 17), TIMED),
    ("next monday 9am", at(30, 9), TIMED),
    ("next tuesday at 14:30", at(1, 14, 30, month=12), TIMED),
    ("next tuesday morning", at(1, 9, month=12), TIMED),
    ("monday morning", at(30, 9), TIMED),
    ("wednesday afternoon", at(25, 14), TIMED),
    ("saturday evening", at(28, 18), TIMED),
    ("the day after tomorrow at 10", at(26, 10), TIMED),
    ("tomorrow morning at 10", at(25, 10), TIMED),
    ("tomorrow end of day", at(25, 17), TIMED),
    ("end of day tomorrow", at(25, 17), TIMED),
    ("end of day", at(24, 17), TIMED),
    ("by end of day", at(24, 17), TIMED),
    ("eod", at(24, 17), TIMED),
    ("friday eod", at(27, 17), TIMED),
    ("close of business friday", at(27, 17), TIMED),
    ("in 5 minutes", at(24, 10, 35), TIMED),
    ("in 45 mins", at(24, 11, 15), TIMED),
    ("in an hour", at(24, 11, 30), TIMED),
    ("in 2 hours", at(24, 12, 30), TIMED),
    ("in 2 hrs", at(24, 12, 30), TIMED),
    ("in 90 minutes", at(24, 12), TIMED),
    ("in 1h30m", at(24, 12), TIMED),
    ("in 1 hour 30 minutes", at(24, 12), TIMED),
    ("in an hour and a half", at(24, 12), TIMED),
    ("in half an hour", at(24, 11), TIMED),
    ("30 minutes from now", at(24, 11), TIMED),
    ("in 3 days", at(27), DAY),
    ("in 3 days at 9am", at(27, 9), TIMED),
    ("in a week", at(1, month=12), DAY),
    ("in 2 weeks", at(8, month=12), DAY),
    ("in 10 days", at(4, month=12), DAY),
    ("in a month", at(24, month=12), DAY),
    ("in 3 months", at(24, month=2, year=2027), DAY),
    ("2 days from now", at(26), DAY),
    ("an hour ago", at(24, 9, 30), TIMED),
    ("5 minutes ago", at(24, 10, 25), TIMED),
    ("a week ago", at(17), DAY),
    ("now", at(24, 10, 30), TIMED),
    ("december 3", at(3, month=12), DAY),
    ("dec 3", at(3, month=12), DAY),
    ("3 december", at(3, month=12), DAY),
    ("3 dec 2026", at(3, month=12), DAY),
    ("december 3rd at 10am", at(3, 10, month=12), TIMED),
    ("dec 3rd 2026 at 10:00", at(3, 10, month=12), TIMED),
    ("jan 15", at(15, month=1, year=2027), DAY),
    ("january 15 at 2pm", at(15, 14, month=1, year=2027), TIMED),
    ("12/25", at(25, month=12), DAY),
    ("the 1st", at(1, month=12), DAY),
    ("the 24th", at(24), DAY),
    ("on the 15th at 9am", at(15, 9, month=12), TIMED),
    ("2027-01-15", at(15, month=1, year=2027), DAY),
    ("2026-12-03 10:30", at(3, 10, 30, month=12), TIMED),
    ("2026-12-03T10:30", at(3, 10, 30, month=12), TIMED),
    ("2026-12-03T10:30:00Z", at(3, 11, 30, month=12), TIMED),
    ("2026-12-03T10:30:00-05:00", at(3, 16, 30, month=12), TIMED),
]

# the same phrases leaning to the past, as a search does
PAST: list[tuple[str, datetime, str]] = [
    ("friday", at(20), DAY),
    ("tuesday", at(24), DAY),
    ("monday", at(23), DAY),
    ("3pm", at(23, 15), TIMED),
    ("9am", at(24, 9), TIMED),
    ("december 3", at(3, month=12, year=2025), DAY),
    ("jan 15", at(15, month=1, year=2026), DAY),
    ("the 1st", at(1), DAY),
    ("the 30th", at(30, month=10), DAY),
    ("weekend", at(21), DAY),
    ("next friday", at(27), DAY),
    ("last friday", at(20), DAY),
    ("yesterday", at(23), DAY),
    ("2 days ago", at(22), DAY),
]

UNREADABLE = [
    "",
    "   ",
    "asdf",
    "christmas-ish",
    "next blursday",
    "in 2 hours at 3pm",
    "32nd",
    "25:00",
    "13pm",
    "monday at 25:00",
    "in banana hours",
    "x" * 500,
]


def test_the_table_has_at_least_a_hundred_phrases() -> None:
    assert len(FUTURE) + len(PAST) + len(UNREADABLE) >= 100


@pytest.mark.parametrize(("phrase", "expected", "kind"), FUTURE)
def test_a_phrase_for_scheduling_reads_as_the_next_such_moment(
    reader: DateReader, phrase: str, expected: datetime, kind: str
) -> None:
    when = reader.when(phrase)
    assert when.start == expected
    assert when.start.utcoffset() == expected.utcoffset()
    assert when.all_day is (kind == DAY)


@pytest.mark.parametrize(("phrase", "expected", "kind"), PAST)
def test_a_phrase_for_searching_reads_as_the_last_such_moment(
    reader: DateReader, phrase: str, expected: datetime, kind: str
) -> None:
    when = reader.when(phrase, prefer="past")
    assert when.start == expected
    assert when.all_day is (kind == DAY)


@pytest.mark.parametrize("phrase", UNREADABLE)
def test_an_unreadable_phrase_is_a_retry_that_shows_forms_that_work(
    reader: DateReader, phrase: str
) -> None:
    with pytest.raises(ToolRetry) as caught:
        reader.when(phrase, field="start_time")
    assert caught.value.error_kind == "retry"
    assert "start_time" in caught.value.message
    assert "tomorrow at 3pm" in caught.value.message


def test_this_weekend_is_a_span_over_saturday_and_sunday(reader: DateReader) -> None:
    when = reader.when("this weekend")
    assert (when.start, when.end) == (at(28), at(30))


def test_a_bare_time_falls_on_the_given_day(reader: DateReader) -> None:
    start = reader.when("friday at 3pm")
    assert reader.when("4pm", on=start.day).start == at(27, 16)


def test_a_time_in_another_zone_is_read_in_that_zone() -> None:
    tokyo = DateReader(ZoneInfo("Asia/Tokyo"), now=lambda: NOW)
    when = tokyo.when("tomorrow at 3pm")  # NOW is 18:30 in Tokyo, the 24th
    assert when.start == datetime(2026, 11, 25, 15, tzinfo=ZoneInfo("Asia/Tokyo"))


def test_a_time_skipped_by_daylight_saving_lands_on_a_real_instant() -> None:
    spring = datetime(2027, 3, 27, 12, tzinfo=PARIS)  # clocks go 02:00 -> 03:00 next day
    when = DateReader(PARIS, now=lambda: spring).when("tomorrow at 2:30am")
    assert when.start.astimezone(ZoneInfo("UTC")).hour == 1


DURATIONS = [
    ("90 minutes", timedelta(minutes=90)),
    ("1h30m", timedelta(minutes=90)),
    ("1h 30m", timedelta(minutes=90)),
    ("2h15", timedelta(minutes=135)),
    ("2 hrs", timedelta(hours=2)),
    ("half an hour", timedelta(minutes=30)),
    ("an hour and a half", timedelta(minutes=90)),
    ("1 hour and 30 minutes", timedelta(minutes=90)),
    ("1.5 hours", timedelta(minutes=90)),
    ("a quarter of an hour", timedelta(minutes=15)),
    ("three hours", timedelta(hours=3)),
    ("45", timedelta(minutes=45)),
    ("1:30", timedelta(minutes=90)),
    ("PT1H30M", timedelta(minutes=90)),
    ("for 2 hours", timedelta(hours=2)),
    ("2 days", timedelta(days=2)),
    ("20 min", timedelta(minutes=20)),
]


@pytest.mark.parametrize(("phrase", "expected"), DURATIONS)
def test_a_duration_reads_as_its_full_length(phrase: str, expected: timedelta) -> None:
    assert read_duration(phrase) == expected


@pytest.mark.parametrize("phrase", ["banana", "0 minutes", "2 hours ago", "-5", ""])
def test_a_bad_duration_is_a_retry(phrase: str) -> None:
    with pytest.raises(ToolRetry, match="90 minutes"):
        read_duration(phrase)


RECURRENCES = [
    ("every Monday at 9", "FREQ=WEEKLY;BYDAY=MO", at(30, 9), TIMED),
    ("every other Friday at 4pm", "FREQ=WEEKLY;INTERVAL=2;BYDAY=FR", at(27, 16), TIMED),
    ("every weekday at 8:30", "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR", at(25, 8, 30), TIMED),
    ("every monday and wednesday at 10am", "FREQ=WEEKLY;BYDAY=MO,WE", at(25, 10), TIMED),
    ("each friday at 16:00", "FREQ=WEEKLY;BYDAY=FR", at(27, 16), TIMED),
    ("every morning", "FREQ=DAILY", at(25, 9), TIMED),
    ("daily", "FREQ=DAILY", at(24), DAY),
    ("every 3 days", "FREQ=DAILY;INTERVAL=3", at(24), DAY),
    ("every 2 weeks on Tuesday", "FREQ=WEEKLY;INTERVAL=2;BYDAY=TU", at(24), DAY),
    ("monthly on the 1st", "FREQ=MONTHLY;BYMONTHDAY=1", at(1, month=12), DAY),
    ("every month on the 15th at noon", "FREQ=MONTHLY;BYMONTHDAY=15", at(15, 12, month=12), TIMED),
    ("every year", "FREQ=YEARLY", at(24), DAY),
    ("every day for 10 times", "FREQ=DAILY;COUNT=10", at(24), DAY),
    ("every Monday until December 31", "FREQ=WEEKLY;BYDAY=MO;UNTIL=20261231", at(30), DAY),
]


@pytest.mark.parametrize(("phrase", "rule", "first", "kind"), RECURRENCES)
def test_a_recurrence_reads_as_an_rrule_and_its_first_occurrence(
    reader: DateReader, phrase: str, rule: str, first: datetime, kind: str
) -> None:
    assert looks_recurring(phrase)
    recurrence = read_recurrence(reader, phrase)
    assert recurrence.rule == rule
    assert recurrence.first.start == first
    assert recurrence.first.all_day is (kind == DAY)


@pytest.mark.parametrize("phrase", ["every banana", "every Monday at 25", "every", "sometimes"])
def test_an_unreadable_recurrence_is_a_retry(reader: DateReader, phrase: str) -> None:
    with pytest.raises(ToolRetry, match="every Monday at 9"):
        read_recurrence(reader, phrase)


@given(st.text(max_size=60))
def test_any_text_is_read_or_refused_with_a_retry_never_another_error(text: str) -> None:
    reader = DateReader(PARIS, now=lambda: NOW)
    try:
        when = reader.when(text)
    except ToolRetry:
        return
    assert when.start.tzinfo is not None


# NOW is November 24: a date said on its own day is that day, not next year's
@pytest.mark.parametrize(
    ("phrase", "expected"),
    [
        ("November 24", at(24)),
        ("Nov 24 at 3pm", at(24, 15)),
        ("24 November", at(24)),
        ("November 23", at(23, year=2027)),
        ("November 24 2027", at(24, year=2027)),
    ],
)
def test_a_date_said_on_its_own_day_is_today(
    reader: DateReader, phrase: str, expected: datetime
) -> None:
    assert reader.when(phrase).start == expected


def test_a_date_said_on_its_own_day_is_today_when_looking_back_too(reader: DateReader) -> None:
    assert reader.when("November 24", prefer="past").start == at(24)
    assert reader.when("November 25", prefer="past").start == at(25, year=2025)


def test_a_repeat_until_today_ends_today_not_next_year(reader: DateReader) -> None:
    recurrence = read_recurrence(reader, "every day at 11am until November 24")
    assert recurrence.rule == "FREQ=DAILY;UNTIL=20261124T225959Z"


def test_a_repeat_that_ends_before_its_first_occurrence_is_a_retry(reader: DateReader) -> None:
    # 9am has passed: the first one is tomorrow, after the end
    with pytest.raises(ToolRetry, match="before its first occurrence") as caught:
        read_recurrence(reader, "every day at 9am until November 24")
    assert caught.value.details["field"] == "until"
