"""From a channels file to the host's inbound channels: which sections of
:class:`~satchel.channels.ChannelConfig` are channels a person talks on."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from satchel._errors import SatchelUsageError
from satchel.channels import ChannelConfig, CursorStore, InboundChannel, open_inbound_channels
from satchel.channels._open_inbound import INBOUND_OPENERS

__all__ = ["INBOUND_SECTIONS", "inbound_channels", "start_channels"]

INBOUND_SECTIONS: tuple[str, ...] = tuple(INBOUND_OPENERS)
"""The sections of a channels file that ``satchel up`` listens on."""


def inbound_channels(
    config: ChannelConfig,
    *,
    source: str = "the channels file",
    cursors_for: Callable[[str], CursorStore] | None = None,
) -> list[InboundChannel]:
    """The inbound channels ``config`` configures (see
    :func:`~satchel.channels.open_inbound_channels`), each with its own cursor store
    from ``cursors_for``.

    Raises:
        SatchelUsageError: It configures none (the message names the sections it has).
    """
    channels = open_inbound_channels(config, cursors_for=cursors_for)
    if not channels:
        present = [
            name
            for name in ChannelConfig.model_fields
            if getattr(config, name) not in (None, {}) and name != "announce_consent"
        ]
        has = ", ".join(f"[{name}]" for name in present) or "no sections"
        wanted = ", ".join(f"[{name}]" for name in INBOUND_SECTIONS)
        raise SatchelUsageError(
            f"{source} has no inbound channel for satchel up to listen on (it has {has}); "
            f"add one of {wanted} (see docs/channels.md)."
        )
    return channels


async def start_channels(channels: Sequence[InboundChannel]) -> None:
    """Check each channel's credentials now, where it can (Telegram's ``getMe``), so a
    refused token stops the start with one clear error.

    Raises:
        SatchelUsageError: A channel refused its credentials.
        ChannelUnavailableError: A channel cannot be reached (the host would retry).
    """
    for channel in channels:
        start = getattr(channel, "start", None)
        if start is not None:
            await start()
