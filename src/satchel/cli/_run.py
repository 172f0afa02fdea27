"""``satchel run``: one turn of an agent, on the same API as the library
(:class:`satchel.agent.Agent`), against the memory database ``--db`` names."""

from __future__ import annotations

from typing import Annotated

import anyio
import typer

from satchel.agent import RunResult
from satchel.cli._agent_setup import (
    DEFAULT_TIMEOUT,
    AgentOptions,
    AgentSetup,
    BaseUrlOption,
    ConversationOption,
    LazyOption,
    MaxCallsOption,
    MaxStepsOption,
    ModelOption,
    MountOption,
    TimeoutOption,
    ToolsOption,
    agent_setup,
    opened_agent,
)
from satchel.cli._agents import AgentOption
from satchel.cli._builtin_options import NoMemoryOption, ReplaceOption
from satchel.cli._channels import ChannelsOption
from satchel.cli._common import JsonFlag, echo_json
from satchel.cli._embed_options import EmbedBaseUrlOption, EmbedderOption
from satchel.cli._interrupt import cancelled_by_ctrl_c, stops_on_ctrl_c
from satchel.cli._store import DbOption

__all__ = ["run"]


def run(
    prompt: Annotated[str, typer.Argument(help="What the user says.", show_default=False)],
    model: ModelOption = "openai:gpt-4o-mini",
    base_url: BaseUrlOption = None,
    agent: AgentOption = "default",
    conversation: ConversationOption = "default",
    db: DbOption = None,
    embedder: EmbedderOption = None,
    embed_base_url: EmbedBaseUrlOption = None,
    tools: ToolsOption = None,
    mount: MountOption = None,
    lazy: LazyOption = False,
    replace: ReplaceOption = None,
    no_memory: NoMemoryOption = False,
    max_steps: MaxStepsOption = 20,
    max_calls: MaxCallsOption = None,
    channels: ChannelsOption = None,
    timeout: TimeoutOption = DEFAULT_TIMEOUT,
    json_output: JsonFlag = False,
) -> None:
    """Run one turn of an agent and print its reply (--json: the run's record).

    The conversation is kept in the memory database, so the next `satchel run` for the
    same agent and conversation continues it. A call that needs a human's approval
    stops the run; approve it with `satchel approvals`. Ctrl-C stops the run at once
    and keeps the turn as interrupted (exit status 130).
    """
    with stops_on_ctrl_c():
        options = AgentOptions(
            model=model, base_url=base_url, agent=agent, conversation=conversation, db=db,
            embedder=embedder, embed_base_url=embed_base_url,
            tools=tools or (), mounts=mount or (), lazy=lazy, replace=replace or (),
            no_memory=no_memory, max_steps=max_steps, max_calls=max_calls,
            channels=channels, timeout=timeout,
        )  # fmt: skip
        setup = agent_setup(options)
        result = anyio.run(_run, setup, prompt)
    if json_output:
        echo_json(result.to_dict())
        return
    if result.reply:
        typer.echo(result.reply)
    if result.stop == "needs_approval":
        ids = ", ".join(result.pending_approvals)
        typer.echo(
            f"satchel: waiting for approval of {ids}; see `satchel approvals list`.", err=True
        )
    elif result.stop in ("max_steps", "rules", "repeated"):
        typer.echo(f"satchel: the turn stopped early ({result.stop}).", err=True)


async def _run(setup: AgentSetup, prompt: str) -> RunResult:
    async with opened_agent(setup, origin="cli") as (agent, _):
        result: RunResult | None = None
        async with cancelled_by_ctrl_c():
            result = await agent.run(prompt)
        assert result is not None
        return result
