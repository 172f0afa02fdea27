"""``--channels FILE`` for ``satchel serve``, ``run`` and ``chat``: the option and the
checked configuration (:func:`channels_config`); the opened channels are
:func:`satchel.serve.open_channels`'s."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from satchel._errors import SatchelUsageError
from satchel.channels import ChannelConfig, load_channels
from satchel.serve import open_channels

__all__ = ["ChannelsOption", "channels_config", "open_channels"]

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
