"""Running what :class:`ServeOptions` ask for (:func:`run_serve`): open the memory store
and its approval broker, gather the catalog, decide what clients see, and serve it over
stdio or streamable HTTP until the client leaves."""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

import anyio

from satchel._errors import SatchelUsageError
from satchel._throttle import LoginThrottle
from satchel.consent import PermissionBroker, open_approval_store
from satchel.memory import MemoryStore, Project, open_store
from satchel.registry import BaseRegistry, ToolRegistry
from satchel.serve._catalog import (
    add_chains,
    build_catalog,
    check_pins,
    memory_tools,
    meta_tools,
    served_registry,
)
from satchel.serve._channels import open_channels, open_reminder_channels
from satchel.serve._listen import listen_problem
from satchel.serve._location import database_location
from satchel.serve._mirrors import ServeMirrors, log_report
from satchel.serve._options import ServeOptions, option_error

if TYPE_CHECKING:
    from satchel.builtin import MessageRouter
    from satchel.embed import Embedder
    from satchel.mcp import SatchelServer
    from satchel.meta import UsageStore

__all__ = ["run_serve"]

logger = logging.getLogger("satchel.serve")


class _Notices:
    """Who hears that memory changed, once each exists: the server's clients (the
    resources changed) and the Markdown mirrors."""

    def __init__(self) -> None:
        self.server: SatchelServer | None = None
        self.mirrors: ServeMirrors | None = None

    def changed(self) -> None:
        if self.server is not None:
            self.server.notify_resources_changed()

    def written(self) -> None:
        self.changed()
        if self.mirrors is not None:
            self.mirrors.poke()


async def run_serve(options: ServeOptions) -> None:
    """Serve what ``options`` ask for, over stdio (``options.http`` is ``None``) or
    streamable HTTP, until the client leaves or the process is interrupted: exactly
    what ``satchel serve`` does with the same options.

    Raises:
        SatchelUsageError: an option's value cannot be served (a ``tools`` target that
            does not load, a ``pins`` name the catalog lacks, an address that cannot be
            listened on...; ``details["option"]`` names the option), or two sources
            define the same tool.
    """
    from satchel.mcp import MemoryConsent  # the MCP SDK loads only to serve

    where = database_location(options.db)
    notices = _Notices()
    async with AsyncExitStack() as stack:
        approvals = open_approval_store(where)
        broker = await stack.enter_async_context(PermissionBroker(approvals, origin="mcp"))
        consent = MemoryConsent(broker, wait=options.consent_wait)
        embedder = _embedder() if options.embedder == "default" else options.embedder
        store = await open_store(where, embedder=embedder, consent=consent)
        stack.push_async_callback(store.close)
        shown = "a PostgreSQL database" if isinstance(where, str) else where  # no password
        logger.info("memory of agent %r in %s", options.person, shown)
        if options.memory:
            await store.ensure_agent(options.person, options.template)
        router = await _router(stack, options, store, broker, where)
        notices.mirrors = await _mirrors(stack, options, store, notices.changed)
        toolkit = _toolkit(options, store)
        memory = _memory(options, store, router, notices.written)
        files = await _sources(stack, options, store)
        catalog = build_catalog(options, memory=memory, toolkit=toolkit, files=files)
        await _mount(stack, options, catalog)
        add_chains(options, catalog)
        served = await _served(stack, options, catalog, broker, where)
        server = await _server(options, store, served, router, broker, notices.mirrors)
        notices.server = server
        if toolkit is not None:
            await _deliver_reminders(stack, toolkit, options, server)
        await _transport(options, server, store, broker)


def _embedder() -> Embedder | None:
    """The local embedder, or ``None`` (keyword search only) without its model files."""
    from satchel.embed import default_embedder

    try:
        return default_embedder()
    except SatchelUsageError as exc:
        logger.warning("searching by keywords only: %s", exc.message)
        return None


async def _router(
    stack: AsyncExitStack,
    options: ServeOptions,
    store: MemoryStore,
    broker: PermissionBroker,
    where: str | Path,
) -> MessageRouter:
    """The user and other agents; ``options.channels`` adds more."""
    if options.channels is None:
        from satchel.builtin import MessageRouter

        return MessageRouter(store)
    return await open_channels(
        stack, options.channels, store, broker, db=str(where), is_url=isinstance(where, str)
    )


async def _mirrors(
    stack: AsyncExitStack, options: ServeOptions, store: MemoryStore, changed: Callable[[], None]
) -> ServeMirrors | None:
    """The ``options.mirror`` folder's mirrors, started for the person; run until the
    server stops."""
    if options.mirror is None or not options.memory:
        return None
    group = await stack.enter_async_context(anyio.create_task_group())
    stack.callback(group.cancel_scope.cancel)
    mirrors = ServeMirrors(
        store,
        options.mirror,
        group,
        per_project=options.per_project,
        on_change=changed,
        on_report=options.on_mirror_report or log_report,
    )
    await mirrors.add(options.person)
    return mirrors


async def _sources(
    stack: AsyncExitStack, options: ServeOptions, store: MemoryStore
) -> ToolRegistry | None:
    """The file tools, when the person's agent has sources (``satchel sources add``),
    and a watch that keeps them current while serving."""
    if not options.memory:
        return None
    from satchel.sources import SourceIndex, source_tools, watch_sources

    index = SourceIndex(store, options.person)
    if not await index.roots():
        return None
    group = await stack.enter_async_context(anyio.create_task_group())
    stack.callback(group.cancel_scope.cancel)
    group.start_soon(partial(watch_sources, index))
    return ToolRegistry(source_tools(store))


def _toolkit(options: ServeOptions, store: MemoryStore) -> ToolRegistry | None:
    if options.toolkit is None:
        return None
    from satchel.toolkit import productivity_toolkit

    return productivity_toolkit(options.toolkit, store=store)


def _memory(
    options: ServeOptions,
    store: MemoryStore,
    router: MessageRouter,
    on_write: Callable[[], None],
) -> BaseRegistry | None:
    """The built-in memory tools asked for (none without ``options.memory``)."""
    if not options.memory:
        return None
    from satchel.builtin import BuiltinTools

    builtins = BuiltinTools(
        exclude=options.replace,
        global_agent=options.person if options.per_project else None,
    )
    return memory_tools(store, on_write=on_write, builtins=builtins, router=router)


async def _mount(stack: AsyncExitStack, options: ServeOptions, catalog: ToolRegistry) -> None:
    """Mount each ``options.mounts`` server's tools into ``catalog`` until the server
    stops."""
    from satchel.mcp import mount_mcp

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


async def _usage_store(stack: AsyncExitStack, where: str | Path) -> UsageStore:
    """Where ``--lazy`` keeps the pairs it learns: in the memory database (whichever
    backend :func:`satchel.db.open_database` gives), closed with the server."""
    from satchel.meta import open_usage_store

    usage = open_usage_store(where)

    async def close() -> None:
        closing: object = getattr(usage, "close", None)
        if callable(closing):
            done = closing()
            if inspect.isawaitable(done):
                await done

    stack.push_async_callback(close)
    return usage


async def _served(
    stack: AsyncExitStack,
    options: ServeOptions,
    catalog: ToolRegistry,
    broker: PermissionBroker,
    where: str | Path,
) -> BaseRegistry:
    """What clients see (:func:`served_registry`); with ``--lazy`` the meta-tools
    learn beside memory and are prepared before the first client."""
    if not options.lazy:
        return served_registry(catalog, options, broker=broker)
    check_pins(catalog, options)
    usage = await _usage_store(stack, where)  # learned pairs beside memory
    meta = meta_tools(catalog, options, broker, usage=usage)
    await meta.prepare()
    return meta.registry


async def _server(
    options: ServeOptions,
    store: MemoryStore,
    served: BaseRegistry,
    router: MessageRouter,
    broker: PermissionBroker,
    mirrors: ServeMirrors | None,
) -> SatchelServer:
    """The MCP server of ``served``, with the memory's instructions, prompts and
    resources (unless ``--no-memory``) and, with ``--agent auto``, the client's
    project."""
    from satchel.builtin import render_context
    from satchel.mcp import MemoryPrompts, MemoryResources, ProjectAgents, create_server

    person = options.person
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
    return create_server(
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


def _log_ready(url: str | None) -> None:
    logger.info("serving MCP %s", "over stdio" if url is None else f"at {url}")


async def _transport(
    options: ServeOptions, server: SatchelServer, store: MemoryStore, broker: PermissionBroker
) -> None:
    """Serve over stdio, or over HTTP at ``options.http`` (with the console at
    ``/console`` unless ``options.console`` is false)."""
    on_ready = options.on_ready or _log_ready
    if options.http is None:
        on_ready(None)
        await server.run_stdio()
        return

    listening = False

    def ready(url: str) -> None:
        nonlocal listening
        listening = True
        on_ready(url)

    host, port = options.http
    mounts = None
    throttle = LoginThrottle()  # one limit on guessing the token, /mcp and /console
    if options.console:
        from satchel.console import console_app

        console = console_app(
            store, broker, token=options.token, agent=options.person, throttle=throttle
        )
        mounts = {"/console": console}
    try:
        await server.run_http(
            host, port, token=options.token, on_ready=ready, mounts=mounts, throttle=throttle
        )
    except OSError as exc:
        if listening:
            raise
        # taken between the check at startup and now
        raise option_error("--http", listen_problem(exc, host, port)) from None


async def _deliver_reminders(
    stack: AsyncExitStack, toolkit: ToolRegistry, options: ServeOptions, server: SatchelServer
) -> None:
    """While serving, deliver the toolkit's reminders (and overdue tasks' nudges) at
    their time: into the agent's working memory and conversation, to subscribed clients
    as ``notifications/resources/updated`` of the agent's context (and a changed
    resource list, since a block was loaded), and to the person on each inbound channel
    ``options.channels`` configures."""
    from satchel.channels import notify_channels
    from satchel.mcp import MemoryResources
    from satchel.toolkit import Reminder, deliver_reminders, reminder_agenda

    agenda = reminder_agenda(toolkit)
    if agenda is None:
        return
    agent = options.person
    channels = (
        [] if options.channels is None else await open_reminder_channels(stack, options.channels)
    )
    tell = notify_channels(channels) if channels else None

    async def notify(whose: str, reminder: Reminder) -> None:
        server.notify_resources_changed(MemoryResources.context_uri(whose))
        server.notify_resources_changed()
        if tell is not None:
            await tell(whose, reminder)

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
