"""``--channels FILE`` for ``satchel serve``, ``run`` and ``chat``: the option, the
checked configuration (:func:`channels_config`), and the opened channels
(:func:`open_channels`: the message router, and consent announcements while serving),
kept here so the commands only pass them on."""

from __future__ import annotations

import os
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Annotated

import typer

from satchel._errors import SatchelUsageError
from satchel.builtin import MessageRouter
from satchel.channels import ChannelConfig, ConsentAnnouncer, channel_router, load_channels
from satchel.consent import PermissionBroker
from satchel.memory import MemoryStore

__all__ = ["ChannelsOption", "approve_commands", "channels_config", "open_channels"]

ChannelsOption = Annotated[
    Path | None,
    typer.Option(
        "--channels",
        envvar="SATCHEL_CHANNELS",
        metavar="FILE",
        help="The channels send_message can reach (Discord, Bluesky, webhooks): a TOML "
        "or YAML file, secrets from SATCHEL_DISCORD_TOKEN, SATCHEL_BLUESKY_HANDLE, "
        "SATCHEL_BLUESKY_APP_PASSWORD (see docs/channels.md). Without it: the user and "
        "other agents only.",
        show_default=False,
    ),
]


def channels_config(file: Path | None) -> ChannelConfig:
    """The configuration in ``file``; no channels without one.

    Raises:
        typer.BadParameter: The file is unreadable or invalid (the message says where).
    """
    if file is None:
        return ChannelConfig()
    try:
        return load_channels(file, environ=os.environ)
    except SatchelUsageError as exc:
        raise typer.BadParameter(exc.message, param_hint="'--channels'") from exc


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
    """The router over the configured channels; with a ``broker`` (and
    ``announce_consent``), its new approval requests are announced on the channel they
    came from until ``stack`` closes."""
    router = channel_router(config, store)
    if broker is not None and config.announce_consent and router.endpoints:
        approve, deny = approve_commands(db, is_url=is_url)
        announcer = ConsentAnnouncer(router, approve_command=approve, deny_command=deny)
        await stack.enter_async_context(announcer.announcing(broker))
    return router
