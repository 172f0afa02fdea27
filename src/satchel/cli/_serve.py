"""``satchel serve``: run an MCP server over stdio (the default) or streamable HTTP.

What it serves is built in two steps, so each later feature has one place to go:

1. :func:`build_catalog` gathers every tool: the built-in memory tools
   (:func:`memory_tools`, the seam where they plug in) and each ``--tools`` registry.
   ``--mount`` servers are then mounted into the catalog.
2. :func:`served_registry` decides what clients see: the catalog itself, or with
   ``--lazy`` the three meta-tools over it plus the ``--pin`` tools.

Until the memory built-ins land, ``satchel serve`` without ``--tools`` or ``--mount``
serves no tools (it says so on stderr); ``--tools satchel.examples:registry`` serves the
demo tools.
"""

from __future__ import annotations

import ipaddress
import logging
import shlex
from collections.abc import Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated

import anyio
import typer

from satchel._errors import SatchelUsageError
from satchel.cli._common import load_registry
from satchel.registry import RegistryEvent, ToolRegistry

__all__ = [
    "MountSpec",
    "ServeOptions",
    "build_catalog",
    "memory_tools",
    "parse_http",
    "parse_mount",
    "serve",
    "served_registry",
]

logger = logging.getLogger("satchel.cli.serve")


@dataclass(frozen=True, kw_only=True)
class MountSpec:
    """One ``--mount``: a prefix and either a command line or a URL."""

    prefix: str
    command: str | None = None
    args: tuple[str, ...] = ()
    url: str | None = None


@dataclass(frozen=True, kw_only=True)
class ServeOptions:
    """What ``satchel serve`` was asked to serve."""

    tools: tuple[str, ...] = ()
    lazy: bool = False
    pins: tuple[str, ...] = ()
    agent: str = "default"
    db: Path | None = None
    mounts: tuple[MountSpec, ...] = field(default=())


def parse_http(value: str) -> tuple[str, int]:
    """``HOST:PORT`` (or ``PORT``, or ``[::1]:PORT``) as ``(host, port)``.

    Raises:
        typer.BadParameter: not of that form, or the port is not 0-65535.
    """
    host, sep, port_text = value.rpartition(":")
    if not sep:
        host, port_text = "127.0.0.1", value
    host = host.strip("[]") or "127.0.0.1"
    try:
        port = int(port_text)
    except ValueError:
        port = -1
    if not 0 <= port <= 65535:
        raise typer.BadParameter(
            f"{value!r} is not HOST:PORT (e.g. 127.0.0.1:8765; port 0 picks a free one).",
            param_hint="'--http'",
        )
    return host, port


def parse_mount(value: str) -> MountSpec:
    """``PREFIX=COMMAND ARGS...`` (a stdio server) or ``PREFIX=URL`` (streamable HTTP).

    Raises:
        typer.BadParameter: no ``=``, an empty prefix, or nothing after it.
    """
    prefix, sep, target = value.partition("=")
    prefix, target = prefix.strip(), target.strip()
    if not sep or not prefix or not target:
        raise typer.BadParameter(
            f"{value!r} is not PREFIX=COMMAND or PREFIX=URL "
            "(e.g. 'git=uvx mcp-server-git' or 'docs=http://127.0.0.1:9000/mcp').",
            param_hint="'--mount'",
        )
    if target.startswith(("http://", "https://")):
        return MountSpec(prefix=prefix, url=target)
    try:
        words = shlex.split(target)
    except ValueError as exc:
        raise typer.BadParameter(
            f"cannot split {target!r}: {exc}.", param_hint="'--mount'"
        ) from exc
    return MountSpec(prefix=prefix, command=words[0], args=tuple(words[1:]))


def _is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


# -- what is served --------------------------------------------------------------------


def memory_tools(options: ServeOptions) -> ToolRegistry | None:
    """The built-in memory tools (``context``, ``recall``, ``search``,
    ``send_message``) for ``options.agent`` on the store at ``options.db``.

    This is the seam where they plug in: return their registry here once
    ``satchel.builtin`` exists. Until then there are none.
    """
    if options.db is not None:
        logger.warning("--db is accepted but the memory tools are not available yet")
    return None


def _mirror(source: ToolRegistry, target: ToolRegistry) -> None:
    """Keep ``target`` in step with later changes to ``source``."""

    def follow(event: RegistryEvent) -> None:
        if event.kind == "removed":
            if target.get(event.name) is not None:
                target.unregister(event.name)
            return
        tool = source.get(event.name)
        if tool is not None:
            target.register(tool, replace=True)

    source.subscribe(follow)


def build_catalog(options: ServeOptions) -> ToolRegistry:
    """Every tool ``satchel serve`` offers, before ``--lazy`` hides them behind the
    meta-tools: the memory built-ins, then each ``--tools`` registry.

    A single registry is served as it is; several are merged, and a name defined twice
    is an error.

    Raises:
        typer.BadParameter: a ``--tools`` target cannot be loaded.
        SatchelUsageError: two sources define the same tool name.
    """
    sources: list[tuple[str, ToolRegistry]] = []
    builtin = memory_tools(options)
    if builtin is not None:
        sources.append(("the memory tools", builtin))
    sources += [(target, load_registry(target)) for target in options.tools]
    if len(sources) == 1:
        return sources[0][1]
    catalog = ToolRegistry()
    origin: dict[str, str] = {}
    for label, registry in sources:
        for tool in registry:
            name = tool.spec.name
            if name in origin:
                raise SatchelUsageError(
                    f"The tool {name!r} is defined by both {origin[name]} and {label}; "
                    "serve one of them, or rename a tool."
                )
            origin[name] = label
            catalog.register(tool)
        _mirror(registry, catalog)
    return catalog


def _meta_tools(catalog: ToolRegistry, pins: Sequence[str]) -> ToolRegistry:
    try:
        from satchel.meta import MetaTools
    except ModuleNotFoundError as exc:
        if exc.name not in ("satchel.meta", "satchel"):
            raise
        raise typer.BadParameter(
            "needs the meta-tools (satchel.meta), which this build of satchel does not have yet.",
            param_hint="'--lazy'",
        ) from exc
    # Approvals of destructive calls go to MetaTools' own in-memory broker for now; the
    # approvals work replaces it with one on the database (and MCP elicitation).
    return MetaTools(catalog, dialect="mcp", pinned=pins).registry


def served_registry(catalog: ToolRegistry, options: ServeOptions) -> ToolRegistry:
    """What clients see: the catalog, or with ``--lazy`` the meta-tools over it and the
    ``--pin`` tools beside them.

    Raises:
        typer.BadParameter: ``--pin`` names a tool the catalog lacks, or ``--lazy`` is
            asked for without the meta-tools.
    """
    if not options.lazy:
        return catalog
    missing = [name for name in options.pins if name not in catalog]
    if missing:
        raise typer.BadParameter(
            f"no tool called {', '.join(repr(n) for n in missing)} to pin; the tools are "
            f"{', '.join(catalog.names()) or '(none)'}.",
            param_hint="'--pin'",
        )
    return _meta_tools(catalog, options.pins)


# -- running ------------------------------------------------------------------------


async def _serve(options: ServeOptions, http: tuple[str, int] | None, token: str | None) -> None:
    from satchel.mcp import create_server, mount_mcp  # the MCP SDK loads only to serve

    catalog = build_catalog(options)
    async with AsyncExitStack() as stack:
        for spec in options.mounts:
            await stack.enter_async_context(
                mount_mcp(
                    catalog,
                    prefix=spec.prefix,
                    command=spec.command,
                    args=spec.args,
                    url=spec.url,
                )
            )
        served = served_registry(catalog, options)
        if not len(served):
            typer.echo(
                "satchel: no tools to serve yet; add --tools MODULE:ATTR "
                "(e.g. --tools satchel.examples:registry) or --mount PREFIX=COMMAND.",
                err=True,
            )
        server = create_server(served, agent=options.agent)
        if http is None:
            await server.run_stdio()
            return

        def ready(url: str) -> None:
            typer.echo(f"satchel: serving MCP at {url}", err=True)

        host, port = http
        await server.run_http(host, port, token=token, on_ready=ready)


def serve(
    http: Annotated[
        str | None,
        typer.Option(
            "--http",
            metavar="HOST:PORT",
            help="Serve streamable HTTP on HOST:PORT (port 0: any free port) instead of stdio.",
        ),
    ] = None,
    token: Annotated[
        str | None,
        typer.Option(
            "--token",
            envvar="SATCHEL_TOKEN",
            help="With --http: the bearer token every request must carry (else HTTP 401).",
        ),
    ] = None,
    tools: Annotated[
        list[str] | None,
        typer.Option(
            "--tools",
            "-t",
            metavar="MODULE:ATTR",
            help="A ToolRegistry to serve (or a function returning one); repeatable.",
        ),
    ] = None,
    lazy: Annotated[
        bool,
        typer.Option("--lazy", help="Serve only the three meta-tools (plus --pin tools)."),
    ] = False,
    pin: Annotated[
        list[str] | None,
        typer.Option("--pin", metavar="NAME", help="With --lazy: also serve this tool directly."),
    ] = None,
    mount: Annotated[
        list[str] | None,
        typer.Option(
            "--mount",
            metavar="PREFIX=COMMAND|PREFIX=URL",
            help="Bring another MCP server's tools in as PREFIX_name; repeatable.",
        ),
    ] = None,
    agent: Annotated[
        str,
        typer.Option("--agent", envvar="SATCHEL_AGENT", help="The agent whose memory is used."),
    ] = "default",
    db: Annotated[
        Path | None,
        typer.Option(
            "--db", envvar="SATCHEL_DB", help="The memory database (default: the data dir)."
        ),
    ] = None,
    log_level: Annotated[
        str | None,
        typer.Option(
            "--log-level",
            help="How much to log to stderr: debug, info, warning or error.",
        ),
    ] = None,
) -> None:
    """Run an MCP server: stdio by default, or streamable HTTP with --http.

    Logs go to stderr only; over stdio, stdout carries nothing but the protocol.
    """
    if log_level is not None:
        level = log_level.upper()
        if level not in ("DEBUG", "INFO", "WARNING", "ERROR"):
            raise typer.BadParameter(
                f"{log_level!r} is not one of debug, info, warning, error.",
                param_hint="'--log-level'",
            )
        logging.getLogger().setLevel(level)
    if pin and not lazy:
        raise typer.BadParameter("only makes sense with --lazy.", param_hint="'--pin'")
    if not agent.strip():
        raise typer.BadParameter("must not be empty.", param_hint="'--agent'")
    options = ServeOptions(
        tools=tuple(tools or ()),
        lazy=lazy,
        pins=tuple(pin or ()),
        agent=agent,
        db=db,
        mounts=tuple(parse_mount(m) for m in mount or ()),
    )
    address = parse_http(http) if http is not None else None
    if address is None and token:
        logger.info("--token applies to --http only; ignored on stdio")
    if address is not None and not token and not _is_loopback(address[0]):
        typer.echo(
            f"satchel: warning: serving on {address[0]} without --token; anyone who can "
            "reach this address can call the tools.",
            err=True,
        )
    try:
        anyio.run(_serve, options, address, token or None)
    except KeyboardInterrupt:
        return
