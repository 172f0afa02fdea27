"""Delivering reminders at their time while a process runs (``satchel serve``, an agent
runtime): :func:`deliver_reminders`.

One loop per process: it fires what is due (:meth:`MemoryAgenda.fire_due`: working memory plus
a conversation message), hands each fired reminder to ``notify`` (``satchel serve`` sends
an MCP notification), then waits until the next reminder is due, or until one is
scheduled or changed, or ``max_wait`` (a reminder written by another process is noticed
within that).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime, timedelta

import anyio

from satchel._errors import SatchelError
from satchel.registry import ToolRegistry, WrapperTool
from satchel.toolkit._agenda import ScheduleReminderTool
from satchel.toolkit._agenda_store import MemoryAgenda, Reminder

__all__ = ["ReminderNotifier", "deliver_reminders", "reminder_agenda"]

logger = logging.getLogger("satchel.toolkit.reminders")

ReminderNotifier = Callable[[str, Reminder], Awaitable[None]]
"""Called as ``notify(agent, reminder)`` for each reminder that falls due."""


async def deliver_reminders(
    agenda: MemoryAgenda,
    agents: Sequence[str],
    *,
    notify: ReminderNotifier | None = None,
    max_wait: float = 30.0,
) -> None:
    """Deliver ``agents``' reminders at their time, until cancelled.

    Args:
        agenda: The reminders' store.
        agents: Whose reminders to deliver.
        notify: Also tell someone (an MCP client) about each one; a failing notifier is
            logged and the loop goes on.
        max_wait: The longest wait between two looks, in seconds.

    Example:
        >>> async with anyio.create_task_group() as tg:  # doctest: +SKIP
        ...     tg.start_soon(deliver_reminders, MemoryAgenda(store), ["ada"])
    """
    wake = anyio.Event()

    def changed() -> None:
        wake.set()

    agenda.on_change(changed)
    while True:
        upcoming: list[datetime] = []
        for agent in agents:
            try:
                fired = await agenda.fire_due(agent)
                due = await agenda.next_due(agent)
            except SatchelError as exc:  # a database hiccup must not stop the server
                logger.warning("could not deliver reminders of %r: %s", agent, exc)
                continue
            for reminder in fired:
                logger.info("reminder %s of %r fell due", reminder.id, agent)
                if notify is not None:
                    try:
                        await notify(agent, reminder)
                    except Exception:  # a boundary: a notifier's failure must not stop delivery
                        logger.exception("could not notify about reminder %s", reminder.id)
            if due is not None:
                upcoming.append(due)
        delay = max_wait
        if upcoming:
            delay = min(delay, max(0.0, (min(upcoming) - agenda.now()) / timedelta(seconds=1)))
        with anyio.move_on_after(delay):
            await wake.wait()
        wake = anyio.Event()


def reminder_agenda(registry: ToolRegistry) -> MemoryAgenda | None:
    """The :class:`MemoryAgenda` behind ``registry``'s ``schedule_reminder`` tool, so a
    delivery loop shares it (and wakes the moment a reminder is scheduled); ``None``
    when the registry has no such tool (no memory store was given).
    """
    tool = registry.get("schedule_reminder")
    while isinstance(tool, WrapperTool):  # approval gates, prefixes, timeouts
        tool = tool.inner
    return tool.agenda if isinstance(tool, ScheduleReminderTool) else None
