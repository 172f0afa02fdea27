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
from satchel.channels._inbound import ChannelUnavailableError, InboundChannel

__all__ = ["DueReminder", "notify_channels", "reminder_text"]

logger = logging.getLogger("satchel.channels")


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


def reminder_text(reminder: DueReminder) -> str:
    """The notification's text: ``Reminder (due 2026-11-27 09:00 CET): ...``, or
    ``Late reminder (was due ...): ...`` for one delivered late, as the agent's own
    conversation records it."""
    moment = reminder.local_due()
    seconds = ":%S" if moment.second else ""
    due = moment.strftime(f"%Y-%m-%d %H:%M{seconds} %Z")
    heading = f"Late reminder (was due {due})" if reminder.late else f"Reminder (due {due})"
    return f"{heading}: {reminder.message}"


def notify_channels(
    channels: Sequence[InboundChannel], *, attempts: int = 3, backoff: float = 1.0
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


async def _tell(
    channel: InboundChannel, text: str, agent: str, attempts: int, backoff: float
) -> None:
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
        if sent is not None:
            logger.info("delivered a reminder of %r on %s:%s", agent, channel.name, sent.chat)
        return
