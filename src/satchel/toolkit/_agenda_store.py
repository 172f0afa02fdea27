"""The agent's own reminders and tracked tasks, kept in its memory store.

Each reminder and each tracked task is one archival block of the agent (label
``reminder_<id>`` or ``task_<id>``, tagged ``reminder`` or ``tracked_task``) whose value is
the record as JSON. Only the public :class:`~satchel.memory.MemoryStore` API is used:
no table of its own, so every backend (SQLite, PostgreSQL, yours) holds them, exports
and imports them, and ``search`` finds them.

A reminder that falls due is *delivered*: its block moves into working memory, where the
rendered context shows it to the agent until it is dismissed (the Letta way: what the
agent must see is in its context), and a system message is added to the conversation.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Callable
from datetime import UTC, datetime, time, timedelta
from typing import Literal, cast
from zoneinfo import ZoneInfo

from pydantic import BaseModel, Field, ValidationError, model_validator

from satchel._errors import AlreadyExistsError, NotFoundError, ToolRetry, VersionConflictError
from satchel.memory import Block, BlockKind, MemoryStore, Permission
from satchel.toolkit._repeat import advance, next_occurrence
from satchel.toolkit._task_focus import (
    OPEN_TASKS_LABEL,
    due_reminder_time,
    nudge_text,
    open_tasks_text,
    overdue_at,
)

__all__ = [
    "REMINDER_TAG",
    "TASK_TAG",
    "MemoryAgenda",
    "Priority",
    "Reminder",
    "Step",
    "TaskStatus",
    "TrackedTask",
    "next_occurrence",
]

logger = logging.getLogger("satchel.toolkit.agenda")

REMINDER_TAG = "reminder"
"""The tag on every reminder block."""
TASK_TAG = "tracked_task"
"""The tag on every tracked-task block."""

TaskStatus = Literal["todo", "in_progress", "blocked", "done"]
"""Where a tracked task stands."""
Priority = Literal["high", "normal", "low"]
"""How much a tracked task matters against the others with the same due date."""

_DUE_DESCRIPTION = (
    "A reminder you scheduled; it is due now. Act on it, then dismiss it with "
    "schedule_reminder (operation dismiss)."
)
_WAITING_DESCRIPTION = "A reminder you scheduled (schedule_reminder); not due yet."
_TASK_DESCRIPTION = "A task you are tracking with track_task."
_OPEN_TASKS_DESCRIPTION = (
    "The open tasks you track with track_task, soonest due first; ▶ marks each task's "
    "next step. Kept up to date for you: change tasks with track_task, not here."
)
_OPEN_TASKS_TAG = "open_tasks"


class Reminder(BaseModel):
    """A reminder the agent scheduled for itself."""

    id: str
    message: str
    due: datetime = Field(description="The next time it falls due (UTC).")
    timezone: str = Field(description="The user's zone when it was scheduled.")
    repeat: str | None = Field(default=None, description="An RRULE, for a repeating one.")
    status: Literal["scheduled", "due"] = "scheduled"
    fired_at: datetime | None = Field(default=None, description="When it last fell due.")
    times_fired: int = 0
    created_at: datetime
    late: bool = Field(
        default=False,
        description="It fell due later than its time (nothing was delivering then); set "
        "on the copy that fire_due returns.",
    )
    task_id: str | None = Field(
        default=None, description="The tracked task it is about (its due date or a nudge)."
    )
    start: datetime | None = Field(
        default=None,
        description="A repeating one's first occurrence, its rule's DTSTART (UTC); null on "
        "a record stored before it was kept.",
    )
    occurrence: int = Field(
        default=1,
        ge=1,
        description="Which occurrence of the rule `due` is (1 for the start): what the "
        "rule's COUNT is counted against.",
    )

    @model_validator(mode="before")
    @classmethod
    def _occurrence_of_older_records(cls, data: object) -> object:
        """A record stored before ``occurrence`` was kept waits for the occurrence after
        the ones it fired (its missed ones, collapsed, are not known)."""
        if not isinstance(data, dict):
            return data
        record = cast(dict[str, object], data)
        fired = record.get("times_fired", 0)
        if "occurrence" not in record and isinstance(fired, int) and fired >= 0:
            return {**record, "occurrence": fired + 1}
        return record

    def local_due(self) -> datetime:
        """:attr:`due` in the user's zone."""
        return self.due.astimezone(ZoneInfo(self.timezone))


class Step(BaseModel):
    """One step of a tracked task."""

    text: str
    done: bool = False


class TrackedTask(BaseModel):
    """A task the agent tracks for itself, broken down into steps."""

    id: str
    title: str
    notes: str = ""
    status: TaskStatus = "todo"
    steps: list[Step] = Field(default_factory=list[Step])
    due: datetime | None = None
    created_at: datetime
    updated_at: datetime
    due_all_day: bool = Field(default=False, description="The due date is a day, not a time.")
    estimate_minutes: int | None = Field(default=None, description="How long it takes.")
    priority: Priority = "normal"
    timezone: str | None = Field(default=None, description="The user's zone at creation.")
    reminder_id: str | None = Field(default=None, description="The due date's reminder.")
    overdue_since: datetime | None = Field(
        default=None, description="When it was found overdue (and nudged, once)."
    )

    def zone(self) -> ZoneInfo:
        """The user's zone (UTC when unknown)."""
        return ZoneInfo(self.timezone or "UTC")


def _pending(reminder: Reminder) -> bool:
    """Whether ``reminder`` waits for a time: a one-off one until it falls due, a
    repeating one always."""
    return reminder.status == "scheduled" or reminder.repeat is not None


def _new_id() -> str:
    return secrets.token_hex(3)


class MemoryAgenda:
    """Reminders and tracked tasks of agents, in ``store``.

    Args:
        store: The memory store.
        clock: The current time (for tests); default the real clock.
        late_after: A reminder delivered more than this after its time is marked late
            (it was missed while nothing was delivering).

    Example:
        >>> agenda = MemoryAgenda(store)
        >>> await agenda.schedule("ada", "Call Bob", due, zone)  # doctest: +SKIP
    """

    def __init__(
        self,
        store: MemoryStore,
        *,
        clock: Callable[[], datetime] | None = None,
        late_after: timedelta = timedelta(minutes=1),
    ) -> None:
        self.store = store
        self._clock = clock
        self.late_after = late_after
        self._listeners: list[Callable[[], None]] = []

    def now(self) -> datetime:
        """The current moment (UTC)."""
        if self._clock is not None:
            return self._clock().astimezone(UTC)
        return datetime.now(UTC)

    def on_change(self, listener: Callable[[], None]) -> None:
        """Call ``listener()`` (no arguments) whenever a reminder is scheduled or changed,
        so a delivery loop can wake up."""
        self._listeners.append(listener)

    def _changed(self) -> None:
        for listener in self._listeners:
            listener()

    # -- reminders ------------------------------------------------------------------

    async def schedule(
        self,
        agent: str,
        message: str,
        due: datetime,
        zone: ZoneInfo,
        repeat: str | None = None,
        *,
        task_id: str | None = None,
    ) -> Reminder:
        """Store a new reminder (``task_id``: the tracked task it is about)."""
        reminder = Reminder(
            id=_new_id(),
            message=message,
            due=due.astimezone(UTC),
            timezone=zone.key,
            repeat=repeat,
            created_at=self.now(),
            task_id=task_id,
            start=None if repeat is None else due.astimezone(UTC),
        )
        await self.store.create_block(
            agent,
            f"reminder_{reminder.id}",
            reminder.model_dump_json(),
            description=_WAITING_DESCRIPTION,
            kind=BlockKind.ARCHIVAL,
            permission=Permission.ADMIN,
            tags=(REMINDER_TAG,),
            metadata={"satchel": "reminder"},
        )
        self._changed()
        return reminder

    async def _listing(self, agent: str) -> list[Block]:
        """``agent``'s own working and archival blocks (one query, shared by the looks
        of one delivery pass)."""
        blocks = await self.store.list_blocks(agent, (BlockKind.WORKING, BlockKind.ARCHIVAL))
        return [b for b in blocks if b.agent == agent]

    async def _records(
        self, agent: str, tag: str, listing: list[Block] | None = None
    ) -> list[tuple[Block, str]]:
        blocks = listing if listing is not None else await self._listing(agent)
        return [(b, b.value) for b in blocks if tag in b.tags]

    async def reminders(self, agent: str, *, _listing: list[Block] | None = None) -> list[Reminder]:
        """Every reminder of ``agent``, soonest first."""
        found: list[Reminder] = []
        for block, value in await self._records(agent, REMINDER_TAG, _listing):
            try:
                found.append(Reminder.model_validate_json(value))
            except ValidationError:
                logger.warning("block %r of %r is not a reminder record", block.label, agent)
        return sorted(found, key=lambda r: r.due)

    async def _reminder(self, agent: str, reminder_id: str) -> tuple[Block, Reminder]:
        label = f"reminder_{reminder_id.strip()}"
        try:
            block = await self.store.get_block(agent, label)
            if REMINDER_TAG not in block.tags:
                raise NotFoundError(label)
            return block, Reminder.model_validate_json(block.value)
        except (NotFoundError, ValidationError) as exc:
            raise ToolRetry(
                f"No reminder has the id {reminder_id!r}; list them with operation list.",
                details={"reminder_id": reminder_id},
            ) from exc

    async def cancel(self, agent: str, reminder_id: str) -> Reminder:
        """Delete a reminder for good (a repeating one stops repeating)."""
        _, reminder = await self._reminder(agent, reminder_id)
        await self.store.delete_block(agent, f"reminder_{reminder.id}")
        self._changed()
        return reminder

    async def dismiss(self, agent: str, reminder_id: str) -> Reminder | None:
        """Take a due reminder out of context: a one-off one is deleted, a repeating one
        goes back to waiting for its next time (an occurrence already past counts as
        handled: it does not fire again stale). Returns the reminder as it now stands
        (``None`` when deleted)."""
        block, reminder = await self._reminder(agent, reminder_id)
        if reminder.repeat is None:
            await self.store.delete_block(agent, block.label)
            self._changed()
            return None
        update: dict[str, object] = {"status": "scheduled"}
        now = self.now()
        if reminder.due <= now:  # the occurrences already past count as handled
            moved = advance(
                reminder.repeat, ZoneInfo(reminder.timezone), reminder.due, reminder.occurrence, now
            )
            if moved.due is None:  # the rule has ended: nothing more to wait for
                await self.store.delete_block(agent, block.label)
                self._changed()
                return None
            update |= {"due": moved.due, "occurrence": moved.occurrence}
        waiting = reminder.model_copy(update=update)
        await self._save(agent, block, waiting, BlockKind.ARCHIVAL)
        return waiting

    async def _save(self, agent: str, block: Block, reminder: Reminder, kind: BlockKind) -> None:
        description = _DUE_DESCRIPTION if kind is BlockKind.WORKING else _WAITING_DESCRIPTION
        updated = await self.store.update_block_text(
            agent,
            block.label,
            reminder.model_dump_json(),
            expected_version=block.version,
            description=description,
        )
        if updated.kind is not kind:
            await self.store.set_kind(agent, block.label, kind)
        self._changed()

    async def next_due(self, agent: str) -> datetime | None:
        """When the next reminder of ``agent`` falls due (a repeating one falls due at
        every occurrence, dismissed or not)."""

        listing = await self._listing(agent)
        waiting = [r.due for r in await self.reminders(agent, _listing=listing) if _pending(r)]
        for task in await self.tasks(agent, _listing=listing):
            moment = overdue_at(task)
            if task.status != "done" and task.overdue_since is None and moment is not None:
                waiting.append(moment)
        return min(waiting, default=None)

    async def fire_due(self, agent: str) -> list[Reminder]:
        """Deliver every reminder of ``agent`` whose time has come: load it into working
        memory (marked due), add a system message to the conversation, and move a
        repeating one's next time on.

        A repeating reminder falls due at every occurrence, whether the last one was
        dismissed or not; occurrences missed while nothing was delivering fire once, and
        a reminder delivered more than :attr:`late_after` after its time is marked late.

        Open tasks whose due date has passed are marked overdue first, and their one
        nudge is delivered with the reminders (:meth:`mark_overdue`).

        Returns the reminders delivered, as they were when they fell due (``late`` set).
        """
        listing = await self._listing(agent)
        if await self.mark_overdue(agent, _listing=listing):
            listing = await self._listing(agent)  # with the nudges just scheduled
        now = self.now()
        fired: list[Reminder] = []
        for block, value in await self._records(agent, REMINDER_TAG, listing):
            try:
                reminder = Reminder.model_validate_json(value)
            except ValidationError:
                continue
            if not _pending(reminder) or reminder.due > now:
                continue
            update: dict[str, object] = {
                "status": "due",
                "fired_at": now,
                "times_fired": reminder.times_fired + 1,
            }
            missed = 1
            if reminder.repeat is not None:  # on to the first occurrence after now
                zone = ZoneInfo(reminder.timezone)
                moved = advance(reminder.repeat, zone, reminder.due, reminder.occurrence, now)
                missed = max(1, moved.passed)
                update["occurrence"] = moved.occurrence
                if moved.due is not None:
                    update["due"] = moved.due
                else:  # COUNT or UNTIL has ended the rule: this was its last occurrence
                    update["repeat"] = None
            try:
                await self._save(
                    agent, block, reminder.model_copy(update=update), BlockKind.WORKING
                )
            except (VersionConflictError, NotFoundError):
                continue  # another process delivered, dismissed or cancelled it meanwhile
            late = now - reminder.due > self.late_after
            local = shown(reminder.local_due())
            heading = f"Reminder (due {local})"
            if late:
                times = f", missed {missed} times" if missed > 1 else ""
                heading = f"Late reminder (was due {local}{times})"
            metadata: dict[str, object] = {"reminder_id": reminder.id, "late": late}
            if missed > 1:
                metadata["missed"] = missed
            if reminder.task_id is not None:
                metadata["task_id"] = reminder.task_id
            await self.store.add_message(
                agent,
                "system",
                f"{heading}: {reminder.message}",
                tags=(REMINDER_TAG,),
                metadata=metadata,
            )
            fired.append(reminder.model_copy(update={"late": late}))
        return fired

    # -- tracked tasks --------------------------------------------------------------

    async def create_task(
        self,
        agent: str,
        title: str,
        notes: str,
        steps: list[str],
        due: datetime | None,
        *,
        due_all_day: bool = False,
        estimate_minutes: int | None = None,
        priority: Priority = "normal",
        zone: ZoneInfo | None = None,
    ) -> TrackedTask:
        """Start tracking a task; a due date schedules its reminder (see
        :func:`~satchel.toolkit._task_focus.due_reminder_time`)."""
        now = self.now()
        task = TrackedTask(
            id=_new_id(),
            title=title,
            notes=notes,
            steps=[Step(text=s) for s in steps],
            due=due,
            created_at=now,
            updated_at=now,
            due_all_day=due_all_day,
            estimate_minutes=estimate_minutes,
            priority=priority,
            timezone=None if zone is None else zone.key,
        )
        task = await self._with_due_reminder(agent, task)
        await self.store.create_block(
            agent,
            f"task_{task.id}",
            task.model_dump_json(),
            description=_TASK_DESCRIPTION,
            kind=BlockKind.ARCHIVAL,
            permission=Permission.ADMIN,
            tags=(TASK_TAG,),
            metadata={"satchel": "tracked_task"},
        )
        await self.refresh_open_tasks(agent)
        return task

    async def tasks(self, agent: str, *, _listing: list[Block] | None = None) -> list[TrackedTask]:
        """Every tracked task of ``agent``, oldest first."""
        found: list[TrackedTask] = []
        for block, value in await self._records(agent, TASK_TAG, _listing):
            try:
                found.append(TrackedTask.model_validate_json(value))
            except ValidationError:
                logger.warning("block %r of %r is not a task record", block.label, agent)
        return sorted(found, key=lambda t: t.created_at)

    async def task(self, agent: str, task_id: str) -> tuple[Block, TrackedTask]:
        """One tracked task and its block.

        Raises:
            ToolRetry: No task has that id.
        """
        label = f"task_{task_id.strip()}"
        try:
            block = await self.store.get_block(agent, label)
            if TASK_TAG not in block.tags:
                raise NotFoundError(label)
            return block, TrackedTask.model_validate_json(block.value)
        except (NotFoundError, ValidationError) as exc:
            raise ToolRetry(
                f"No tracked task has the id {task_id!r}; list them with operation list.",
                details={"task_id": task_id},
            ) from exc

    async def save_task(self, agent: str, block: Block, task: TrackedTask) -> TrackedTask:
        """Write a changed task back (optimistically: a concurrent change is a retry),
        moving or cancelling its due date's reminder to match, and refresh the open-tasks
        block."""
        task = task.model_copy(update={"updated_at": self.now()})
        if task.overdue_since is not None and not self._overdue(task):
            task = task.model_copy(update={"overdue_since": None})  # moved on: nudge again
        task = await self._with_due_reminder(agent, task)
        await self.store.update_block_text(
            agent, block.label, task.model_dump_json(), expected_version=block.version
        )
        await self.refresh_open_tasks(agent)
        return task

    def _overdue(self, task: TrackedTask) -> bool:

        moment = overdue_at(task)
        return task.status != "done" and moment is not None and moment <= self.now()

    async def _with_due_reminder(self, agent: str, task: TrackedTask) -> TrackedTask:
        """``task`` with the reminder of its due date in place: kept when it still rings
        at the right time, else cancelled and (for an open task due later) scheduled."""

        zone = task.zone()
        wanted = None if task.status == "done" else due_reminder_time(task, zone)
        if wanted is not None and wanted <= self.now():
            wanted = None  # too late to remind of it: the overdue nudge takes over
        current = None
        if task.reminder_id is not None:
            try:
                _, current = await self._reminder(agent, task.reminder_id)
            except ToolRetry:
                current = None  # dismissed or cancelled
        if current is not None and wanted is not None and current.due == wanted:
            return task
        if current is not None and current.status == "scheduled":
            await self.cancel(agent, current.id)
        if wanted is None:
            return task.model_copy(update={"reminder_id": None})
        reminder = await self.schedule(
            agent, f"Task due: {task.title}", wanted, zone, task_id=task.id
        )
        return task.model_copy(update={"reminder_id": reminder.id})

    async def mark_overdue(
        self, agent: str, *, _listing: list[Block] | None = None
    ) -> list[TrackedTask]:
        """Mark ``agent``'s open tasks whose due date has passed as overdue, each once,
        and schedule one gentle nudge for each (a reminder due now, delivered as every
        reminder is: the channels pick it up from there). Returns the tasks marked."""
        marked: list[TrackedTask] = []
        now = self.now()
        for block, value in await self._records(agent, TASK_TAG, _listing):
            try:
                task = TrackedTask.model_validate_json(value)
            except ValidationError:
                continue
            if task.overdue_since is not None or not self._overdue(task):
                continue
            task = task.model_copy(update={"overdue_since": now, "updated_at": now})
            try:  # written first: of two processes, only the one that wins nudges
                await self.store.update_block_text(
                    agent, block.label, task.model_dump_json(), expected_version=block.version
                )
            except (VersionConflictError, NotFoundError):
                continue
            await self.schedule(
                agent, nudge_text(task, task.zone()), now, task.zone(), task_id=task.id
            )
            logger.info("task %s of %r is overdue; nudged once", task.id, agent)
            marked.append(task)
        if marked:
            await self.refresh_open_tasks(agent)
        return marked

    async def refresh_open_tasks(self, agent: str) -> None:
        """Write the open-tasks working block (see
        :func:`~satchel.toolkit._task_focus.open_tasks_text`), or remove it when no task
        is open, so the agent always has its open tasks in context."""

        tasks = await self.tasks(agent)
        zone = max(tasks, key=lambda t: t.created_at).zone() if tasks else ZoneInfo("UTC")
        text = open_tasks_text(tasks, zone, self.now())
        for _ in range(3):  # another process may refresh it at the same moment
            try:
                block = await self.store.get_block(agent, OPEN_TASKS_LABEL)
            except NotFoundError:
                if not text:
                    return
                try:
                    await self.store.create_block(
                        agent,
                        OPEN_TASKS_LABEL,
                        text,
                        description=_OPEN_TASKS_DESCRIPTION,
                        kind=BlockKind.WORKING,
                        permission=Permission.ADMIN,
                        tags=(_OPEN_TASKS_TAG,),
                        metadata={"satchel": "open_tasks"},
                    )
                    return
                except AlreadyExistsError:
                    continue
            try:
                if not text:
                    await self.store.delete_block(agent, OPEN_TASKS_LABEL)
                elif block.value != text:
                    await self.store.update_block_text(
                        agent, OPEN_TASKS_LABEL, text, expected_version=block.version
                    )
                if text and block.kind is not BlockKind.WORKING:
                    await self.store.set_kind(agent, OPEN_TASKS_LABEL, BlockKind.WORKING)
                return
            except (VersionConflictError, NotFoundError):
                continue


def shown(moment: datetime) -> str:
    """``moment`` as a reminder message shows it: to the minute, seconds when it has
    some ("in 20 seconds")."""
    seconds = ":%S" if moment.second else ""
    return moment.strftime(f"%Y-%m-%d %H:%M{seconds} %Z")


def at_reminder_time(day_start: datetime) -> datetime:
    """A reminder for a whole day ("tomorrow") rings at 09:00 that day."""
    return datetime.combine(day_start.date(), time(9), tzinfo=day_start.tzinfo)


def within(moment: datetime, now: datetime, slack: timedelta = timedelta(minutes=1)) -> bool:
    """Whether ``moment`` is not in the past (a minute of slack for "now")."""
    return moment >= now - slack
