"""``TimeParser``: human dates for search filters."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from satchel._errors import ToolRetry
from satchel.builtin import TimeParser

parser = TimeParser()


def test_a_bare_date_covers_the_whole_day() -> None:
    start = parser.parse_sync("2026-11-01", end=False, field="start_time")
    end = parser.parse_sync("2026-11-01", end=True, field="end_time")

    assert start == datetime(2026, 11, 1, tzinfo=UTC)
    assert end == datetime(2026, 11, 1, 23, 59, 59, 999999, tzinfo=UTC)


def test_an_iso_time_with_an_offset_is_converted_to_utc() -> None:
    moment = parser.parse_sync("2026-11-01T12:30:00+02:00", end=False, field="start_time")

    assert moment == datetime(2026, 11, 1, 10, 30, tzinfo=UTC)


def test_yesterday_starts_at_the_beginning_of_yesterday() -> None:
    moment = parser.parse_sync("yesterday", end=False, field="start_time")

    expected = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0) - timedelta(
        days=1
    )
    assert moment == expected


def test_a_month_or_a_year_alone_covers_all_of_it() -> None:
    assert parser.parse_sync("March 2025", end=False, field="f") == datetime(2025, 3, 1, tzinfo=UTC)
    assert parser.parse_sync("March 2025", end=True, field="f") == datetime(
        2025, 3, 31, 23, 59, 59, 999999, tzinfo=UTC
    )
    assert parser.parse_sync("2024", end=True, field="f") == datetime(
        2024, 12, 31, 23, 59, 59, 999999, tzinfo=UTC
    )


@pytest.mark.parametrize("text", ["", "   ", "the blue moon", "2026-13-45", "x" * 500, "\x00"])
def test_unreadable_text_is_a_retry_naming_the_field(text: str) -> None:
    with pytest.raises(ToolRetry, match="end_time") as caught:
        parser.parse_sync(text, end=True, field="end_time")

    assert "2026-11-01" in caught.value.message
