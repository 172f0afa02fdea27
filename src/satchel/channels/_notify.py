"""Reminders and task nudges to the person's channels: :func:`notify_channels` makes
the ``notify`` hook of :func:`satchel.toolkit.deliver_reminders` that sends each due
reminder to every inbound channel's :meth:`~satchel.channels.InboundChannel.notify`
(``satchel up`` uses it; ``satchel serve`` can, with channels configured)."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime
from typing import Protocol

import anyio

from satchel._errors import SatchelError
from satchel.channels._inbound import Action, ChannelUnavailableError, SentMessage

__all__ = ["DueReminder", "Notifiable", "notify_channels", "reminder_text"]

logger = logging.getLogger("satchel.channels.notify")


class DueReminder(Protocol):
    """What a notification needs of a fallen-due reminder (the toolkit's
    :class:`~satchel.toolkit.Reminder` is one)."""

    @property
    def message(self) -> str:
        """What to remind of (a nudge's gentle text, for an overdue task)."""
        ...

    @property
    def late(self) -> bool:
        """It fell due later than its time (nothing was delivering then)."""
        ...

    def local_due(self) -> datetime:
        """When it was due, in the person's zone."""
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
    """The notification of ``reminder``: ``Reminder: ...`` when it is on time (it
    arrives at its time), or ``Late reminder (was due 2026-11-27 09:00 CET): ...`` for
    one delivered late, as the agent's own conversation records it."""
    if not reminder.late:
        return f"Reminder: {reminder.message}"
    due = reminder.local_due()
    seconds = ":%S" if due.second else ""
    return (
        f"Late reminder (was due {due.strftime(f'%Y-%m-%d %H:%M{seconds} %Z')}): {reminder.message}"
    )


def notify_channels(
    channels: Sequence[Notifiable], *, attempts: int = 3, backoff: float = 1.0
) -> Callable[[str, DueReminder], Awaitable[None]]:
    """A ``notify`` hook for :func:`satchel.toolkit.deliver_reminders` that tells the
    person on every channel in ``channels`` (each channel's ``notify``; a channel with
    no one to notify is skipped).

    A channel that is unavailable is tried ``attempts`` times, waiting ``backoff``
    seconds, doubled each time; a failure is logged and the other channels are still
    told.

    Example:
        >>> tg.start_soon(partial(deliver_reminders, agenda, ["ada"],
        ...                       notify=notify_channels([telegram])))
    """

    async def notify(agent: str, reminder: DueReminder) -> None:
        text = reminder_text(reminder)
        for channel in channels:
            await _tell(channel, text, agent, attempts, backoff)

    return notify


async def _tell(channel: Notifiable, text: str, agent: str, attempts: int, backoff: float) -> None:
    wait = backoff
    for attempt in range(1, attempts + 1):
        try:
            sent = await channel.notify(text)
        except ChannelUnavailableError as exc:
            if attempt == attempts:
                logger.warning(
                    "could not deliver a reminder of %r on %s: %s", agent, channel.name, exc.message
                )
                return
            await anyio.sleep(max(wait, float(exc.details.get("retry_after", 0.0))))
            wait *= 2
            continue
        except SatchelError as exc:
            logger.warning(
                "could not deliver a reminder of %r on %s: %s", agent, channel.name, exc.message
            )
            return
        except Exception:  # a boundary: one channel's failure must not stop the others
            logger.exception("could not deliver a reminder of %r on %s", agent, channel.name)
            return
        if sent is not None:
            logger.info("delivered a reminder of %r on %s:%s", agent, channel.name, sent.chat)
        return
