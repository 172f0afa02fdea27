"""Opening the inbound channels the channels file configures:
:func:`open_inbound_channels`, over a table from section to opener.

To add a channel, add one line to :data:`INBOUND_OPENERS`: its section's name in
:class:`~satchel.channels.ChannelConfig` and a function from that section (and the
host's :class:`~satchel.channels.CursorStore`, for a channel that resumes where it
stopped) to the channel.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from satchel.channels._config import ChannelConfig, DiscordConfig, TelegramConfig
from satchel.channels._discord_inbound import discord_channel
from satchel.channels._email import email_channel
from satchel.channels._inbound import CursorStore, InboundChannel
from satchel.channels._inbox import inbox_channel

__all__ = ["INBOUND_OPENERS", "InboundOpener", "open_inbound_channels"]

InboundOpener = Callable[[Any, CursorStore | None], InboundChannel | None]
"""Opens one channel from its section of the channels file and the host's cursor store
for it; ``None`` when the section configures no inbound side (a Discord section that
only lists channels for ``send_message``)."""


def _telegram(section: TelegramConfig, _cursors: CursorStore | None) -> InboundChannel:
    return section.channel()  # Telegram keeps the update offset itself


def _discord(section: DiscordConfig, cursors: CursorStore | None) -> InboundChannel | None:
    if not section.listen and not (section.dm and section.allowed_users):
        return None
    return discord_channel(section, cursors)


INBOUND_OPENERS: Final[Mapping[str, InboundOpener]] = {
    "telegram": _telegram,
    "discord": _discord,
    "email": lambda section, cursors: email_channel(section, cursors),
    "inbox": lambda section, _cursors: inbox_channel(section),
}
"""Each inbound channel's section of :class:`~satchel.channels.ChannelConfig` and its
opener, in the order channels are opened."""


def open_inbound_channels(
    config: ChannelConfig,
    cursor_store: CursorStore | None = None,
    *,
    cursors_for: Callable[[str], CursorStore] | None = None,
) -> list[InboundChannel]:
    """The inbound channels ``config`` configures, one per section present, not yet
    connected (each connects on its first use; close each with ``aclose()``).

    Args:
        config: The channels file.
        cursor_store: Where channels that resume after a restart keep their cursor.
        cursors_for: A cursor store per channel, by section name (``satchel up``
            keeps each channel's under its name in its ledger); wins over
            ``cursor_store``.

    Example:
        >>> channels = open_inbound_channels(load_channels("channels.toml"))  # doctest: +SKIP
    """
    opened: list[InboundChannel] = []
    for section, opener in INBOUND_OPENERS.items():
        body: Any = getattr(config, section, None)
        if body is not None:
            cursors = cursors_for(section) if cursors_for is not None else cursor_store
            channel = opener(body, cursors)
            if channel is not None:
                opened.append(channel)
    return opened
