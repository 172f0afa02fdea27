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

from satchel.channels._config import ChannelConfig
from satchel.channels._inbound import CursorStore, InboundChannel
from satchel.channels._inbox import inbox_channel

__all__ = ["INBOUND_OPENERS", "InboundOpener", "open_inbound_channels"]

InboundOpener = Callable[[Any, CursorStore | None], InboundChannel]
"""Opens one channel from its section of the channels file and the host's cursor store."""

INBOUND_OPENERS: Final[Mapping[str, InboundOpener]] = {
    "inbox": lambda section, _cursors: inbox_channel(section),
}
"""Each inbound channel's section of :class:`~satchel.channels.ChannelConfig` and its
opener, in the order channels are opened."""


def open_inbound_channels(
    config: ChannelConfig, cursor_store: CursorStore | None = None
) -> list[InboundChannel]:
    """The inbound channels ``config`` configures, one per section present, not yet
    connected (each connects on its first use; close each with ``aclose()``).

    Args:
        config: The channels file.
        cursor_store: Where channels that resume after a restart keep their cursor.

    Example:
        >>> channels = open_inbound_channels(load_channels("channels.toml"))  # doctest: +SKIP
    """
    opened: list[InboundChannel] = []
    for section, opener in INBOUND_OPENERS.items():
        body: object = getattr(config, section, None)
        if body is not None:
            opened.append(opener(body, cursor_store))
    return opened
