"""The channels ``send_message`` reaches while serving (``--channels``): the message
router over them, consent requests announced on the channel they came from, and the
inbound channels that reminders are delivered to."""

from __future__ import annotations

import logging
from contextlib import AsyncExitStack
from typing import Protocol, runtime_checkable

from satchel.builtin import MessageRouter
from satchel.channels import (
    ChannelConfig,
    ChannelUnavailableError,
    ConsentAnnouncer,
    Notifiable,
    apprise_notifier,
    channel_router,
    open_inbound_channels,
)
from satchel.consent import PermissionBroker
from satchel.memory import MemoryStore

__all__ = ["approve_commands", "open_channels", "open_reminder_channels"]

logger = logging.getLogger("satchel.serve")


@runtime_checkable
class _Listening(Protocol):
    """A channel that listens for its callers (the inbox), started before it is used so
    they can reach it at once."""

    async def start(self) -> object: ...


def approve_commands(db: str | None, *, is_url: bool) -> tuple[str, str]:
    """The CLI commands that approve and deny a request (``{id}`` for its id) on the
    database ``db`` (the resolved file, or a URL, which is not repeated: it may hold a
    password)."""
    where = ""
    if db is not None:
        where = " --db <your database URL>" if is_url else f" --db {db}"
    return (
        f"satchel approvals approve {{id}}{where}",
        f"satchel approvals deny {{id}}{where}",
    )


async def open_channels(
    stack: AsyncExitStack,
    config: ChannelConfig,
    store: MemoryStore,
    broker: PermissionBroker | None = None,
    *,
    db: str | None = None,
    is_url: bool = False,
) -> MessageRouter:
    """The router over the configured channels (and the user and other agents); with a
    ``broker`` (and ``announce_consent``), its new approval requests are announced on
    the channel they came from, with the commands that answer them on ``db``, until
    ``stack`` closes."""
    router = channel_router(config, store)
    if broker is not None and config.announce_consent and router.endpoints:
        approve, deny = approve_commands(db, is_url=is_url)
        announcer = ConsentAnnouncer(router, approve_command=approve, deny_command=deny)
        await stack.enter_async_context(announcer.announcing(broker))
    return router


async def open_reminder_channels(stack: AsyncExitStack, config: ChannelConfig) -> list[Notifiable]:
    """The inbound channels ``config`` configures and its ``[notify]`` URLs, for
    reminders to reach the person: each channel that listens (the inbox) started now,
    and every channel closed with ``stack``. One that cannot start is logged; the
    server still serves.

    Raises:
        SatchelUsageError: ``[notify]`` without apprise installed, or with a URL it
            does not know.
    """
    inbound = open_inbound_channels(config)
    channels: list[Notifiable] = list(inbound)
    if config.notify is not None:
        channels.append(apprise_notifier(config.notify))
    for channel in inbound:
        stack.push_async_callback(channel.aclose)
        if isinstance(channel, _Listening):
            try:
                await channel.start()
            except ChannelUnavailableError as exc:
                logger.error("reminders will not reach %s: %s", channel.name, exc.message)
    if channels:
        logger.info("reminders go to %s", ", ".join(c.name for c in channels))
    return channels
