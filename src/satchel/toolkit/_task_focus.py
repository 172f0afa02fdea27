"""What to do next among tracked tasks, for a person who finds starting hard: the order
tasks are shown in, each task's next step, when a task is overdue, the one action that
fits the time there is, and the open-tasks block the agent keeps in its context.

Pure functions over :class:`~satchel.toolkit._agenda_store.TrackedTask`; the agenda does
the reading and writing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo

if TYPE_CHECKING:
    from satchel.toolkit._agenda_store import TrackedTask

__all__ = [
    "OPEN_TASKS_LABEL",
    "Action",
    "actions_in_order",
    "due_reminder_time",
    "nudge_text",
    "open_tasks_text",
    "order_key",
    "overdue_at",
    "pick_next",
]

OPEN_TASKS_LABEL = "open_tasks"
"""The working block that lists an agent's open tracked tasks."""

_PRIORITY_RANK = {"high": 0, "normal": 1, "low": 2}
_LAST = datetime.max.replace(tzinfo=UTC)


def order_key(task: TrackedTask) -> tuple[datetime, int, datetime]:
    """Soonest due first (no due date last), then higher priority, then oldest."""
    return (task.due or _LAST, _PRIORITY_RANK[task.priority], task.created_at)


def overdue_at(task: TrackedTask) -> datetime | None:
    """When ``task`` becomes overdue: its due moment, or the end of its due day."""
    if task.due is None:
        return None
    return task.due + timedelta(days=1) if task.due_all_day else task.due


def due_reminder_time(task: TrackedTask, zone: ZoneInfo) -> datetime | None:
    """When the reminder of ``task``'s due date rings: 09:00 on a due day; for a due
    time, early enough to do it (the estimate before), else at the time."""
    if task.due is None:
        return None
    if task.due_all_day:
        day = task.due.astimezone(zone).date()
        return datetime(day.year, day.month, day.day, 9, tzinfo=zone).astimezone(UTC)
    return task.due - timedelta(minutes=task.estimate_minutes or 0)


@dataclass(frozen=True, kw_only=True, slots=True)
class Action:
    """One thing to do now.

    Attributes:
        task: The task it belongs to.
        text: The next step, or the task's title when it has no steps left.
        step: The step's number (from 1), or ``None`` for the task itself.
        minutes: Its estimate: the task's remaining estimate shared among its steps
            still to do; ``None`` without an estimate.
    """

    task: TrackedTask
    text: str
    step: int | None
    minutes: int | None


def _action(task: TrackedTask) -> Action:
    left = [i for i, s in enumerate(task.steps, start=1) if not s.done]
    minutes = task.estimate_minutes
    if not left:
        return Action(task=task, text=task.title, step=None, minutes=minutes)
    share = None if minutes is None else math.ceil(minutes / len(left))
    return Action(task=task, text=task.steps[left[0] - 1].text, step=left[0], minutes=share)


def actions_in_order(tasks: list[TrackedTask]) -> list[Action]:
    """The next action of each task that can move (not done, not blocked), in order."""
    ready = sorted((t for t in tasks if t.status not in ("done", "blocked")), key=order_key)
    return [_action(t) for t in ready]


def pick_next(
    tasks: list[TrackedTask], minutes_available: int | None
) -> tuple[Action | None, bool]:
    """The one action to do now and whether it fits ``minutes_available``.

    The first action in order that fits (or has no estimate) wins; when none fits, the
    shortest one comes back with ``False``. ``(None, False)`` when nothing is open.
    """
    actions = actions_in_order(tasks)
    if not actions:
        return None, False
    if minutes_available is None:
        return actions[0], True
    for action in actions:
        if action.minutes is not None and action.minutes <= minutes_available:
            return action, True
    for action in actions:
        if action.minutes is None:
            return action, True
    return min(actions, key=lambda a: a.minutes or 0), False


def _when(moment: datetime, zone: ZoneInfo, all_day: bool) -> str:
    local = moment.astimezone(zone)
    return f"{local:%a %Y-%m-%d}" if all_day else f"{local:%a %Y-%m-%d %H:%M}"


def nudge_text(task: TrackedTask, zone: ZoneInfo) -> str:
    """The one gentle nudge about an overdue task."""
    assert task.due is not None
    step = _action(task)
    small = f" or just the next small step: {step.text}" if step.step is not None else ""
    return (
        f"Gentle nudge: '{task.title}' was due {_when(task.due, zone, task.due_all_day)}. "
        f"No pressure: offer to pick a new time{small}."
    )


def open_tasks_text(tasks: list[TrackedTask], zone: ZoneInfo, now: datetime) -> str:
    """The open-tasks block: one line a task, soonest due first, overdue ones marked,
    each task's next step highlighted with ▶."""
    lines: list[str] = []
    for task in sorted((t for t in tasks if t.status != "done"), key=order_key):
        parts = [f"[{task.id}] {task.title}"]
        if task.due is not None:
            late = (at := overdue_at(task)) is not None and now >= at
            mark = " OVERDUE" if late else ""
            parts.append(f"due {_when(task.due, zone, task.due_all_day)}{mark}")
        if task.priority != "normal":
            parts.append(f"{task.priority} priority")
        if task.estimate_minutes is not None:
            parts.append(f"~{task.estimate_minutes} min")
        if task.status != "todo":
            parts.append(task.status)
        action = _action(task)
        if action.step is not None:
            done = sum(s.done for s in task.steps)
            parts.append(f"▶ next step {action.step}: {action.text} ({done}/{len(task.steps)})")
        lines.append("- " + " · ".join(parts))
    return "\n".join(lines)
