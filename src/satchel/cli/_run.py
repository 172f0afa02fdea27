"""``satchel run``: one turn of an agent, on the same API as the library
(:class:`satchel.agent.Agent`), against the memory database ``--db`` names."""

from __future__ import annotations

from typing import Annotated

import anyio
import typer

from satchel.agent import Agent, Model, RunResult, model_from_string
from satchel.cli._common import JsonFlag, echo_json, load_object, load_registry
from satchel.cli._store import DbOption, open_store
from satchel.registry import ToolRegistry, merged
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
    tools: Annotated[
        list[str] | None,
        typer.Option(
            "--tools",
            "-t",
            metavar="MODULE:ATTR",
            help="More tools beside the memory tools (a ToolRegistry); repeatable.",
        ),
    ] = None,
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
    extra = [load_registry(target) for target in tools or ()]
    rules: list[ToolRule] = [MaxCalls(max_calls)] if max_calls is not None else []
    result = anyio.run(_run, chosen, prompt, agent, conversation, db, extra, max_steps, rules)
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


async def _run(
    model: Model,
    prompt: str,
    agent: str,
    conversation: str,
    db: str | None,
    extra: list[ToolRegistry],
    max_steps: int,
    rules: list[ToolRule],
) -> RunResult:
    store = await open_store(db, create=True)
    try:
        await store.ensure_agent(agent)
        tools = merged(*extra) if extra else None
        runner = Agent(agent, model, tools=tools, memory=store, max_steps=max_steps, rules=rules)
        result = await runner.run(prompt, conversation_id=conversation)
    finally:
        await store.close()
        close = getattr(model, "aclose", None)
        if close is not None:
            await close()
    return result
