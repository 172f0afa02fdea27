"""Reminders to the person's channels: :func:`notify_channels` makes the ``notify``
hook of :func:`satchel.toolkit.deliver_reminders` that tells every configured inbound
channel's person, and the ``[notify]`` URLs (``satchel serve`` and ``satchel up``
alike)."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime
from typing import Protocol

from satchel.channels._inbound import Action, SentMessage

__all__ = ["DueReminder", "Notifiable", "notify_channels", "reminder_text"]

logger = logging.getLogger("satchel.channels.notify")


class DueReminder(Protocol):
    """What a notification needs of a reminder that fell due (a
    :class:`satchel.toolkit.Reminder` is one)."""

    @property
    def message(self) -> str:
        """What to remind of."""
        ...

    @property
    def late(self) -> bool:
        """Whether it fell due well after its time (nothing was delivering then)."""
        ...

    def local_due(self) -> datetime:
        """Its time in the person's zone."""
        ...


class Notifiable(Protocol):
    """What can tell the person something: every
    :class:`~satchel.channels.InboundChannel`, and the ``[notify]`` URLs'
    :class:`~satchel.channels.AppriseNotifier`."""

    @property
    def name(self) -> str:
        """Its name, for the log."""
        ...

    async def notify(self, text: str, *, actions: Sequence[Action] = ()) -> SentMessage | None:
        """Tell the person ``text``."""
        ...


def reminder_text(reminder: DueReminder) -> str:
    """The notification of ``reminder``: ``Reminder: ...``, or ``Late reminder (was due
    ...): ...`` for one delivered late."""
    if not reminder.late:
        return f"Reminder: {reminder.message}"
    due = reminder.local_due()
    seconds = ":%S" if due.second else ""
    return (
        f"Late reminder (was due {due.strftime(f'%Y-%m-%d %H:%M{seconds} %Z')}): {reminder.message}"
    )


def notify_channels(
    channels: Sequence[Notifiable],
) -> Callable[[str, DueReminder], Awaitable[None]]:
    """A reminder notifier (``notify(agent, reminder)``, the ``notify`` of
    :func:`~satchel.toolkit.deliver_reminders`) that tells each channel's person.

    A channel that fails is logged and the others are still told; the delivery loop
    never stops for it.

    Example:
        >>> notify = notify_channels(open_inbound_channels(config))  # doctest: +SKIP
        >>> await deliver_reminders(agenda, ["ada"], notify=notify)  # doctest: +SKIP
    """

    async def notify(agent: str, reminder: DueReminder) -> None:
        text = reminder_text(reminder)
        for channel in channels:
            try:
                await channel.notify(text)
            except Exception:  # a boundary: one channel's failure must not stop the others
                logger.exception("could not tell %s about a reminder of %r", channel.name, agent)

    return notify
