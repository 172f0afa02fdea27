"""What ``satchel serve`` offers: every tool gathered into one catalog
(:func:`build_catalog`, :func:`add_chains`), and what clients see of it
(:func:`served_registry`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from satchel._errors import SatchelUsageError
from satchel.compat import with_compat
from satchel.compose import load_chains
from satchel.consent import PermissionBroker
from satchel.meta import MetaTools
from satchel.registry import BaseRegistry, ToolRegistry, merged, with_write_hook
from satchel.serve._load import load_tools
from satchel.serve._options import ServeOptions, option_error

if TYPE_CHECKING:
    from satchel.builtin import BuiltinTools, MessageRouter
    from satchel.memory import MemoryStore
    from satchel.meta import UsageStore

__all__ = [
    "add_chains",
    "build_catalog",
    "check_pins",
    "memory_tools",
    "meta_tools",
    "served_registry",
]


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
    files: ToolRegistry | None = None,
) -> ToolRegistry:
    """Every tool ``satchel serve`` offers, before ``--lazy`` hides them behind the
    meta-tools: the memory built-ins (``memory``, see :func:`memory_tools`), the
    productivity ``toolkit``, the file tools over the agent's sources (``files``),
    then each ``options.tools`` registry.

    They are merged into one live view (:func:`~satchel.registry.merged`) that
    follows each source and takes the mounted servers' tools; a name defined twice is
    an error.

    With ``options.replace`` the memory tools come without those built-ins, and a
    ``tools`` registry must define each.

    Raises:
        SatchelUsageError: a ``tools`` target cannot be loaded, no ``tools`` registry
            defines a replaced name (both with ``details["option"]``), or two sources
            define the same tool name.
    """
    sources: list[tuple[str, BaseRegistry]] = []
    if memory is not None:
        sources.append(("the memory tools", memory))
    if toolkit is not None:
        sources.append(("the productivity toolkit", toolkit))
    if files is not None:
        sources.append(("the file tools", files))
    sources += load_tools(options.tools, replace=options.replace)
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
    """Register the ``options.chains`` files' chains over ``catalog``, once the mounted
    servers' tools are in it, so a chain's steps may be mounted tools.

    Raises:
        SatchelUsageError: a chain names a tool the catalog lacks, or does not check.
    """
    for path in options.chains:
        load_chains(path, catalog)


def check_pins(catalog: ToolRegistry, options: ServeOptions) -> None:
    """Every ``options.pins`` name must be a tool of ``catalog``.

    Raises:
        SatchelUsageError: one is not (``details["option"]`` is ``"--pin"``).
    """
    missing = [name for name in options.pins if name not in catalog]
    if missing:
        raise option_error(
            "--pin",
            f"no tool called {', '.join(repr(n) for n in missing)} to pin; the tools are "
            f"{', '.join(catalog.names()) or '(none)'}.",
        )


def meta_tools(
    catalog: ToolRegistry,
    options: ServeOptions,
    broker: PermissionBroker | None,
    *,
    usage: UsageStore | None = None,
) -> MetaTools:
    """The three meta-tools over ``catalog``, with the ``pins`` beside them, as
    ``--lazy`` serves them over MCP."""
    return MetaTools(
        catalog,
        broker=broker,
        dialect="mcp",
        pinned=options.pins,
        approval=options.approve,
        learn=options.learn,
        usage=usage,
        compat=options.compat,
    )


def served_registry(
    catalog: ToolRegistry, options: ServeOptions, *, broker: PermissionBroker | None = None
) -> BaseRegistry:
    """What clients see: the catalog, or with ``options.lazy`` the meta-tools over it
    and the ``pins`` beside them.

    Args:
        catalog: Every tool (see :func:`build_catalog`).
        options: What was asked for.
        broker: Approves the calls ``options.approve`` holds (never a memory tool's).
            Directly served tools are gated with :func:`~satchel.mcp.with_mcp_approval`
            (elicitation, or an ``approval_id`` argument); the meta-tools gate
            ``invoke_tool`` and the pinned tools with it. Without a broker the catalog
            is served ungated (and the meta-tools use their own in-memory broker).

    With ``options.compat``, every tool answers in that seed's shapes
    (:func:`~satchel.compat.with_compat`; the meta-tools through their own option).

    Raises:
        SatchelUsageError: ``options.pins`` names a tool the catalog lacks.
    """
    if not options.lazy:
        served: BaseRegistry = catalog
        if broker is not None:
            from satchel.mcp import with_mcp_approval

            served = with_mcp_approval(catalog, broker, policy=options.approve)
        return served if options.compat is None else with_compat(served, options.compat)
    check_pins(catalog, options)
    return meta_tools(catalog, options, broker).registry
