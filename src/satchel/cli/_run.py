"""``satchel run``: one turn of an agent, on the same API as the library
(:class:`satchel.agent.Agent`), against the memory database ``--db`` names."""

from __future__ import annotations

from contextlib import AsyncExitStack
from dataclasses import dataclass
from typing import Annotated

import anyio
import typer

from satchel.agent import Agent, Model, RunResult, model_from_string
from satchel.cli._agent_tools import LazyOption, MountOption, ToolsOption, agent_tools
from satchel.cli._common import JsonFlag, echo_json, load_object, load_registry
from satchel.cli._store import DbOption, open_store, resolve_db_location
from satchel.consent import PermissionBroker, open_approval_store
from satchel.rules import MaxCalls, ToolRule

__all__ = ["resolve_model", "run"]

ModelOption = Annotated[
    str,
    typer.Option(
        "--model",
        "-m",
        envvar="SATCHEL_MODEL",
        metavar="PROVIDER:MODEL|MODULE:ATTR",
        help="The model: openai:MODEL (any OpenAI-compatible server, see --base-url), "
        "anthropic:MODEL, or a Python Model object such as a scripted FunctionModel "
        "(path/to/file.py:model).",
    ),
]


def resolve_model(spec: str, base_url: str | None) -> Model:
    """The model ``--model`` names: a provider model, or a Model object to import.

    Raises:
        typer.BadParameter: the spec names neither.
    """
    provider = spec.partition(":")[0]
    if provider in ("openai", "anthropic"):
        return model_from_string(spec, base_url=base_url)
    if ":" not in spec:
        raise typer.BadParameter(
            f"{spec!r} is not a model satchel can run: write openai:MODEL (any "
            "OpenAI-compatible server), anthropic:MODEL, or MODULE:ATTR naming a Python "
            "Model object.",
            param_hint="'--model'",
        )
    value = load_object(spec, "--model")
    if callable(value) and not isinstance(value, Model):
        value = value()
    if not isinstance(value, Model):
        raise typer.BadParameter(
            f"{spec!r} is a {type(value).__name__}, not a Model (it needs name, family and "
            "an async request()).",
            param_hint="'--model'",
        )
    return value


def run(
    prompt: Annotated[str, typer.Argument(help="What the user says.", show_default=False)],
    model: ModelOption = "openai:gpt-4o-mini",
    base_url: Annotated[
        str | None,
        typer.Option(
            "--base-url",
            metavar="URL",
            help="Another server for the provider: an OpenAI-compatible one (vLLM, "
            "llama.cpp, Ollama, LM Studio, ...). Default: $OPENAI_BASE_URL or "
            "$ANTHROPIC_BASE_URL, else the provider's own.",
        ),
    ] = None,
    agent: Annotated[
        str,
        typer.Option("--agent", envvar="SATCHEL_AGENT", help="Whose memory and conversation."),
    ] = "default",
    conversation: Annotated[
        str,
        typer.Option("--conversation", metavar="ID", help="The conversation to continue."),
    ] = "default",
    db: DbOption = None,
    tools: ToolsOption = None,
    mount: MountOption = None,
    lazy: LazyOption = False,
    max_steps: Annotated[
        int, typer.Option("--max-steps", min=1, help="Model requests in this turn, at most.")
    ] = 20,
    max_calls: Annotated[
        int | None,
        typer.Option("--max-calls", min=1, help="Tool calls in this turn, at most."),
    ] = None,
    json_output: JsonFlag = False,
) -> None:
    """Run one turn of an agent and print its reply (--json: the run's record).

    The conversation is kept in the memory database, so the next `satchel run` for the
    same agent and conversation continues it. A call that needs a human's approval
    stops the run; approve it with `satchel approvals`.
    """
    if not agent.strip():
        raise typer.BadParameter("must not be empty.", param_hint="'--agent'")
    chosen = resolve_model(model, base_url)
    for target in tools or ():
        load_registry(target)  # a bad --tools is a usage error before anything runs
    rules: list[ToolRule] = [MaxCalls(max_calls)] if max_calls is not None else []
    request = _Request(prompt, agent, conversation, db, tools, mount, lazy, max_steps, rules)
    result = anyio.run(_run, chosen, request)
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
    elif result.stop in ("max_steps", "rules"):
        typer.echo(f"satchel: the turn stopped early ({result.stop}).", err=True)


@dataclass(frozen=True)
class _Request:
    prompt: str
    agent: str
    conversation: str
    db: str | None
    tools: list[str] | None
    mounts: list[str] | None
    lazy: bool
    max_steps: int
    rules: list[ToolRule]


async def _run(model: Model, request: _Request) -> RunResult:
    where = resolve_db_location(request.db, must_exist=False)
    async with AsyncExitStack() as stack:
        store = await open_store(request.db, create=True)
        stack.push_async_callback(store.close)
        close = getattr(model, "aclose", None)
        if close is not None:
            stack.push_async_callback(close)
        broker = await stack.enter_async_context(
            PermissionBroker(open_approval_store(where), origin="cli")
        )
        await store.ensure_agent(request.agent)
        extra = await agent_tools(
            stack, request.tools, request.mounts, lazy=request.lazy, broker=broker
        )
        runner = Agent(
            request.agent,
            model,
            tools=extra,
            memory=store,
            max_steps=request.max_steps,
            rules=request.rules,
        )
        return await runner.run(request.prompt, conversation_id=request.conversation)
