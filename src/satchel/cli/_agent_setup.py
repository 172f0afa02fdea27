"""What ``satchel run`` and ``satchel chat`` share: their options as one
:class:`AgentOptions`, checked once (:func:`agent_setup`), and the opened agent
(:func:`opened_agent`): the memory store ``--db`` names, its approval broker (and, for an
agent imported from a Letta Agent File, its system prompt and tool rules), and beside
the memory tools (all four, fewer with ``--replace``, none with ``--no-memory``) the
``--tools`` registries and ``--mount`` servers, gated for approval as under ``serve``
and, with ``--lazy``, behind the meta-tools."""

from __future__ import annotations

import os
from collections.abc import AsyncGenerator, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated

import typer

from satchel.agent import Agent, Model, model_from_string
from satchel.agent._sdk import DEFAULT_TIMEOUT
from satchel.agentfile import load_profile
from satchel.builtin import BuiltinTools
from satchel.channels import ChannelConfig
from satchel.cli._builtin_options import check_replace
from satchel.cli._channels import channels_config, open_channels
from satchel.cli._common import load_object, option_errors
from satchel.cli._embed_options import EmbedderChoice, resolve_embedder
from satchel.cli._serve_args import MountSpec, parse_mount
from satchel.cli._store import resolve_db_location
from satchel.consent import AnsweredConsent, PermissionBroker, open_approval_store, with_approval
from satchel.memory import ConsentHandler, open_store
from satchel.meta import MetaTools
from satchel.registry import BaseRegistry, merged
from satchel.rules import MaxCalls, ToolRule
from satchel.serve import load_tools

__all__ = [
    "DEFAULT_TIMEOUT",
    "AgentOptions",
    "AgentSetup",
    "BaseUrlOption",
    "ConversationOption",
    "LazyOption",
    "MaxCallsOption",
    "MaxStepsOption",
    "ModelOption",
    "MountOption",
    "TimeoutOption",
    "ToolsOption",
    "agent_setup",
    "opened_agent",
    "resolve_model",
]

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
BaseUrlOption = Annotated[
    str | None,
    typer.Option(
        "--base-url",
        metavar="URL",
        help="Another server for the provider: an OpenAI-compatible one (vLLM, llama.cpp, "
        "Ollama, LM Studio, ...). Default: $OPENAI_BASE_URL or $ANTHROPIC_BASE_URL, else "
        "the provider's own.",
    ),
]
TimeoutOption = Annotated[
    float,
    typer.Option(
        "--timeout",
        envvar="SATCHEL_TIMEOUT",
        metavar="SECONDS",
        min=0.001,
        help="How long the model may take to answer one request, retries included (a "
        "streamed reply must start within it and never pause longer); connecting gets at "
        "most 5 s of it. For openai: and anthropic: models.",
    ),
]
ConversationOption = Annotated[
    str, typer.Option("--conversation", metavar="ID", help="The conversation to continue.")
]
MaxStepsOption = Annotated[
    int, typer.Option("--max-steps", min=1, help="Model requests per turn, at most.")
]
MaxCallsOption = Annotated[
    int | None, typer.Option("--max-calls", min=1, help="Tool calls per turn, at most.")
]
ToolsOption = Annotated[
    list[str] | None,
    typer.Option(
        "--tools",
        "-t",
        metavar="MODULE:ATTR",
        help="More tools beside the memory tools (a ToolRegistry); repeatable.",
    ),
]
MountOption = Annotated[
    list[str] | None,
    typer.Option(
        "--mount",
        metavar="PREFIX=COMMAND|PREFIX=URL",
        help="Bring another MCP server's tools in as PREFIX_name; repeatable.",
    ),
]
LazyOption = Annotated[
    bool,
    typer.Option(
        "--lazy",
        help="Put the --tools and --mount tools behind the meta-tools (discover_tools, "
        "get_tool_schema, invoke_tool); the memory tools stay direct.",
    ),
]


def resolve_model(spec: str, base_url: str | None, timeout: float = DEFAULT_TIMEOUT) -> Model:
    """The model ``--model`` names: a provider model (its requests bounded by
    ``timeout`` seconds), or a Model object to import.

    Raises:
        typer.BadParameter: the spec names neither.
    """
    provider = spec.partition(":")[0]
    if provider in ("openai", "anthropic"):
        return model_from_string(spec, base_url=base_url, timeout=timeout)
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


@dataclass(frozen=True, kw_only=True)
class AgentSetup:
    """The checked options of ``run`` and ``chat``."""

    model: Model
    agent: str
    conversation: str
    db: str | None
    registries: tuple[BaseRegistry, ...]
    mounts: tuple[MountSpec, ...]
    lazy: bool
    max_steps: int
    rules: tuple[ToolRule, ...]
    builtins: BuiltinTools = field(default_factory=BuiltinTools)
    """The built-in memory tools the agent gets (``--replace``, ``--no-memory``)."""
    channels: ChannelConfig = field(default_factory=ChannelConfig)
    embedder: EmbedderChoice = "default"
    """Memory's embedding model (``--embedder``)."""


@dataclass(frozen=True, kw_only=True)
class AgentOptions:
    """The options ``run`` and ``chat`` share, as given on the command line; each
    default is the command's. :func:`agent_setup` checks them."""

    model: str = "openai:gpt-4o-mini"
    base_url: str | None = None
    agent: str = "default"
    conversation: str = "default"
    db: str | None = None
    embedder: str | None = None
    embed_base_url: str | None = None
    tools: Sequence[str] = ()
    mounts: Sequence[str] = ()
    lazy: bool = False
    replace: Sequence[str] = ()
    no_memory: bool = False
    max_steps: int = 20
    max_calls: int | None = None
    channels: Path | None = None
    timeout: float = DEFAULT_TIMEOUT


def agent_setup(options: AgentOptions) -> AgentSetup:
    """Check every option before anything runs.

    Raises:
        typer.BadParameter: an empty agent, a bad model, ``--tools``, ``--mount``,
            ``--db``, ``--replace`` or ``--channels``.
    """
    if not options.agent.strip():
        raise typer.BadParameter("must not be empty.", param_hint="'--agent'")
    replaced = check_replace(options.replace, no_memory=options.no_memory, tools=options.tools)
    resolve_db_location(options.db, must_exist=False)
    with option_errors():
        registries = load_tools(options.tools, replace=replaced)
    return AgentSetup(
        model=resolve_model(options.model, options.base_url, options.timeout),
        agent=options.agent,
        conversation=options.conversation,
        db=options.db,
        registries=tuple(registry for _, registry in registries),
        mounts=tuple(parse_mount(value) for value in options.mounts),
        lazy=options.lazy,
        max_steps=options.max_steps,
        rules=(MaxCalls(options.max_calls),) if options.max_calls is not None else (),
        builtins=(
            BuiltinTools(include=()) if options.no_memory else BuiltinTools(exclude=replaced)
        ),
        channels=channels_config(options.channels),
        embedder=resolve_embedder(options.embedder, options.embed_base_url),
    )


@asynccontextmanager
async def opened_agent(
    setup: AgentSetup,
    *,
    origin: str,
    consent: ConsentHandler | None = None,
    stream: bool = False,
) -> AsyncGenerator[tuple[Agent, PermissionBroker]]:
    """The agent on its opened store, and the broker its held calls wait on; the
    store, the mounted servers and the model's connections close on exit.
    ``send_message`` reaches the ``--channels`` the setup names."""
    where = resolve_db_location(setup.db, must_exist=False)
    async with AsyncExitStack() as stack:
        broker = await stack.enter_async_context(
            PermissionBroker(open_approval_store(where), origin=origin)
        )
        # a write from a chat whose person answers there (satchel up) asks the broker;
        # every other write goes to ``consent`` (or fails without it) as before
        store = await open_store(
            where, consent=AnsweredConsent(broker, consent), embedder=setup.embedder
        )
        stack.push_async_callback(store.close)
        close = getattr(setup.model, "aclose", None)
        if close is not None:
            stack.push_async_callback(close)
        await store.ensure_agent(setup.agent)
        router = await open_channels(
            stack, setup.channels, store, broker, db=str(where), is_url=isinstance(where, str)
        )
        agent = Agent(
            setup.agent,
            setup.model,
            tools=await _extra_tools(stack, setup, broker),
            memory=store,
            router=router,
            rules=setup.rules,
            max_steps=setup.max_steps,
            conversation_id=setup.conversation,
            stream=stream,
            builtins=setup.builtins,
            broker=broker,
        )
        profile = await load_profile(store, setup.agent)
        if profile is not None:  # imported from a Letta Agent File (satchel agent import)
            agent.instructions = profile.instructions
            agent.rules = [*agent.rules, *profile.rules_for(agent.tools.names())]
        yield agent, broker


async def _extra_tools(
    stack: AsyncExitStack, setup: AgentSetup, broker: PermissionBroker
) -> BaseRegistry | None:
    if not setup.registries and not setup.mounts:
        return None
    from satchel.mcp import mount_mcp  # the MCP SDK loads only when a server is mounted

    catalog = merged(*setup.registries)
    for spec in setup.mounts:
        await stack.enter_async_context(
            mount_mcp(
                catalog,
                prefix=spec.prefix,
                command=spec.command,
                args=spec.args,
                url=spec.url,
                env=dict(os.environ) if spec.command else None,
            )
        )
    if setup.lazy:
        meta = MetaTools(catalog, broker=broker, dialect="openai")
        await meta.prepare()
        return meta.registry
    return with_approval(catalog, broker)
