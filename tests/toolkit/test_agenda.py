"""schedule_reminder and track_task on a real SQLite memory store, with a clock the test
moves."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import anyio
import pytest

from satchel.builtin import render_context
from satchel.memory import BlockKind
from satchel.toolkit import ToolkitConfig
from satchel.toolkit._agenda import agenda_tools
from satchel.toolkit._agenda_store import MemoryAgenda, Reminder
from satchel.toolkit._reminders import deliver_reminders
from satchel.tools import ToolContext

from .agenda_kit import PARIS, START, Setup

pytestmark = pytest.mark.anyio


async def test_a_reminder_in_two_hours_is_due_two_hours_later_in_the_users_zone(kit: Setup) -> None:
    out = await kit.ok(
        "schedule_reminder", {"operation": "schedule", "message": "Stretch", "when": "in 2 hours"}
    )
    [view] = out.reminders
    assert view.due == START + timedelta(hours=2)
    assert view.due.utcoffset() == timedelta(hours=2)
    assert view.status == "scheduled"
    assert "Stretch" not in await render_context(kit.store, "ada")


async def test_a_due_reminder_is_in_working_memory_and_the_conversation(kit: Setup) -> None:
    out = await kit.ok(
        "schedule_reminder", {"operation": "schedule", "message": "Call Bob", "when": "at 11am"}
    )
    reminder_id = out.reminders[0].reminder_id
    assert await kit.agenda.fire_due("ada") == []
    kit.clock.now = START + timedelta(hours=1, seconds=1)
    listed = await kit.ok("schedule_reminder", {"operation": "list"})
    assert [(r.reminder_id, r.status) for r in listed.reminders] == [(reminder_id, "due")]
    context = await render_context(kit.store, "ada")
    working = context.split("<working_memory>")[1].split("</working_memory>")[0]
    assert "Call Bob" in working
    assert f"reminder_{reminder_id}" in working
    [message] = await kit.store.list_messages("ada")
    assert message.role == "system"
    assert message.content == "Reminder (due 2026-10-21 11:00 CEST): Call Bob"
    assert await kit.agenda.fire_due("ada") == []  # delivered once
    dismissed = await kit.ok(
        "schedule_reminder", {"operation": "dismiss", "reminder_id": reminder_id}
    )
    assert dismissed.reminders == []
    assert "Call Bob" not in await render_context(kit.store, "ada")


async def test_a_repeating_reminder_comes_back_at_the_same_wall_time_after_dst(kit: Setup) -> None:
    out = await kit.ok(
        "schedule_reminder",
        {"operation": "schedule", "message": "Standup", "repeat": "every Monday at 9"},
    )
    first = out.reminders[0]
    assert first.due == datetime(2026, 10, 26, 9, 0, tzinfo=PARIS)  # CET, after the change
    assert first.repeat is not None
    kit.clock.now = datetime(2026, 10, 26, 9, 0, 30, tzinfo=PARIS)
    [fired] = await kit.agenda.fire_due("ada")
    assert fired.id == first.reminder_id
    [after] = await kit.agenda.reminders("ada")
    assert after.status == "due"
    assert after.local_due() == datetime(2026, 11, 2, 9, 0, tzinfo=PARIS)
    back = await kit.ok(
        "schedule_reminder", {"operation": "dismiss", "reminder_id": first.reminder_id}
    )
    assert [(r.status, r.due) for r in back.reminders] == [
        ("scheduled", datetime(2026, 11, 2, 9, 0, tzinfo=PARIS))
    ]
    block = await kit.store.get_block("ada", f"reminder_{first.reminder_id}")
    assert block.kind is BlockKind.ARCHIVAL


async def test_a_reminder_for_a_whole_day_rings_at_nine(kit: Setup) -> None:
    out = await kit.ok(
        "schedule_reminder", {"operation": "schedule", "message": "Bins", "when": "tomorrow"}
    )
    assert out.reminders[0].due == datetime(2026, 10, 22, 9, 0, tzinfo=PARIS)


async def test_cancel_removes_a_reminder_and_an_unknown_id_is_a_retry(kit: Setup) -> None:
    out = await kit.ok(
        "schedule_reminder", {"operation": "schedule", "message": "Tea", "when": "in 5 minutes"}
    )
    rid = out.reminders[0].reminder_id
    await kit.ok("schedule_reminder", {"operation": "cancel", "reminder_id": rid})
    assert (await kit.ok("schedule_reminder", {"operation": "list"})).reminders == []
    error = await kit.error("schedule_reminder", {"operation": "cancel", "reminder_id": rid})
    assert error.kind == "retry"
    assert error.details["reminder_id"] == rid


@pytest.mark.parametrize(
    ("args", "field"),
    [
        ({"when": "yesterday at 9am"}, "when"),
        ({"when": "2026-10-01T08:00:00+02:00"}, "when"),
        ({"when": "when pigs fly"}, "when"),
        ({"repeat": "now and then"}, "repeat"),
        ({}, "when"),
    ],
)
async def test_a_time_that_cannot_be_scheduled_is_a_retry_and_stores_nothing(
    kit: Setup, args: dict[str, str], field: str
) -> None:
    error = await kit.error("schedule_reminder", {"operation": "schedule", "message": "x", **args})
    assert error.kind == "retry"
    assert error.details["field"] == field
    assert await kit.agenda.reminders("ada") == []


async def test_the_delivery_loop_fires_due_reminders_and_wakes_for_new_ones(kit: Setup) -> None:
    fired: list[tuple[str, Reminder]] = []
    arrived = anyio.Event()

    async def notify(agent: str, reminder: Reminder) -> None:
        fired.append((agent, reminder))
        arrived.set()

    await kit.ok(
        "schedule_reminder", {"operation": "schedule", "message": "One", "when": "in 1 minute"}
    )
    kit.clock.now = START + timedelta(minutes=2)
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            tg.start_soon(
                lambda: deliver_reminders(kit.agenda, ["ada"], notify=notify, max_wait=3600)
            )
            await arrived.wait()
            arrived = anyio.Event()
            # A reminder due now, scheduled while the loop waits, is delivered at once.
            await kit.ok(
                "schedule_reminder", {"operation": "schedule", "message": "Two", "when": "now"}
            )
            await arrived.wait()
            tg.cancel_scope.cancel()
    assert [(a, r.message) for a, r in fired] == [("ada", "One"), ("ada", "Two")]


async def test_a_task_is_created_broken_down_progressed_listed_and_completed(kit: Setup) -> None:
    made = await kit.ok(
        "track_task",
        {"operation": "create", "title": "Plan offsite", "steps": ["Pick a date"], "due": "Friday"},
    )
    [task] = made.tasks
    assert task.status == "todo"
    assert task.due == datetime(2026, 10, 23, 0, 0, tzinfo=PARIS)
    more = await kit.ok(
        "track_task",
        {"operation": "break_down", "task_id": task.id, "steps": ["Book venue", "Invite"]},
    )
    assert [s.text for s in more.tasks[0].steps] == ["Pick a date", "Book venue", "Invite"]
    step = await kit.ok("track_task", {"operation": "update", "task_id": task.id, "step": 1})
    assert step.tasks[0].status == "in_progress"
    assert [s.done for s in step.tasks[0].steps] == [True, False, False]
    assert "1/3" in step.message
    blocked = await kit.ok(
        "track_task",
        {"operation": "update", "task_id": task.id, "status": "blocked", "notes": "venue?"},
    )
    assert (blocked.tasks[0].status, blocked.tasks[0].notes) == ("blocked", "venue?")
    other = await kit.ok("track_task", {"operation": "create", "title": "Expenses"})
    done = await kit.ok("track_task", {"operation": "complete", "task_id": task.id})
    assert done.tasks[0].status == "done"
    assert all(s.done for s in done.tasks[0].steps)
    open_tasks = await kit.ok("track_task", {"operation": "list"})
    assert [t.id for t in open_tasks.tasks] == [other.tasks[0].id]
    finished = await kit.ok("track_task", {"operation": "list", "status": "done"})
    assert [t.title for t in finished.tasks] == ["Plan offsite"]


@pytest.mark.parametrize(
    "args",
    [
        {"operation": "update", "task_id": "nope", "status": "done"},
        {"operation": "complete", "task_id": "nope"},
        {"operation": "break_down", "task_id": "nope", "steps": ["a"]},
    ],
)
async def test_an_unknown_task_id_is_a_retry(kit: Setup, args: dict[str, Any]) -> None:
    error = await kit.error("track_task", args)
    assert error.kind == "retry"
    assert error.details["task_id"] == "nope"


async def test_a_step_out_of_range_or_an_empty_update_is_a_retry_and_changes_nothing(
    kit: Setup,
) -> None:
    made = await kit.ok("track_task", {"operation": "create", "title": "T", "steps": ["a"]})
    task_id = made.tasks[0].id
    assert (
        await kit.error("track_task", {"operation": "update", "task_id": task_id, "step": 2})
    ).kind == "retry"
    assert (
        await kit.error("track_task", {"operation": "update", "task_id": task_id})
    ).kind == "retry"
    [task] = await kit.agenda.tasks("ada")
    assert (task.status, [s.done for s in task.steps]) == ("todo", [False])


async def test_agenda_tools_without_a_store_are_none(tmp_path: Path) -> None:
    assert agenda_tools(ToolkitConfig(data_dir=tmp_path), store=None) == []


async def test_agents_never_see_each_others_reminders(kit: Setup) -> None:
    await kit.ok(
        "schedule_reminder", {"operation": "schedule", "message": "Mine", "when": "in 1 hour"}
    )
    result = await kit.tools.call(
        "schedule_reminder", {"operation": "list"}, ToolContext(agent="bob")
    )
    assert result.ok
    assert result.output.reminders == []
    assert kit.clock.now.tzinfo is not None
    assert (await kit.agenda.next_due("ada")) == (START + timedelta(hours=1)).astimezone(UTC)


async def test_two_processes_delivering_at_once_deliver_a_reminder_once(kit: Setup) -> None:
    await kit.ok("schedule_reminder", {"operation": "schedule", "message": "Once", "when": "now"})
    other = MemoryAgenda(kit.store, clock=kit.clock)  # another process on the same memory
    kit.clock.now = START + timedelta(minutes=1)
    results: list[list[Reminder]] = []

    async def fire(agenda: MemoryAgenda) -> None:
        results.append(await agenda.fire_due("ada"))

    async with anyio.create_task_group() as tg:
        tg.start_soon(fire, kit.agenda)
        tg.start_soon(fire, other)
    assert sorted(len(r) for r in results) == [0, 1]
    messages = await kit.store.list_messages("ada")
    assert [m.content for m in messages] == ["Reminder (due 2026-10-21 10:00 CEST): Once"]


async def test_a_failing_notifier_does_not_stop_delivery(kit: Setup) -> None:
    seen: list[str] = []
    second = anyio.Event()

    async def notify(agent: str, reminder: Reminder) -> None:
        seen.append(reminder.message)
        if reminder.message == "First":
            raise RuntimeError("the client went away")
        second.set()

    await kit.ok("schedule_reminder", {"operation": "schedule", "message": "First", "when": "now"})
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            tg.start_soon(
                lambda: deliver_reminders(kit.agenda, ["ada"], notify=notify, max_wait=3600)
            )
            await kit.ok(
                "schedule_reminder", {"operation": "schedule", "message": "Second", "when": "now"}
            )
            await second.wait()
            tg.cancel_scope.cancel()
    assert sorted(seen) == ["First", "Second"]


async def test_counts_in_messages_agree_with_their_number(kit: Setup) -> None:
    await kit.ok(
        "schedule_reminder", {"operation": "schedule", "message": "Stretch", "when": "in 2 hours"}
    )
    one = await kit.ok("schedule_reminder", {"operation": "list"})
    made = await kit.ok("track_task", {"operation": "create", "title": "Expenses"})
    task_id = made.tasks[0].id
    one_task = await kit.ok("track_task", {"operation": "list"})
    one_step = await kit.ok(
        "track_task", {"operation": "break_down", "task_id": task_id, "steps": ["Receipts"]}
    )
    await kit.ok(
        "schedule_reminder", {"operation": "schedule", "message": "Walk", "when": "in 3 hours"}
    )
    two = await kit.ok("schedule_reminder", {"operation": "list"})

    assert one.message.startswith("1 reminder, ")
    assert one_task.message == "1 task."
    assert one_step.message == f"Task {task_id} now has 1 step."
    assert two.message.startswith("2 reminders, ")


async def _daily_at_nine(kit: Setup) -> str:
    out = await kit.ok(
        "schedule_reminder",
        {"operation": "schedule", "message": "Pills", "repeat": "every day at 9am"},
    )
    [view] = out.reminders
    assert view.due == datetime(2026, 10, 22, 9, 0, tzinfo=PARIS)
    return view.reminder_id


async def test_a_daily_reminder_never_dismissed_fires_at_every_occurrence(kit: Setup) -> None:
    reminder_id = await _daily_at_nine(kit)
    for day in (22, 23, 24):
        kit.clock.now = datetime(2026, 10, day, 9, 0, 2, tzinfo=PARIS)
        [fired] = await kit.agenda.fire_due("ada")
        assert (fired.id, fired.local_due(), fired.late) == (
            reminder_id,
            datetime(2026, 10, day, 9, 0, tzinfo=PARIS),
            False,
        )
        assert await kit.agenda.fire_due("ada") == []  # once per occurrence
    messages = [m.content for m in await kit.store.list_messages("ada")]
    assert messages == [f"Reminder (due 2026-10-{d} 09:00 CEST): Pills" for d in (22, 23, 24)]
    [left] = await kit.agenda.reminders("ada")
    assert (left.status, left.times_fired) == ("due", 3)
    assert left.local_due() == datetime(2026, 10, 25, 9, 0, tzinfo=PARIS)


async def test_a_dismissal_after_a_missed_occurrence_fires_nothing_stale(kit: Setup) -> None:
    reminder_id = await _daily_at_nine(kit)
    kit.clock.now = datetime(2026, 10, 22, 9, 0, 2, tzinfo=PARIS)
    assert len(await kit.agenda.fire_due("ada")) == 1
    # nothing delivers on the 23rd at 9; the person dismisses it at noon
    kit.clock.now = datetime(2026, 10, 23, 12, 0, tzinfo=PARIS)
    back = await kit.ok("schedule_reminder", {"operation": "dismiss", "reminder_id": reminder_id})
    assert [(r.status, r.due) for r in back.reminders] == [
        ("scheduled", datetime(2026, 10, 24, 9, 0, tzinfo=PARIS))
    ]
    assert await kit.agenda.fire_due("ada") == []
    assert await kit.agenda.next_due("ada") == datetime(2026, 10, 24, 9, 0, tzinfo=PARIS)


async def test_a_reminder_in_twenty_seconds_keeps_its_seconds(kit: Setup) -> None:
    kit.clock.now = START + timedelta(seconds=5)
    out = await kit.ok(
        "schedule_reminder", {"operation": "schedule", "message": "Kettle", "when": "in 20 seconds"}
    )
    assert out.reminders[0].due == START + timedelta(seconds=25)
    assert "10:00:25" in out.message
    kit.clock.now = START + timedelta(seconds=24)
    assert await kit.agenda.fire_due("ada") == []
    kit.clock.now = START + timedelta(seconds=25)
    [fired] = await kit.agenda.fire_due("ada")
    assert fired.message == "Kettle"
    [message] = await kit.store.list_messages("ada")
    assert message.content == "Reminder (due 2026-10-21 10:00:25 CEST): Kettle"


async def test_reminders_missed_while_nothing_ran_fire_once_at_start_marked_late(
    kit: Setup,
) -> None:
    await _daily_at_nine(kit)
    await kit.ok(
        "schedule_reminder", {"operation": "schedule", "message": "Call Bob", "when": "at 11am"}
    )
    kit.clock.now = datetime(2026, 10, 25, 8, 0, tzinfo=PARIS)  # three days later, at start
    fired = await kit.agenda.fire_due("ada")
    assert sorted((r.message, r.late) for r in fired) == [("Call Bob", True), ("Pills", True)]
    messages = sorted(m.content for m in await kit.store.list_messages("ada"))
    assert messages == [
        "Late reminder (was due 2026-10-21 11:00 CEST): Call Bob",
        "Late reminder (was due 2026-10-22 09:00 CEST, missed 3 times): Pills",
    ]
    assert [m.metadata["late"] for m in await kit.store.list_messages("ada")] == [True, True]
    assert await kit.agenda.fire_due("ada") == []
    assert await kit.agenda.next_due("ada") == datetime(2026, 10, 25, 9, 0, tzinfo=PARIS)


async def test_a_repeating_reminder_starts_on_its_rules_first_day(kit: Setup) -> None:
    out = await kit.ok(
        "schedule_reminder",
        {
            "operation": "schedule",
            "message": "Timesheet",
            "when": "Saturday at 10am",
            "repeat": "every other Friday",
        },
    )
    assert out.reminders[0].due == datetime(2026, 10, 30, 10, 0, tzinfo=PARIS)
