"""Repeating reminders end when their rule does: ``COUNT`` counts from the rule's start
(DTSTART), ``UNTIL`` holds in the user's zone (issue 30, item 2). The clock is the
test's own; nothing waits on or reads the wall clock."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from satchel.memory import BlockKind, Permission
from satchel.toolkit._agenda_store import REMINDER_TAG, Reminder

from .agenda_kit import PARIS, Setup

pytestmark = pytest.mark.anyio


async def _schedule(kit: Setup, repeat: str) -> str:
    out = await kit.ok(
        "schedule_reminder", {"operation": "schedule", "message": "Pills", "repeat": repeat}
    )
    [view] = out.reminders
    assert view.due == datetime(2026, 10, 22, 9, 0, tzinfo=PARIS)
    return view.reminder_id


async def _fire_daily(kit: Setup, days: range, *, dismiss: str | None = None) -> list[datetime]:
    """Fire at 09:00:02 on each of ``days`` (October 2026), dismissing ``dismiss`` after
    each firing; the local due times of what fired."""
    fired: list[datetime] = []
    for day in days:
        kit.clock.now = datetime(2026, 10, day, 9, 0, 2, tzinfo=PARIS)
        fired += [r.local_due() for r in await kit.agenda.fire_due("ada")]
        if dismiss is not None and fired and fired[-1].day == day:
            await kit.ok("schedule_reminder", {"operation": "dismiss", "reminder_id": dismiss})
    return fired


def _at_nine(*days: int) -> list[datetime]:
    return [datetime(2026, 10, d, 9, 0, tzinfo=PARIS) for d in days]


async def test_a_reminder_for_three_times_fires_exactly_three_times(kit: Setup) -> None:
    reminder_id = await _schedule(kit, "every day at 9am for 3 times")
    assert await _fire_daily(kit, range(22, 30)) == _at_nine(22, 23, 24)
    assert await kit.agenda.next_due("ada") is None
    [left] = await kit.agenda.reminders("ada")
    assert (left.id, left.status, left.repeat, left.times_fired) == (reminder_id, "due", None, 3)
    gone = await kit.ok("schedule_reminder", {"operation": "dismiss", "reminder_id": reminder_id})
    assert gone.reminders == []
    assert await kit.agenda.reminders("ada") == []


async def test_dismissed_occurrences_count_towards_count(kit: Setup) -> None:
    reminder_id = await _schedule(kit, "every day at 9am for 3 times")
    fired = await _fire_daily(kit, range(22, 30), dismiss=reminder_id)
    assert fired == _at_nine(22, 23, 24)
    assert await kit.agenda.reminders("ada") == []  # the last dismissal ended it


async def test_a_dismissal_that_skips_a_missed_occurrence_counts_it(kit: Setup) -> None:
    reminder_id = await _schedule(kit, "every day at 9am for 3 times")
    assert await _fire_daily(kit, range(22, 23)) == _at_nine(22)
    kit.clock.now = datetime(2026, 10, 23, 12, 0, tzinfo=PARIS)  # the 23rd passed unseen
    back = await kit.ok("schedule_reminder", {"operation": "dismiss", "reminder_id": reminder_id})
    assert [r.due for r in back.reminders] == _at_nine(24)
    assert await _fire_daily(kit, range(24, 30)) == _at_nine(24)


async def test_a_reminder_missed_while_nothing_ran_fires_once_late_and_keeps_its_count(
    kit: Setup,
) -> None:
    await _schedule(kit, "every day at 9am for 4 times")
    assert await _fire_daily(kit, range(22, 23)) == _at_nine(22)
    kit.clock.now = datetime(2026, 10, 24, 12, 0, tzinfo=PARIS)  # the 23rd and 24th missed
    [late] = await kit.agenda.fire_due("ada")
    assert (late.local_due(), late.late) == (_at_nine(23)[0], True)
    assert await kit.agenda.fire_due("ada") == []
    assert await _fire_daily(kit, range(25, 30)) == _at_nine(25)  # the fourth, and no more
    messages = [m.content for m in await kit.store.list_messages("ada")]
    assert messages[1] == "Late reminder (was due 2026-10-23 09:00 CEST, missed 2 times): Pills"
    assert len(messages) == 3


async def test_a_reminder_whose_every_occurrence_was_missed_fires_once_late_and_ends(
    kit: Setup,
) -> None:
    await _schedule(kit, "every day at 9am for 3 times")
    kit.clock.now = datetime(2026, 11, 1, 12, 0, tzinfo=PARIS)
    [late] = await kit.agenda.fire_due("ada")
    assert late.late
    assert await kit.agenda.next_due("ada") is None
    [message] = await kit.store.list_messages("ada")
    assert message.content == "Late reminder (was due 2026-10-22 09:00 CEST, missed 3 times): Pills"


@pytest.mark.parametrize(
    ("until", "days"),
    [
        ("October 24", (22, 23, 24)),
        ("October 24 at 10am", (22, 23, 24)),  # 08:00 UTC: still after 09:00 Paris time
        ("October 24 at 8am", (22, 23)),
    ],
)
async def test_a_reminder_with_until_stops_after_it(
    kit: Setup, until: str, days: tuple[int, ...]
) -> None:
    await _schedule(kit, f"every day at 9am until {until}")
    assert await _fire_daily(kit, range(22, 30)) == _at_nine(*days)
    assert await kit.agenda.next_due("ada") is None


async def test_an_until_that_is_a_date_holds_through_that_day(kit: Setup) -> None:
    reminder = await kit.agenda.schedule(
        "ada",
        "Pills",
        datetime(2026, 10, 22, 9, 0, tzinfo=PARIS),
        PARIS,
        "FREQ=DAILY;UNTIL=20261024",
    )
    assert reminder.start == datetime(2026, 10, 22, 7, 0, tzinfo=UTC)
    assert await _fire_daily(kit, range(22, 30)) == _at_nine(22, 23, 24)


async def test_a_reminder_stored_before_its_start_was_kept_still_loads_fires_and_ends(
    kit: Setup,
) -> None:
    # A record as older versions wrote it: no start, no occurrence; fired once already.
    record = {
        "id": "abc123",
        "message": "Pills",
        "due": "2026-10-23T07:00:00Z",
        "timezone": "Europe/Paris",
        "repeat": "FREQ=DAILY;COUNT=3",
        "status": "scheduled",
        "fired_at": "2026-10-22T07:00:02Z",
        "times_fired": 1,
        "created_at": "2026-10-21T08:00:00Z",
    }
    await kit.store.create_block(
        "ada",
        "reminder_abc123",
        Reminder.model_validate(record).model_dump_json(exclude={"start", "occurrence"}),
        description="A reminder you scheduled (schedule_reminder); not due yet.",
        kind=BlockKind.ARCHIVAL,
        permission=Permission.ADMIN,
        tags=(REMINDER_TAG,),
    )
    [loaded] = await kit.agenda.reminders("ada")
    assert (loaded.start, loaded.occurrence) == (None, 2)
    kit.clock.now = datetime(2026, 10, 22, 12, 0, tzinfo=PARIS)
    assert await _fire_daily(kit, range(23, 30)) == _at_nine(23, 24)


async def test_a_weekly_reminder_without_an_end_keeps_its_interval_and_wall_time(
    kit: Setup,
) -> None:
    out = await kit.ok(
        "schedule_reminder",
        {"operation": "schedule", "message": "Bins", "repeat": "every other Monday at 9"},
    )
    first = out.reminders[0].due
    seen: list[datetime] = []
    for week in range(7):
        kit.clock.now = first + timedelta(weeks=week, seconds=2)
        seen += [r.local_due() for r in await kit.agenda.fire_due("ada")]
    assert seen == [first + timedelta(weeks=w) for w in (0, 2, 4, 6)]
    assert all(moment.hour == 9 for moment in seen)


@pytest.mark.parametrize("repeat", ["daily", "every day for 3 times"])
async def test_a_daily_reminder_said_after_nine_starts_tomorrow_and_counts_from_there(
    kit: Setup, repeat: str
) -> None:
    assert kit.clock.now.hour == 10  # today's 09:00 has gone
    out = await kit.ok(
        "schedule_reminder", {"operation": "schedule", "message": "Pills", "repeat": repeat}
    )
    [view] = out.reminders
    assert view.due == datetime(2026, 10, 22, 9, 0, tzinfo=PARIS)
    fired = await _fire_daily(kit, range(22, 26))
    expected = (22, 23, 24) if "3 times" in repeat else (22, 23, 24, 25)
    assert fired == _at_nine(*expected)


async def test_a_repeating_reminder_whose_rule_has_ended_is_a_retry_naming_repeat(
    kit: Setup,
) -> None:
    error = await kit.error(
        "schedule_reminder",
        {"operation": "schedule", "message": "Pills", "repeat": "every day until today"},
    )
    assert error.kind == "retry"
    assert error.details["field"] == "repeat"
    assert await kit.agenda.reminders("ada") == []
