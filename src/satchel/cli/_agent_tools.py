"""The tools ``satchel run`` and ``satchel chat`` give an agent beside its memory
tools: ``--tools`` registries and ``--mount`` servers, gated for approval through the
database's approval store (as under ``serve``), served directly or, with ``--lazy``,
behind the meta-tools."""

from __future__ import annotations

import os
from contextlib import AsyncExitStack
from typing import Annotated

import typer

from satchel.cli._common import load_registry
from satchel.cli._serve_args import parse_mount
from satchel.consent import PermissionBroker, with_approval
from satchel.meta import MetaTools
from satchel.registry import ToolRegistry, merged

__all__ = ["LazyOption", "MountOption", "ToolsOption", "agent_tools"]

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


async def agent_tools(
    stack: AsyncExitStack,
    tools: list[str] | None,
    mounts: list[str] | None,
    *,
    lazy: bool,
    broker: PermissionBroker,
) -> ToolRegistry | None:
    """The extra tools, or ``None`` when there are none. Mounted servers stay connected
    until ``stack`` closes.

    Raises:
        typer.BadParameter: a ``--tools`` or ``--mount`` value is unusable.
    """
    from satchel.mcp import mount_mcp  # the MCP SDK loads only when a server is mounted

    registries = [load_registry(target) for target in tools or ()]
    specs = [parse_mount(value) for value in mounts or ()]
    if not registries and not specs:
        return None
    catalog = merged(*registries)
    for spec in specs:
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
    if lazy:
        meta = MetaTools(catalog, broker=broker, dialect="openai")
        await meta.prepare()
        return meta.registry
    return with_approval(catalog, broker)
