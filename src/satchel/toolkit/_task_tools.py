"""The task tools, with AgenticPal's names and parameters: ``create_task``,
``update_task``, ``mark_task_complete``, ``mark_task_incomplete``, ``delete_task``,
``list_tasks``, ``get_task_lists``; tasks are iCalendar VTODOs."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from typing import Annotated

import icalendar
from pydantic import BaseModel, Field

from satchel._errors import ToolRetry
from satchel.toolkit._calendar_model import (
    ESTIMATE,
    MAX_TEXT,
    MAX_TITLE,
    TaskItem,
    open_calendar_store,
    task_record,
)
from satchel.toolkit._config import ToolkitConfig
from satchel.toolkit._dates import DateReader
from satchel.toolkit._ical_store import CalendarStore, drop, moment, put
from satchel.tools import BaseTool, tool

__all__ = ["DeletedTask", "TaskList", "TaskListing", "TaskLists", "task_tools"]

TaskId = Annotated[str, Field(min_length=1, max_length=500)]
ListName = Annotated[str | None, Field(max_length=200)]
Minutes = Annotated[int | None, Field(ge=1, le=10080)]


class TaskListing(BaseModel):
    """Tasks: open ones first, by due date, then priority."""

    tasks: list[TaskItem]


class TaskList(BaseModel):
    """One list of tasks."""

    id: str
    title: str


class TaskLists(BaseModel):
    """The user's task lists."""

    task_lists: list[TaskList]


class DeletedTask(BaseModel):
    """What ``delete_task`` removed."""

    deleted: str
    title: str


def _priority(todo: icalendar.Component) -> int:
    """RFC 5545 PRIORITY, 1 (highest) to 9; undefined (0 or missing) counts as 5."""
    raw = str(todo.get("PRIORITY", "0")).strip()
    value = int(raw) if raw.isdigit() else 0
    return value if 1 <= value <= 9 else 5


def _due_key(todo: icalendar.Component) -> tuple[int, str, int]:
    value = moment(todo, "DUE")
    done = str(todo.get("STATUS", "")).upper() == "COMPLETED"
    if not isinstance(value, date):
        return (2 if done else 1, "", _priority(todo))
    text = value.astimezone(UTC).isoformat() if isinstance(value, datetime) else value.isoformat()
    return (2 if done else 0, text, _priority(todo))


class _Tasks:
    """What the task tools share: the store, the config and the clock, and the steps
    every tool takes on a VTODO."""

    def __init__(
        self, config: ToolkitConfig, store: CalendarStore, now: Callable[[], datetime] | None
    ) -> None:
        self.config = config
        self.store = store
        self.now = now

    def find(self, task_id: str) -> icalendar.Component:
        found = self.store.get("todo", task_id)
        if found is None:
            raise ToolRetry(
                f"There is no task with task_id {task_id[:100]!r}. Find it with list_tasks.",
                details={"field": "task_id", "value": task_id[:100]},
            )
        return found

    def list_of(self, todo: icalendar.Component, given: str | None) -> str | None:
        """The list ``todo`` is on, named as ``list_tasks`` names it."""
        if given is not None:
            return given
        names = self.store.task_lists()
        if len(names) == 1:
            return names[0]
        uid = str(todo.get("UID", ""))
        for name in names:
            if any(str(t.get("UID", "")) == uid for t in self.store.items("todo", name)):
                return name
        return None

    def record(self, todo: icalendar.Component, given: str | None = None) -> TaskItem:
        """``todo`` as the tools return it."""
        return task_record(todo, self.config.zone(), self.list_of(todo, given))

    def set_due(self, todo: icalendar.Component, due: str) -> None:
        drop(todo, "DUE")
        if due.strip().lower() in ("", "none"):
            return
        when = DateReader(self.config.zone(), now=self.now).when(due, field="due")
        value: date | datetime = when.day if when.all_day else when.start
        put(todo, "due", value)

    def marked(self, task_id: str, *, done: bool) -> TaskItem:
        todo = self.find(task_id)
        _set_status(todo, done)
        self.store.save("todo", todo)
        return self.record(todo)


def _set_estimate(todo: icalendar.Component, minutes: int) -> None:
    put(todo, ESTIMATE, icalendar.vDuration(timedelta(minutes=minutes)))


def _touch(todo: icalendar.Component) -> None:
    stamp = datetime.now(UTC).replace(microsecond=0)
    put(todo, "dtstamp", stamp)
    put(todo, "last-modified", stamp)


def _set_status(todo: icalendar.Component, done: bool) -> None:
    for name in ("COMPLETED", "PERCENT-COMPLETE"):
        drop(todo, name)
    put(todo, "status", "COMPLETED" if done else "NEEDS-ACTION")
    if done:
        put(todo, "completed", datetime.now(UTC).replace(microsecond=0))
        put(todo, "percent-complete", 100)
    _touch(todo)


def task_tools(
    config: ToolkitConfig,
    *,
    store: CalendarStore | None = None,
    now: Callable[[], datetime] | None = None,
) -> list[BaseTool]:
    """The seven task tools on ``store`` (default: the one ``config`` names).

    Args:
        config: The user's zone and where the tasks live.
        store: The store to use instead of the configured one.
        now: The clock (for tests).
    """
    tasks = _Tasks(config, store if store is not None else open_calendar_store(config), now)
    return [
        _create_task(tasks),
        _update_task(tasks),
        _mark_task_complete(tasks),
        _mark_task_incomplete(tasks),
        _delete_task(tasks),
        _list_tasks(tasks),
        _get_task_lists(tasks),
    ]


def _create_task(tasks: _Tasks) -> BaseTool:
    @tool(
        category="tasks",
        actions=["create"],
        summary="Add a new task or to-do item to the to-do list.",
    )
    def create_task(
        title: Annotated[str, Field(min_length=1, max_length=MAX_TITLE)],
        notes: Annotated[str | None, Field(max_length=MAX_TEXT)] = None,
        due: Annotated[str | None, Field(max_length=200)] = None,
        task_list: ListName = None,
        estimate_minutes: Minutes = None,
    ) -> TaskItem:
        """Add a new task or to-do item to the user's to-do list, with an optional due date.

        Args:
            title: What needs doing.
            notes: Details.
            due: When it is due, in words or ISO 8601: 'Friday', 'tomorrow end of day',
                'in 3 days', '2026-12-03'.
            task_list: Which list (see get_task_lists); default the first.
            estimate_minutes: How long it takes, in minutes.
        """
        todo = icalendar.Todo()
        put(todo, "uid", str(uuid.uuid4()))
        put(todo, "summary", title)
        if notes:
            put(todo, "description", notes)
        if due is not None:
            tasks.set_due(todo, due)
        if estimate_minutes is not None:
            _set_estimate(todo, estimate_minutes)
        _set_status(todo, False)
        tasks.store.save("todo", todo, task_list, new=True)
        return tasks.record(todo, task_list)

    return create_task


def _update_task(tasks: _Tasks) -> BaseTool:
    @tool(
        category="tasks",
        actions=["update"],
        summary="Edit a task: rename it, change its notes, or move its due date.",
    )
    def update_task(
        task_id: TaskId,
        title: Annotated[str | None, Field(min_length=1, max_length=MAX_TITLE)] = None,
        notes: Annotated[str | None, Field(max_length=MAX_TEXT)] = None,
        due: Annotated[str | None, Field(max_length=200)] = None,
        estimate_minutes: Minutes = None,
    ) -> TaskItem:
        """Edit a task on the to-do list: rename it, add or change its notes, or move its
        due date. Only the fields given change.

        Args:
            task_id: The task's id, from list_tasks.
            title: The new title.
            notes: The new details ('' clears them).
            due: The new due date ('next Monday'), or 'none' to clear it.
            estimate_minutes: How long it takes, in minutes.
        """
        todo = tasks.find(task_id)
        for name, value in (("SUMMARY", title), ("DESCRIPTION", notes)):
            if value is not None:
                drop(todo, name)
                if value:
                    put(todo, name, value)
        if due is not None:
            tasks.set_due(todo, due)
        if estimate_minutes is not None:
            _set_estimate(todo, estimate_minutes)
        _touch(todo)
        tasks.store.save("todo", todo)
        return tasks.record(todo)

    return update_task


def _mark_task_complete(tasks: _Tasks) -> BaseTool:
    @tool(
        category="tasks",
        actions=["update"],
        summary="Mark a task done: check it off the to-do list as finished.",
        idempotent=True,
    )
    def mark_task_complete(task_id: TaskId) -> TaskItem:
        """Mark a task done: check it off the to-do list as finished or completed.

        Args:
            task_id: The task's id, from list_tasks.
        """
        return tasks.marked(task_id, done=True)

    return mark_task_complete


def _mark_task_incomplete(tasks: _Tasks) -> BaseTool:
    @tool(
        category="tasks",
        actions=["update"],
        summary="Reopen a completed task: uncheck it, mark it not done.",
        idempotent=True,
    )
    def mark_task_incomplete(task_id: TaskId) -> TaskItem:
        """Reopen a completed task: uncheck it and mark it as not done, still to do.

        Args:
            task_id: The task's id, from list_tasks.
        """
        return tasks.marked(task_id, done=False)

    return mark_task_incomplete


def _delete_task(tasks: _Tasks) -> BaseTool:
    @tool(
        category="tasks",
        actions=["delete"],
        summary="Delete or remove a task from the to-do list for good.",
        destructive=True,
    )
    def delete_task(task_id: TaskId) -> DeletedTask:
        """Delete or remove a task from the to-do list for good. Needs the user's approval.

        Args:
            task_id: The task's id, from list_tasks.
        """
        todo = tasks.find(task_id)
        title = str(todo.get("SUMMARY", ""))
        if not tasks.store.delete("todo", task_id):
            raise ToolRetry(f"The task {task_id[:100]!r} was already gone.")
        return DeletedTask(deleted=task_id, title=title)

    return delete_task


def _list_tasks(tasks: _Tasks) -> BaseTool:
    @tool(
        category="tasks",
        actions=["read"],
        summary="Show the to-do list: the tasks still to do, due soon, or finished.",
        read_only=True,
    )
    def list_tasks(
        task_list: ListName = None,
        show_completed: bool = False,
        max_results: Annotated[int, Field(ge=1, le=1000)] = 100,
    ) -> TaskListing:
        """Show the tasks on the to-do list: open ones first, soonest due first, then by
        priority (finished ones with show_completed).

        Args:
            task_list: Which list (see get_task_lists); default every list.
            show_completed: Include tasks already done.
            max_results: At most this many tasks.
        """
        names = [task_list] if task_list is not None else tasks.store.task_lists()
        found: list[tuple[icalendar.Component, str]] = []
        for name in names:
            found += [(t, name) for t in tasks.store.items("todo", name)]
        if not show_completed:
            found = [p for p in found if str(p[0].get("STATUS", "")).upper() != "COMPLETED"]
        found.sort(key=lambda p: _due_key(p[0]))
        zone = tasks.config.zone()
        return TaskListing(tasks=[task_record(t, zone, n) for t, n in found[:max_results]])

    return list_tasks


def _get_task_lists(tasks: _Tasks) -> BaseTool:
    @tool(
        category="tasks",
        actions=["read"],
        summary="List the user's task lists: the to-do lists tasks can go on.",
        read_only=True,
    )
    def get_task_lists() -> TaskLists:
        """List the user's task lists (pass a name as task_list to the other task tools)."""
        return TaskLists(task_lists=[TaskList(id=n, title=n) for n in tasks.store.task_lists()])

    return get_task_lists
