"""From a channels file to the host's inbound channels: which sections of
:class:`~satchel.channels.ChannelConfig` are channels a person talks on."""

from __future__ import annotations

from collections.abc import Sequence

from satchel._errors import SatchelUsageError
from satchel.channels import ChannelConfig, InboundChannel

__all__ = ["INBOUND_SECTIONS", "inbound_channels", "start_channels"]

INBOUND_SECTIONS: tuple[str, ...] = ("telegram",)
"""The sections of a channels file that ``satchel up`` listens on."""


def inbound_channels(
    config: ChannelConfig, *, source: str = "the channels file"
) -> list[InboundChannel]:
    """The inbound channels ``config`` configures.

    Raises:
        SatchelUsageError: It configures none (the message names the sections it has).
    """
    channels: list[InboundChannel] = []
    if config.telegram is not None:
        channels.append(config.telegram.channel())
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
