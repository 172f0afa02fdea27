"""``schedule_reminder`` and ``track_task``: the agent's own reminders and tasks, kept in
its memory store (:class:`~satchel.toolkit._agenda_store.MemoryAgenda`)."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from datetime import datetime
from typing import Annotated, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from satchel._counts import counted
from satchel._errors import ToolRetry
from satchel.memory import MemoryStore
from satchel.toolkit._agenda_store import (
    MemoryAgenda,
    Priority,
    Reminder,
    TaskStatus,
    TrackedTask,
    at_reminder_time,
    next_occurrence,
    shown,
    within,
)
from satchel.toolkit._config import ToolkitConfig
from satchel.toolkit._dates import DateReader, When
from satchel.toolkit._recurrence import read_recurrence
from satchel.toolkit._task_focus import Action, order_key, pick_next
from satchel.tools import BaseTool, Tool, ToolAnnotations, ToolContext

__all__ = [
    "ReminderOutput",
    "ReminderView",
    "ScheduleReminderTool",
    "TaskOutput",
    "TrackTaskTool",
    "agenda_tools",
]

logger = logging.getLogger("satchel.toolkit.agenda")

_READ = ToolAnnotations(read_only=True, destructive=False, idempotent=True)
_WRITE = ToolAnnotations(read_only=False, destructive=False, idempotent=False)
_ID = Field(min_length=1, max_length=32, description="The id that schedule or list gave.")


class _Op(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ReminderSchedule(_Op):
    """Schedule a reminder for yourself."""

    operation: Literal["schedule"]
    message: str = Field(min_length=1, max_length=2000, description="What to remind of.")
    when: str | None = Field(
        default=None,
        max_length=120,
        description="When, in the user's words or ISO: 'in 20 minutes', 'tomorrow at "
        "9am', 'Friday end of day', '2026-12-01T08:00'. Leave out when repeat names it.",
    )
    repeat: str | None = Field(
        default=None,
        max_length=120,
        description="Repeat it: 'every day at 8am', 'every Monday at 9', 'every other "
        "Friday at 4pm', 'weekly'.",
    )


class ReminderList(_Op):
    """List your reminders (delivering any that are due)."""

    operation: Literal["list"]


class ReminderCancel(_Op):
    """Cancel a reminder for good (a repeating one stops)."""

    operation: Literal["cancel"]
    reminder_id: str = _ID


class ReminderDismiss(_Op):
    """Dismiss a due reminder once handled (a repeating one waits for its next time)."""

    operation: Literal["dismiss"]
    reminder_id: str = _ID


ReminderOperation = Annotated[
    ReminderSchedule | ReminderList | ReminderCancel | ReminderDismiss,
    Field(discriminator="operation"),
]


class ReminderView(BaseModel):
    """A reminder as the agent sees it (times in the user's zone)."""

    reminder_id: str
    message: str
    due: datetime = Field(description="When it (next) falls due, in the user's zone.")
    repeat: str | None = Field(description="The RRULE of a repeating reminder.")
    status: Literal["scheduled", "due"]


def _view(reminder: Reminder) -> ReminderView:
    return ReminderView(
        reminder_id=reminder.id,
        message=reminder.message,
        due=reminder.local_due(),
        repeat=reminder.repeat,
        status=reminder.status,
    )


class ReminderOutput(BaseModel):
    """What a ``schedule_reminder`` operation did."""

    message: str
    reminders: list[ReminderView]


class ScheduleReminderTool(Tool[ReminderOperation, ReminderOutput]):
    """The ``schedule_reminder`` tool.

    Args:
        agenda: Where reminders are kept.
        reader: Reads the user's date words, in the user's zone.
    """

    name = "schedule_reminder"
    description = (
        "Your own reminders, to nudge yourself (the assistant) later; not the user's "
        "calendar events or to-do list. Schedule one ('in 2 hours', 'every Monday at "
        "9'), list them, cancel one, or dismiss one that is due. A due reminder appears "
        "in your working memory and as a system message in the conversation."
    )
    summary = "Remind yourself (the assistant) later: schedule, list, cancel, dismiss."
    usage_rule = "When a reminder is in your working memory, act on it, then dismiss it."
    category = "reminders"
    actions = ("schedule", "read", "write")
    memory_gated = True
    operation_annotations: ClassVar[Mapping[str, ToolAnnotations]] = {
        "schedule": _WRITE,
        "list": _READ,
        "cancel": _WRITE,
        "dismiss": _WRITE,
    }

    def __init__(self, agenda: MemoryAgenda, reader: DateReader) -> None:
        self.agenda = agenda
        self.reader = reader

    async def before_context(self, agent: str) -> None:
        """Move ``agent``'s due reminders into its working memory before an agent
        renders its context (a :class:`~satchel.registry.ContextHook`)."""
        await self.agenda.fire_due(agent)

    async def execute(
        self,
        params: ReminderSchedule | ReminderList | ReminderCancel | ReminderDismiss,
        ctx: ToolContext,
    ) -> ReminderOutput:
        """Run one operation for ``ctx.agent``."""
        agent = ctx.agent
        match params:
            case ReminderSchedule():
                reminder = await self._schedule(agent, params)
                return ReminderOutput(
                    message=f"Reminder {reminder.id} set for "
                    f"{reminder.local_due():%A} {shown(reminder.local_due())}.",
                    reminders=[_view(reminder)],
                )
            case ReminderList():
                fired = await self.agenda.fire_due(agent)
                every = await self.agenda.reminders(agent)
                due = sum(r.status == "due" for r in every)
                note = f" ({counted(len(fired), 'reminder')} just fell due)" if fired else ""
                return ReminderOutput(
                    message=f"{counted(len(every), 'reminder')}, {due} due{note}.",
                    reminders=[_view(r) for r in every],
                )
            case ReminderCancel():
                gone = await self.agenda.cancel(agent, params.reminder_id)
                return ReminderOutput(
                    message=f"Cancelled reminder {gone.id}.", reminders=[_view(gone)]
                )
            case ReminderDismiss():
                left = await self.agenda.dismiss(agent, params.reminder_id)
                if left is None:
                    return ReminderOutput(
                        message=f"Dismissed reminder {params.reminder_id}.", reminders=[]
                    )
                return ReminderOutput(
                    message=f"Dismissed; reminder {left.id} comes back "
                    f"{left.local_due():%A %Y-%m-%d %H:%M %Z}.",
                    reminders=[_view(left)],
                )

    async def _schedule(self, agent: str, params: ReminderSchedule) -> Reminder:
        given = None
        if params.when is not None:
            given = _timed(self.reader.when(params.when, field="when"))
        rule = None
        if params.repeat is not None:
            recurrence = read_recurrence(self.reader, params.repeat, field="repeat", start=given)
            rule = recurrence.rule
            given = _timed(recurrence.first)  # the start, moved onto the rule's first day
        if given is None:
            raise ToolRetry(
                "Say when: give 'when' (e.g. 'in 20 minutes', 'tomorrow at 9am') or "
                "'repeat' (e.g. 'every Monday at 9').",
                details={"field": "when"},
            )
        start = given
        now = self.reader.now()
        if rule is not None and params.when is None and not within(start.start, now):
            # 'daily' said after 09:00: today's time has gone, the first is the next one
            following = next_occurrence(rule, start.start, now, self.reader.zone)
            if following is not None:
                start = When(start=following.astimezone(self.reader.zone), all_day=False)
        if not within(start.start, now):
            field, said = (
                ("when", params.when) if params.when is not None else ("repeat", params.repeat)
            )
            raise ToolRetry(
                f"{said!r} is {start.start:%Y-%m-%d %H:%M %Z}, in the past; give a time to come.",
                details={"field": field, "value": said},
            )
        return await self.agenda.schedule(
            agent, params.message, start.start, self.reader.zone, rule
        )


def _next_message(action: Action, fits: bool, minutes: int | None) -> str:
    size = f" (~{action.minutes} min)" if action.minutes is not None else ""
    what = f"'{action.text}'{size}"
    if action.step is not None:
        what += f", step {action.step} of '{action.task.title}'"
    if not fits:
        return (
            f"Nothing open fits in {minutes} minutes; the shortest next action is {what}. "
            "Offer to break it into smaller steps."
        )
    return f"Do this now: {what}."


def _timed(when: When) -> When:
    """A day alone becomes that day at the reminder hour."""
    return When(start=at_reminder_time(when.start), all_day=False) if when.all_day else when


class TaskCreate(_Op):
    """Start tracking a task, optionally with its steps."""

    operation: Literal["create"]
    title: str = Field(min_length=1, max_length=300)
    notes: str = Field(default="", max_length=5000)
    steps: list[Annotated[str, Field(min_length=1, max_length=500)]] = Field(
        default_factory=list[str], max_length=50, description="The steps, in order."
    )
    due: str | None = Field(
        default=None,
        max_length=120,
        description="When it is due, in the user's words; a reminder is set for it.",
    )
    estimate_minutes: int | None = Field(
        default=None, ge=1, le=10080, description="How long it takes, in minutes."
    )
    priority: Priority = "normal"


_Estimate = Field(default=None, ge=1, le=10080, description="How long it takes, in minutes.")


class TaskBreakDown(_Op):
    """Add steps to a task (after the ones it has)."""

    operation: Literal["break_down"]
    task_id: str = _ID
    steps: list[Annotated[str, Field(min_length=1, max_length=500)]] = Field(
        min_length=1, max_length=50
    )


class TaskUpdate(_Op):
    """Change a task's status or notes, or mark one step done or not done."""

    operation: Literal["update"]
    task_id: str = _ID
    status: TaskStatus | None = None
    notes: str | None = Field(default=None, max_length=5000)
    step: int | None = Field(default=None, ge=1, description="A step's number (from 1).")
    step_done: bool = Field(default=True, description="Mark that step done (or not).")
    due: str | None = Field(
        default=None, max_length=120, description="A new due date, or 'none' to clear it."
    )
    estimate_minutes: int | None = _Estimate
    priority: Priority | None = None


class TaskList(_Op):
    """List tracked tasks."""

    operation: Literal["list"]
    status: TaskStatus | None = Field(default=None, description="Only tasks with this status.")
    include_done: bool = False


class TaskComplete(_Op):
    """Mark a task and all its steps done."""

    operation: Literal["complete"]
    task_id: str = _ID


class TaskNext(_Op):
    """What should I do now? One next action that fits the time available."""

    operation: Literal["next"]
    minutes_available: int | None = Field(
        default=None, ge=1, le=10080, description="How many minutes there are now."
    )


TaskOperation = Annotated[
    TaskCreate | TaskBreakDown | TaskUpdate | TaskList | TaskComplete | TaskNext,
    Field(discriminator="operation"),
]


class NextAction(BaseModel):
    """The one thing to do now."""

    task_id: str
    text: str = Field(description="The next step, or the task itself when it has no steps.")
    step: int | None = Field(description="The step's number (from 1), or null.")
    minutes: int | None = Field(description="Its estimate, in minutes (null: unknown).")
    fits: bool = Field(description="It fits the minutes available.")


class TaskOutput(BaseModel):
    """What a ``track_task`` operation did."""

    message: str
    tasks: list[TrackedTask]
    next_action: NextAction | None = None


class TrackTaskTool(Tool[TaskOperation, TaskOutput]):
    """The ``track_task`` tool.

    Args:
        agenda: Where tracked tasks are kept.
        reader: Reads due dates in the user's words.
    """

    name = "track_task"
    description = (
        "Track your own multi-step work as the assistant (not the user's to-do list): "
        "create a task (with steps), break it down into more steps, update its status "
        "(todo, in_progress, blocked, done) or mark a step done, list tasks, and "
        "complete one. Kept in your memory across conversations. Give estimates in "
        "minutes, a priority and a due date (it sets a reminder; an overdue task is "
        "nudged once); operation next answers 'what should I do now?' with one action "
        "that fits the minutes available."
    )
    summary = "Track your own work as the assistant: steps, status, progress."
    usage_rule = (
        "Open tasks are in your working memory (open_tasks), soonest due first, ▶ on "
        "each next step. When the person asks what to do now, call track_task next with "
        "the minutes they have and offer that one action, small and concrete. A task "
        "nudge (overdue) comes once: be gentle, offer a new time or a smaller step."
    )
    category = "planning"
    actions = ("create", "read", "write")
    memory_gated = True
    operation_annotations: ClassVar[Mapping[str, ToolAnnotations]] = {
        "create": _WRITE,
        "break_down": _WRITE,
        "update": _WRITE,
        "list": _READ,
        "complete": ToolAnnotations(read_only=False, destructive=False, idempotent=True),
        "next": _READ,
    }

    def __init__(self, agenda: MemoryAgenda, reader: DateReader) -> None:
        self.agenda = agenda
        self.reader = reader

    async def execute(
        self,
        params: TaskCreate | TaskBreakDown | TaskUpdate | TaskList | TaskComplete | TaskNext,
        ctx: ToolContext,
    ) -> TaskOutput:
        """Run one operation for ``ctx.agent``."""
        agent = ctx.agent
        match params:
            case TaskCreate():
                due = None if params.due is None else self.reader.when(params.due, field="due")
                task = await self.agenda.create_task(
                    agent,
                    params.title,
                    params.notes,
                    params.steps,
                    due and due.start,
                    due_all_day=due is not None and due.all_day,
                    estimate_minutes=params.estimate_minutes,
                    priority=params.priority,
                    zone=self.reader.zone,
                )
                return TaskOutput(message=f"Tracking task {task.id}.", tasks=[task])
            case TaskBreakDown():
                block, task = await self.agenda.task(agent, params.task_id)
                steps = [*task.steps, *({"text": s} for s in params.steps)]
                task = await self.agenda.save_task(
                    agent, block, TrackedTask.model_validate(task.model_dump() | {"steps": steps})
                )
                return TaskOutput(
                    message=f"Task {task.id} now has {counted(len(task.steps), 'step')}.",
                    tasks=[task],
                )
            case TaskUpdate():
                return await self._update(agent, params)
            case TaskList():
                tasks = await self.agenda.tasks(agent)
                if params.status is not None:
                    tasks = [t for t in tasks if t.status == params.status]
                elif not params.include_done:
                    tasks = [t for t in tasks if t.status != "done"]
                tasks.sort(key=order_key)
                return TaskOutput(message=f"{counted(len(tasks), 'task')}.", tasks=tasks)
            case TaskNext():
                return await self._next(agent, params.minutes_available)
            case TaskComplete():
                block, task = await self.agenda.task(agent, params.task_id)
                done = task.model_copy(
                    update={
                        "status": "done",
                        "steps": [s.model_copy(update={"done": True}) for s in task.steps],
                    }
                )
                task = await self.agenda.save_task(agent, block, done)
                return TaskOutput(message=f"Task {task.id} is done.", tasks=[task])

    async def _next(self, agent: str, minutes: int | None) -> TaskOutput:
        await self.agenda.mark_overdue(agent)
        action, fits = pick_next(await self.agenda.tasks(agent), minutes)
        if action is None:
            return TaskOutput(message="No open task can move now.", tasks=[])
        return TaskOutput(
            message=_next_message(action, fits, minutes),
            tasks=[action.task],
            next_action=NextAction(
                task_id=action.task.id,
                text=action.text,
                step=action.step,
                minutes=action.minutes,
                fits=fits,
            ),
        )

    async def _update(self, agent: str, params: TaskUpdate) -> TaskOutput:
        block, task = await self.agenda.task(agent, params.task_id)
        given = (params.status, params.notes, params.step, params.due)
        given += (params.estimate_minutes, params.priority)
        if all(v is None for v in given):
            raise ToolRetry(
                "Nothing to update: give status, notes, a step number, due, "
                "estimate_minutes or priority.",
                details={"task_id": params.task_id},
            )
        update: dict[str, object] = {}
        if params.due is not None:
            if params.due.strip().lower() in ("", "none"):
                update |= {"due": None, "due_all_day": False}
            else:
                due = self.reader.when(params.due, field="due")
                update |= {"due": due.start, "due_all_day": due.all_day}
        if params.estimate_minutes is not None:
            update["estimate_minutes"] = params.estimate_minutes
        if params.priority is not None:
            update["priority"] = params.priority
        if params.status is not None:
            update["status"] = params.status
        if params.notes is not None:
            update["notes"] = params.notes
        if params.step is not None:
            if params.step > len(task.steps):
                raise ToolRetry(
                    f"Task {task.id} has {counted(len(task.steps), 'step')}; step "
                    f"{params.step} does not exist. Add steps with break_down.",
                    details={"task_id": task.id, "steps": len(task.steps)},
                )
            steps = list(task.steps)
            steps[params.step - 1] = steps[params.step - 1].model_copy(
                update={"done": params.step_done}
            )
            update["steps"] = steps
            if params.status is None and task.status == "todo":
                update["status"] = "in_progress"
        task = await self.agenda.save_task(agent, block, task.model_copy(update=update))
        done = sum(s.done for s in task.steps)
        return TaskOutput(
            message=f"Task {task.id} is {task.status} ({done}/{len(task.steps)} steps done).",
            tasks=[task],
        )


def agenda_tools(
    config: ToolkitConfig | None = None,
    *,
    store: MemoryStore | MemoryAgenda | None = None,
) -> list[BaseTool]:
    """``schedule_reminder`` and ``track_task`` on ``store`` (a memory store, or an
    :class:`MemoryAgenda` over one), reading dates in ``config``'s zone.

    With no store there is nowhere to keep them: the result is empty (the productivity
    toolkit then serves mail, calendar and tasks only).

    Example:
        >>> tools = agenda_tools(ToolkitConfig.load(timezone="Europe/Paris"), store=store)
        >>> [t.spec.name for t in tools]
        ['schedule_reminder', 'track_task']
    """
    if store is None:
        logger.debug("no memory store: schedule_reminder and track_task are left out")
        return []
    agenda = store if isinstance(store, MemoryAgenda) else MemoryAgenda(store)
    config = config if config is not None else ToolkitConfig.load()
    reader = DateReader(config.zone(), now=agenda.now)
    precise = DateReader(config.zone(), now=agenda.now, precise=True)  # "in 20 seconds"
    return [ScheduleReminderTool(agenda, precise), TrackTaskTool(agenda, reader)]
