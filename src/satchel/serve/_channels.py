"""The channels ``send_message`` reaches while serving (``--channels``): the message
router over them, and consent requests announced on the channel they came from."""

from __future__ import annotations

from contextlib import AsyncExitStack

from satchel.builtin import MessageRouter
from satchel.channels import ChannelConfig, ConsentAnnouncer, channel_router
from satchel.consent import PermissionBroker
from satchel.memory import MemoryStore

__all__ = ["approve_commands", "open_channels"]


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
