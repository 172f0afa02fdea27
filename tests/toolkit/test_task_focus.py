"""track_task for a person who finds starting hard: estimates, priorities, a due date's
reminder, one gentle nudge when overdue, the next step highlighted, lists by due date
then priority, one next action that fits the time, and open tasks in context."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import anyio
import pytest

from satchel.builtin import render_context
from satchel.toolkit._agenda_store import Reminder
from satchel.toolkit._reminders import deliver_reminders

from .agenda_kit import PARIS, START, Setup

pytestmark = pytest.mark.anyio


async def _create(kit: Setup, **args: Any) -> Any:
    out = await kit.ok("track_task", {"operation": "create", **args})
    return out.tasks[0]


def _working(context: str) -> str:
    return context.split("<working_memory>")[1].split("</working_memory>")[0]


async def test_a_due_time_sets_a_reminder_the_estimate_before_it(kit: Setup) -> None:
    task = await _create(
        kit, title="Write report", due="today at 3pm", estimate_minutes=45, priority="high"
    )
    assert (task.estimate_minutes, task.priority) == (45, "high")
    [reminder] = await kit.agenda.reminders("ada")
    assert reminder.id == task.reminder_id
    assert reminder.task_id == task.id
    assert reminder.local_due() == datetime(2026, 10, 21, 14, 15, tzinfo=PARIS)
    assert reminder.message == "Task due: Write report"
    moved = await kit.ok(
        "track_task", {"operation": "update", "task_id": task.id, "due": "tomorrow"}
    )
    [again] = await kit.agenda.reminders("ada")
    assert again.id == moved.tasks[0].reminder_id != reminder.id
    assert again.local_due() == datetime(2026, 10, 22, 9, 0, tzinfo=PARIS)  # a due day: 9am
    await kit.ok("track_task", {"operation": "complete", "task_id": task.id})
    assert await kit.agenda.reminders("ada") == []


async def test_an_overdue_task_is_marked_and_nudged_once(kit: Setup) -> None:
    task = await _create(kit, title="Pay rent", due="today at 11am", steps=["Log in", "Pay"])
    kit.clock.now = START + timedelta(hours=1, seconds=30)  # 11:00:30
    fired = await kit.agenda.fire_due("ada")
    nudges = [r for r in fired if r.message.startswith("Gentle nudge")]
    assert [r.task_id for r in nudges] == [task.id]
    assert nudges[0].message == (
        "Gentle nudge: 'Pay rent' was due Wed 2026-10-21 11:00. No pressure: offer to pick "
        "a new time or just the next small step: Log in."
    )
    [marked] = await kit.agenda.tasks("ada")
    assert marked.overdue_since == (START + timedelta(hours=1, seconds=30)).astimezone(UTC)
    assert "OVERDUE" in _working(await render_context(kit.store, "ada"))
    for minutes in (5, 60, 600):  # later looks nudge no more
        kit.clock.now = START + timedelta(hours=1, minutes=minutes)
        assert await kit.agenda.fire_due("ada") == []
    messages = [m for m in await kit.store.list_messages("ada") if "nudge" in m.content]
    assert len(messages) == 1
    assert messages[0].metadata["task_id"] == task.id


async def test_an_overdue_nudge_reaches_the_delivery_loop_once(kit: Setup) -> None:
    await _create(kit, title="Call the bank", due="today at 10am")
    kit.clock.now = START + timedelta(minutes=5)
    seen: list[Reminder] = []
    arrived = anyio.Event()

    async def notify(agent: str, reminder: Reminder) -> None:
        seen.append(reminder)
        arrived.set()

    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            tg.start_soon(lambda: deliver_reminders(kit.agenda, ["ada"], notify=notify))
            await arrived.wait()
            await kit.agenda.fire_due("ada")  # another look: nothing more
            tg.cancel_scope.cancel()
    assert [r.message.split(":")[0] for r in seen] == ["Gentle nudge"]


async def test_open_tasks_are_in_context_by_due_date_then_priority_next_step_highlighted(
    kit: Setup,
) -> None:
    await _create(kit, title="Someday", priority="high")
    await _create(kit, title="Low Friday", due="Friday", priority="low")
    await _create(kit, title="High Friday", due="Friday", priority="high")
    soon = await _create(kit, title="Tax form", due="tomorrow", steps=["Find papers", "Sign"])
    await kit.ok("track_task", {"operation": "update", "task_id": soon.id, "step": 1})
    listed = await kit.ok("track_task", {"operation": "list"})
    assert [t.title for t in listed.tasks] == ["Tax form", "High Friday", "Low Friday", "Someday"]
    working = _working(await render_context(kit.store, "ada", kit.tools))
    lines = [line for line in working.splitlines() if line.startswith("- [")]
    assert [line.split("] ")[1].split(" · ")[0] for line in lines] == [
        "Tax form",
        "High Friday",
        "Low Friday",
        "Someday",
    ]
    assert "▶ next step 2: Sign (1/2)" in lines[0]
    context = await render_context(kit.store, "ada", kit.tools)
    rules = context.split("<tool_rules>")[1]
    assert "track_task: Open tasks are in your working memory (open_tasks)" in rules
    for task in listed.tasks:
        await kit.ok("track_task", {"operation": "complete", "task_id": task.id})
    assert "open_tasks" not in await render_context(kit.store, "ada")


async def test_next_gives_one_action_that_fits_the_minutes_available(kit: Setup) -> None:
    big = await _create(
        kit, title="Clean kitchen", due="tomorrow", estimate_minutes=60, steps=["Dishes", "Floor"]
    )
    small = await _create(kit, title="Reply to Sam", due="Friday", estimate_minutes=10)
    stuck = await _create(kit, title="Stuck", due="today at 5pm", estimate_minutes=5)
    await kit.ok("track_task", {"operation": "update", "task_id": big.id, "step": 1})
    await kit.ok("track_task", {"operation": "update", "task_id": stuck.id, "status": "blocked"})

    any_time = await kit.ok("track_task", {"operation": "next"})
    assert any_time.next_action.model_dump() == {
        "task_id": big.id,
        "text": "Floor",
        "step": 2,
        "minutes": 60,
        "fits": True,
    }
    half_hour = await kit.ok("track_task", {"operation": "next", "minutes_available": 30})
    assert (half_hour.next_action.task_id, half_hour.next_action.text) == (
        small.id,
        "Reply to Sam",
    )
    assert half_hour.message == "Do this now: 'Reply to Sam' (~10 min)."
    five = await kit.ok("track_task", {"operation": "next", "minutes_available": 5})
    assert (five.next_action.task_id, five.next_action.fits) == (small.id, False)
    assert "Nothing open fits in 5 minutes" in five.message


async def test_next_with_nothing_open_says_so(kit: Setup) -> None:
    out = await kit.ok("track_task", {"operation": "next", "minutes_available": 15})
    assert (out.next_action, out.tasks) == (None, [])
    assert out.message == "No open task can move now."


async def test_a_due_date_is_shown_in_the_users_zone(kit: Setup) -> None:
    task = await _create(kit, title="Dentist form", due="tomorrow at 4pm")
    assert task.due.isoformat() == "2026-10-22T16:00:00+02:00"
    moved = await kit.ok(
        "track_task", {"operation": "update", "task_id": task.id, "due": "Friday at 10am"}
    )
    assert moved.tasks[0].due.isoformat() == "2026-10-23T10:00:00+02:00"
