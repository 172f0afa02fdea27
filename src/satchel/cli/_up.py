"""``satchel up``: an agent that lives on the person's channels (Telegram, and the
other inbound sections of the channels file), with its memory tools,
``schedule_reminder`` and ``track_task``, until Ctrl-C or SIGTERM.

The command only turns its options into the library's pieces: the agent as ``run``
and ``chat`` open it (:func:`~satchel.cli._agent_setup.opened_agent`), the agenda
tools beside its memory tools, the inbound channels of the file
(:func:`satchel.up.inbound_channels`), the ledger in the same database
(:func:`satchel.up.open_ledger`), and :class:`satchel.up.Host` to run them.
"""

from __future__ import annotations

import asyncio
import logging
import signal
from collections.abc import Generator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated

import anyio
import typer

from satchel._errors import SatchelUsageError
from satchel.channels import (
    ChannelConfig,
    ChannelConsent,
    ChannelUnavailableError,
    InboundChannel,
)
from satchel.cli._agent_setup import (
    DEFAULT_TIMEOUT,
    AgentOptions,
    AgentSetup,
    BaseUrlOption,
    MaxCallsOption,
    MaxStepsOption,
    ModelOption,
    TimeoutOption,
    ToolsOption,
    agent_setup,
    opened_agent,
)
from satchel.cli._agents import AgentOption
from satchel.cli._channels import channels_config
from satchel.cli._embed_options import EmbedBaseUrlOption, EmbedderOption
from satchel.cli._interrupt import stops_on_ctrl_c
from satchel.cli._serve_toolkit import ZoneOption
from satchel.cli._store import DbOption, resolve_db_location
from satchel.registry import ToolRegistry, merged
from satchel.toolkit import ToolkitConfig, agenda_tools, reminder_agenda
from satchel.up import ChannelCursors, Host, inbound_channels, open_ledger, start_channels

__all__ = ["up"]

logger = logging.getLogger("satchel.up")

UpChannelsOption = Annotated[
    Path,
    typer.Option(
        "--channels",
        envvar="SATCHEL_CHANNELS",
        metavar="FILE",
        help="The channels file (TOML or YAML, see docs/channels.md): its inbound sections "
        "([telegram]) are where people talk to the agent; its other sections are what "
        "send_message reaches.",
        show_default=False,
    ),
]


def up(
    channels: UpChannelsOption,
    model: ModelOption = "openai:gpt-4o-mini",
    base_url: BaseUrlOption = None,
    agent: AgentOption = "default",
    db: DbOption = None,
    tools: ToolsOption = None,
    timezone: ZoneOption = None,
    max_steps: MaxStepsOption = 20,
    max_calls: MaxCallsOption = None,
    timeout: TimeoutOption = DEFAULT_TIMEOUT,
    embedder: EmbedderOption = None,
    embed_base_url: EmbedBaseUrlOption = None,
) -> None:
    """Host an agent on inbound channels until stopped (Ctrl-C or SIGTERM).

    Each message from an allowed person runs one turn in that chat's own conversation,
    and the reply goes back where the message came from; strangers are refused and
    logged. Reminders and task nudges reach the person on every channel at their time.
    A restart never answers a message twice (see docs/up.md).
    """
    with stops_on_ctrl_c():
        options = AgentOptions(
            model=model, base_url=base_url, agent=agent, db=db, tools=tools or (),
            max_steps=max_steps, max_calls=max_calls, channels=channels, timeout=timeout,
            embedder=embedder, embed_base_url=embed_base_url,
        )  # fmt: skip
        config_file = channels_config(channels)
        try:
            inbound_channels(config_file, source=str(channels))  # one clear line, early
        except SatchelUsageError as exc:
            raise typer.BadParameter(exc.message, param_hint="'--channels'") from exc
        setup = agent_setup(options)
        try:
            config = ToolkitConfig.load(timezone=timezone)
        except SatchelUsageError as exc:
            raise typer.BadParameter(exc.message, param_hint="'--timezone'") from exc
        stopped = anyio.run(_up, setup, config_file, str(channels), config)
        if stopped == signal.SIGINT:
            raise KeyboardInterrupt  # satchel: interrupted., status 130
    typer.echo("satchel up: stopped.", err=True)


async def _up(
    setup: AgentSetup, channels: ChannelConfig, source: str, config: ToolkitConfig
) -> signal.Signals:
    """Run the host until SIGINT or SIGTERM stops it; returns that signal."""
    caught: list[signal.Signals] = []
    with _stopped_by_signals(caught):
        await _host(setup, channels, source, config)
    return caught[0] if caught else signal.SIGTERM


async def _host(
    setup: AgentSetup, channels: ChannelConfig, source: str, config: ToolkitConfig
) -> None:
    """Open the ledger, the channels (each keeping its cursor in the ledger), the agent
    with its agenda tools and consent answered in the chat, and host it."""
    ledger = open_ledger(resolve_db_location(setup.db, must_exist=False))
    inbound: list[InboundChannel] = []
    try:
        inbound = inbound_channels(
            channels, source=source, cursors_for=lambda name: ChannelCursors(ledger, name)
        )
        try:
            await start_channels(inbound)
        except ChannelUnavailableError as exc:  # the host retries with backoff
            logger.warning("a channel is unavailable at start: %s", exc.message)
        except SatchelUsageError as exc:
            raise typer.BadParameter(exc.message, param_hint="'--channels'") from exc
        async with opened_agent(setup, origin="up") as (made, broker):
            assert made.memory is not None
            agenda_registry = ToolRegistry(agenda_tools(config, store=made.memory))
            made.tools = merged(made.tools, agenda_registry)
            host = Host(
                agent=made, channels=inbound, ledger=ledger, agenda=reminder_agenda(agenda_registry)
            )
            consent = ChannelConsent(
                broker,
                {channel.name: channel for channel in inbound},
                state=ChannelCursors(ledger, "consent"),
            )
            host.intercept(consent.intercept)
            names = ", ".join(channel.name for channel in inbound)
            typer.echo(f"satchel up: agent {made.name!r} listening on {names}.", err=True)
            try:
                async with consent.running():
                    await host.run()
            except SatchelUsageError as exc:
                raise typer.BadParameter(exc.message, param_hint="'--channels'") from exc
    finally:
        with anyio.CancelScope(shield=True):
            for channel in inbound:
                await channel.aclose()
            await ledger.close()


@contextmanager
def _stopped_by_signals(caught: list[signal.Signals]) -> Generator[None]:
    """Run the block until SIGINT or SIGTERM (recorded in ``caught``) cancels it."""
    loop = asyncio.get_running_loop()
    with anyio.CancelScope() as scope:

        def stop(which: signal.Signals) -> None:
            caught.append(which)
            scope.cancel()

        for which in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(which, stop, which)
        try:
            yield
        finally:
            for which in (signal.SIGINT, signal.SIGTERM):
                loop.remove_signal_handler(which)
