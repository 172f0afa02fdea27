"""``satchel serve``: run an MCP server over stdio (the default) or streamable HTTP.

The command line is :mod:`satchel.cli._serve_command`; this module builds and runs what
it asks for.

What it serves is built in steps, so each feature has one place to go:

1. At startup the memory store at ``--db`` (default: :func:`~satchel.memory.default_path`)
   and a :class:`~satchel.consent.PermissionBroker` on the same file are opened; both are
   closed at shutdown. The ``--agent`` is set up with its starting blocks the first time
   it is served (:meth:`~satchel.memory.MemoryStore.ensure_agent`: ``persona`` and
   ``human``, or ``--template``'s).
2. :func:`build_catalog` gathers every tool: the built-in memory tools
   (:func:`memory_tools`: ``context``, ``recall``, ``search``, ``send_message``, minus
   those ``--replace`` hands to a ``--tools`` registry; none with ``--no-memory``) and
   each ``--tools`` registry. ``--mount`` servers are then mounted into the catalog,
   and :func:`add_chains` registers the ``--chains`` over all of it (a chain may use a
   mounted tool).
3. :func:`served_registry` decides what clients see: the catalog behind the approval
   gate (:func:`~satchel.mcp.with_mcp_approval`), or with ``--lazy`` the three
   meta-tools over it (gated by the same broker) plus the ``--pin`` tools.
4. Every tool's :class:`~satchel.ToolContext` carries the agent's memory, the message
   router and the broker (``ctx.memory``, ``ctx.router``, ``ctx.broker``). Unless
   ``--no-memory``, the server gets the agent's rendered context as its
   ``instructions`` and as the ``memory`` prompt (:class:`~satchel.mcp.MemoryPrompts`),
   and its memory blocks as resources (:class:`~satchel.mcp.MemoryResources`); memory
   writes announce ``resources/list_changed``, and ``resources/updated`` to clients subscribed to a
   block that changed (also when another process changed it).

``--channels FILE`` (:mod:`satchel.channels`) gives ``send_message`` its Discord,
Bluesky and webhook endpoints (it offers only those) and announces consent requests on
the channel they came from.

Memory writes are decided by the block's permission alone (DESIGN §4): at
``read_write`` and ``admin`` they run at once, a ``partner``/``human`` block asks for
consent and waits at most ``--consent-wait`` seconds (see
:class:`~satchel.mcp.MemoryConsent`). satchel's own approval gate holds the calls of
other tools that ``--approve`` names (destructive ones by default): the client's human
approves through elicitation when the client supports it, else the call returns
``pending_confirmation`` and ``satchel approvals approve ID --db ...`` decides; the
model then calls again with ``approval_id``. Every approval binds to ``--agent``.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Awaitable, Callable, Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

import anyio
import typer

from satchel._errors import SatchelUsageError
from satchel._throttle import LoginThrottle
from satchel.cli._approvals import approval_store
from satchel.cli._builtin_options import (
    check_replacements,
)
from satchel.cli._channels import open_channels
from satchel.cli._common import load_registry
from satchel.cli._listen import (
    listen_problem,
)
from satchel.cli._mirror import ServeMirrors
from satchel.cli._serve_args import (
    MountSpec,
    attach_headers,
    parse_http,
    parse_mount,
    parse_mount_header,
)
from satchel.cli._store import resolve_db_location
from satchel.compose import load_chains
from satchel.consent import ApprovalPolicy, PermissionBroker
from satchel.memory import (
    DEFAULT_GLOBAL_LABELS,
    AgentTemplate,
    MemoryStore,
    Project,
    open_store,
)
from satchel.meta import MetaTools
from satchel.registry import BaseRegistry, ToolRegistry, merged, with_write_hook

if TYPE_CHECKING:
    from satchel.builtin import BuiltinTools, MessageRouter
    from satchel.channels import ChannelConfig
    from satchel.embed import Embedder
    from satchel.mcp import SatchelServer
    from satchel.meta import UsageStore
    from satchel.toolkit import ToolkitConfig

__all__ = [
    "MountSpec",
    "ServeOptions",
    "add_chains",
    "attach_headers",
    "build_catalog",
    "memory_tools",
    "parse_http",
    "parse_mount",
    "parse_mount_header",
    "run_serve",
    "served_registry",
]

logger = logging.getLogger("satchel.cli.serve")

AUTO_AGENT = "auto"
"""``--agent auto``: each client's memory is the project it has open."""


@dataclass(frozen=True, kw_only=True)
class ServeOptions:
    """What ``satchel serve`` was asked to serve."""

    tools: tuple[str, ...] = ()
    chains: tuple[Path, ...] = ()
    """Config files of chains (``--chains``), registered over every tool served."""
    lazy: bool = False
    pins: tuple[str, ...] = ()
    agent: str = "default"
    db: Path | str | None = None
    mounts: tuple[MountSpec, ...] = field(default=())
    consent_wait: float = 5.0
    approve: ApprovalPolicy = ApprovalPolicy.DESTRUCTIVE
    """Which calls of tools outside memory wait for a human (``--approve``)."""
    template: AgentTemplate | None = None
    """The starting blocks of a new agent; ``None`` for persona and human."""
    toolkit: ToolkitConfig | None = None
    """``--toolkit productivity``'s configuration; ``None`` to serve no toolkit."""
    global_agent: str = "default"
    """With ``agent="auto"``: the person's own agent (used without workspace roots)."""
    global_labels: tuple[str, ...] = DEFAULT_GLOBAL_LABELS
    """With ``agent="auto"``: the person's blocks shared into every project."""
    project_root: str | None = None
    """With ``agent="auto"``: the workspace used when a client gives no roots
    (``--project-root``, made absolute against the working directory)."""
    mirror: Path | None = None
    """``--mirror``: a folder of Markdown files kept in step with memory."""
    learn: bool = True
    """``--learn/--no-learn``: with ``--lazy``, learn from use which tool serves which
    request (kept in the memory database; in memory for a PostgreSQL one)."""

    replace: tuple[str, ...] = ()
    """Built-in tools a ``--tools`` registry replaces (``--replace``)."""
    memory: bool = True
    """Serve the built-in memory tools and the memory resources (not ``--no-memory``)."""

    channels: ChannelConfig | None = None
    """``--channels``: what ``send_message`` reaches besides the user and other agents."""

    console: bool = True
    """With ``--http``: also serve the memory console at ``/console`` (``--no-console``
    to leave it out)."""

    @property
    def per_project(self) -> bool:
        """Whether each client's memory is its project's (``--agent auto``)."""
        return self.agent == AUTO_AGENT

    @property
    def person(self) -> str:
        """The agent used when no project decides: ``--agent``, or with ``auto`` the
        ``--person``."""
        return self.global_agent if self.per_project else self.agent


# -- what is served --------------------------------------------------------------------


def memory_tools(
    store: MemoryStore | None,
    *,
    on_write: Callable[[], None] | None = None,
    global_agent: str | None = None,
    builtins: BuiltinTools | None = None,
    router: MessageRouter | None = None,
) -> BaseRegistry | None:
    """The built-in memory tools (``context``, ``recall``, ``search``,
    ``send_message``) on ``store``; ``None`` without a store.

    The acting agent is each call's ``ctx.agent`` (``--agent`` when served).

    Args:
        store: The opened memory store.
        on_write: Called after every successful call that may have written memory
            (to announce that the memory resources changed).
        global_agent: With ``--agent auto``, the person's own agent, which ``search``
            covers beside the project's (when ``builtins`` is not given).
        builtins: Which built-ins (all four by default; ``--replace`` leaves out those
            a ``--tools`` registry serves instead).
        router: Delivers ``send_message`` (``--channels``); the user and other agents
            only by default.
    """
    if store is None:
        return None
    from satchel.builtin import BuiltinTools

    chosen = builtins or BuiltinTools(global_agent=global_agent)
    tools = chosen.build(store, router=router)
    if on_write is None:
        return tools
    return with_write_hook(tools, on_write)


def build_catalog(
    options: ServeOptions,
    *,
    memory: BaseRegistry | None = None,
    toolkit: ToolRegistry | None = None,
) -> ToolRegistry:
    """Every tool ``satchel serve`` offers, before ``--lazy`` hides them behind the
    meta-tools: the memory built-ins (``memory``, see :func:`memory_tools`), then each
    ``--tools`` registry.

    They are merged into one live view (:func:`~satchel.registry.merged`) that
    follows each source and takes the mounted servers' tools; a name defined twice is
    an error.

    With ``--replace NAME`` the memory tools come without the built-in ``NAME``, and a
    ``--tools`` registry must define it.

    Raises:
        typer.BadParameter: a ``--tools`` target cannot be loaded, or no ``--tools``
            registry defines a ``--replace`` name.
        SatchelUsageError: two sources define the same tool name.
    """
    sources: list[tuple[str, BaseRegistry]] = []
    if memory is not None:
        sources.append(("the memory tools", memory))
    if toolkit is not None:
        sources.append(("the productivity toolkit", toolkit))
    users = [(target, load_registry(target)) for target in options.tools]
    check_replacements(options.replace, users)
    sources += users
    origin: dict[str, str] = {}
    for label, registry in sources:
        for name in registry.names():
            if name in origin:
                raise SatchelUsageError(
                    f"The tool {name!r} is defined by both {origin[name]} and {label}; "
                    "serve one of them, or rename a tool."
                )
            origin[name] = label
    return merged(*(registry for _, registry in sources))


def add_chains(options: ServeOptions, catalog: ToolRegistry) -> None:
    """Register the ``--chains`` files' chains over ``catalog``, once the ``--mount``
    servers' tools are in it, so a chain's steps may be mounted tools.

    Raises:
        SatchelUsageError: a chain names a tool the catalog lacks, or does not check.
    """
    for path in options.chains:
        load_chains(path, catalog)


async def _usage_store(stack: AsyncExitStack, where: str | Path) -> UsageStore:
    """Where ``--lazy`` keeps the pairs it learns: in the memory database, closed with
    the server."""
    if isinstance(where, Path):
        from satchel.meta import SQLiteUsageStore

        usage = SQLiteUsageStore(where)
        stack.callback(usage.close)
        return usage
    from satchel.meta import PostgresUsageStore

    pg_usage = PostgresUsageStore(where)
    stack.push_async_callback(pg_usage.close)
    return pg_usage


def _meta_tools(
    catalog: ToolRegistry,
    pins: Sequence[str],
    broker: PermissionBroker | None,
    approve: ApprovalPolicy = ApprovalPolicy.DESTRUCTIVE,
    *,
    learn: bool = True,
    usage: UsageStore | None = None,
) -> MetaTools:
    return MetaTools(
        catalog,
        broker=broker,
        dialect="mcp",
        pinned=pins,
        approval=approve,
        learn=learn,
        usage=usage,
    )


def _check_pins(catalog: ToolRegistry, options: ServeOptions) -> None:
    missing = [name for name in options.pins if name not in catalog]
    if missing:
        raise typer.BadParameter(
            f"no tool called {', '.join(repr(n) for n in missing)} to pin; the tools are "
            f"{', '.join(catalog.names()) or '(none)'}.",
            param_hint="'--pin'",
        )


def served_registry(
    catalog: ToolRegistry, options: ServeOptions, *, broker: PermissionBroker | None = None
) -> BaseRegistry:
    """What clients see: the catalog, or with ``--lazy`` the meta-tools over it and the
    ``--pin`` tools beside them.

    Args:
        catalog: Every tool (see :func:`build_catalog`).
        options: What was asked for.
        broker: Approves the calls ``options.approve`` holds (never a memory tool's).
            Directly served tools are gated with :func:`~satchel.mcp.with_mcp_approval`
            (elicitation, or an ``approval_id`` argument); the meta-tools gate
            ``invoke_tool`` and the pinned tools with it. Without a broker the catalog
            is served ungated (and the meta-tools use their own in-memory broker).

    Raises:
        typer.BadParameter: ``--pin`` names a tool the catalog lacks, or ``--lazy`` is
            asked for without the meta-tools.
    """
    if not options.lazy:
        if broker is None:
            return catalog
        from satchel.mcp import with_mcp_approval

        return with_mcp_approval(catalog, broker, policy=options.approve)
    _check_pins(catalog, options)
    return _meta_tools(catalog, options.pins, broker, options.approve).registry


def _embedder() -> Embedder | None:
    """The local embedder, or ``None`` (keyword search only) without its model files."""
    from satchel.embed import default_embedder

    try:
        return default_embedder()
    except SatchelUsageError as exc:
        logger.warning("searching by keywords only: %s", exc.message)
        return None


# -- running ------------------------------------------------------------------------


async def run_serve(options: ServeOptions, http: tuple[str, int] | None, token: str | None) -> None:
    """Serve what ``options`` ask for, over stdio (``http`` is ``None``) or streamable
    HTTP at ``(host, port)``, until the client leaves or the process is interrupted."""
    from satchel.builtin import BuiltinTools, MessageRouter, render_context
    from satchel.mcp import (  # the MCP SDK loads only to serve
        MemoryConsent,
        MemoryPrompts,
        MemoryResources,
        ProjectAgents,
        create_server,
        mount_mcp,
    )

    db = None if options.db is None else str(options.db)
    where = resolve_db_location(db, must_exist=False)
    server: SatchelServer | None = None
    mirrors: ServeMirrors | None = None

    def changed() -> None:
        if server is not None:
            server.notify_resources_changed()

    def announce() -> None:
        changed()
        if mirrors is not None:
            mirrors.poke()

    async with AsyncExitStack() as stack:
        approvals = approval_store(db, must_exist=False)
        broker = await stack.enter_async_context(PermissionBroker(approvals, origin="mcp"))
        consent = MemoryConsent(broker, wait=options.consent_wait)
        store = await open_store(where, embedder=_embedder(), consent=consent)
        stack.push_async_callback(store.close)
        shown = "a PostgreSQL database" if isinstance(where, str) else where  # no password
        person = options.person
        logger.info("memory of agent %r in %s", person, shown)
        if options.memory:
            await store.ensure_agent(person, options.template)
        router = MessageRouter(store)  # the user and other agents; --channels adds more
        if options.channels is not None:
            router = await open_channels(
                stack, options.channels, store, broker, db=str(where), is_url=isinstance(where, str)
            )
        if options.mirror is not None and options.memory:
            group = await stack.enter_async_context(anyio.create_task_group())
            stack.callback(group.cancel_scope.cancel)
            mirrors = ServeMirrors(
                store, options.mirror, group, per_project=options.per_project, on_change=changed
            )
            await mirrors.add(person)
        toolkit = None
        if options.toolkit is not None:
            from satchel.toolkit import productivity_toolkit

            toolkit = productivity_toolkit(options.toolkit, store=store)
        memory = None
        if options.memory:
            builtins = BuiltinTools(
                exclude=options.replace,
                global_agent=person if options.per_project else None,
            )
            memory = memory_tools(store, on_write=announce, builtins=builtins, router=router)
        catalog = build_catalog(options, memory=memory, toolkit=toolkit)
        for spec in options.mounts:
            await stack.enter_async_context(
                mount_mcp(
                    catalog,
                    prefix=spec.prefix,
                    command=spec.command,
                    args=spec.args,
                    url=spec.url,
                    headers=dict(spec.headers) or None,
                )
            )
        add_chains(options, catalog)
        if options.lazy:
            _check_pins(catalog, options)
            usage = await _usage_store(stack, where)  # learned pairs beside memory
            meta = _meta_tools(
                catalog, options.pins, broker, options.approve, learn=options.learn, usage=usage
            )
            await meta.prepare()
            served = meta.registry
        else:
            served = served_registry(catalog, options, broker=broker)
        instructions = (
            await render_context(store, person, served)
            if options.memory
            else served.usage_rules() or None
        )
        agents = None
        if options.per_project:
            agents = ProjectAgents(
                store,
                person=person,
                template=options.template,
                global_labels=options.global_labels,
                fallback_root=options.project_root,
                on_project=None if mirrors is None else _mirror_project(mirrors),
            )
            instructions = _per_project_note(options) + "\n\n" + (instructions or "")
        server = create_server(
            served,
            agent=person,
            agents=agents,
            instructions=instructions,
            resources=MemoryResources(store, served) if options.memory else None,
            prompts=MemoryPrompts(store, served) if options.memory else None,
            memory=store,
            router=router,
            broker=broker,
        )
        if toolkit is not None:
            await _deliver_reminders(stack, toolkit, person, server)
        if http is None:
            if os.isatty(0):  # a person started it by hand, not a client on a pipe
                typer.echo(_waiting_on_stdin(person), err=True)
            await server.run_stdio()
            return

        listening = False

        def ready(url: str) -> None:
            nonlocal listening
            listening = True
            typer.echo(f"satchel: serving MCP at {url}", err=True)

        host, port = http
        mounts = None
        throttle = LoginThrottle()  # one limit on guessing the token, /mcp and /console
        if options.console:
            from satchel.console import console_app

            console = console_app(store, broker, token=token, agent=person, throttle=throttle)
            mounts = {"/console": console}
        try:
            await server.run_http(
                host, port, token=token, on_ready=ready, mounts=mounts, throttle=throttle
            )
        except OSError as exc:
            if listening:
                raise
            # taken between the check at startup and now
            raise typer.BadParameter(
                listen_problem(exc, host, port), param_hint="'--http'"
            ) from None


async def _deliver_reminders(
    stack: AsyncExitStack, toolkit: ToolRegistry, agent: str, server: SatchelServer
) -> None:
    """While serving, deliver the toolkit's reminders at their time: into the agent's
    working memory and conversation, and to subscribed clients as
    ``notifications/resources/updated`` of the agent's context (and a changed resource
    list, since a block was loaded)."""
    from satchel.mcp import MemoryResources
    from satchel.toolkit import deliver_reminders, reminder_agenda

    agenda = reminder_agenda(toolkit)
    if agenda is None:
        return

    async def notify(whose: str, _reminder: object) -> None:
        server.notify_resources_changed(MemoryResources.context_uri(whose))
        server.notify_resources_changed()

    group = await stack.enter_async_context(anyio.create_task_group())
    stack.callback(group.cancel_scope.cancel)
    group.start_soon(partial(deliver_reminders, agenda, [agent], notify=notify))


def _mirror_project(mirrors: ServeMirrors) -> Callable[[Project], Awaitable[None]]:
    async def add(project: Project) -> None:
        await mirrors.add(project.agent, required=False)  # a session never fails for it

    return add


def _per_project_note(options: ServeOptions) -> str:
    """What the server's instructions say of ``--agent auto``."""
    shared = ", ".join(repr(label) for label in options.global_labels) or "none"
    return (
        "Memory is per project. When this client shares its workspace roots, the memory "
        "you read and write is the project's (its 'project' block holds what you learn "
        f"about the project), and the person's own blocks ({shared}) are shared into "
        "every project. This client shared no roots when these instructions were written: "
        + (
            f"until it does, the memory is the person's own ({options.global_agent!r})."
            if options.project_root is None
            else f"until it does, the memory is the project's at {options.project_root}."
        )
    )


def _waiting_on_stdin(agent: str) -> str:
    """The one line ``serve`` prints when a person started it on a terminal."""
    return (
        f"satchel: serving the memory of agent {agent!r} over MCP; waiting for an MCP "
        "client on stdin (Ctrl-C to stop). MCP clients start this command themselves: "
        "see `satchel install --help` to add it to one."
    )
