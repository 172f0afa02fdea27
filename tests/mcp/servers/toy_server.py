"""A small MCP server written with the SDK's low-level API, for the mount tests.

Run: ``python toy_server.py [--legacy]``. With ``--legacy`` it refuses
``server/discover``, so clients fall back to the ``initialize`` handshake, as with
most third-party servers today.

Tools: ``greet(name)``, ``dotted.name()``, ``pid()``, ``sleep(seconds)``, ``crash()``
(the process dies mid-call), ``grow()`` (adds a tool ``extra_N`` and announces it),
``outline(root)`` (a recursive input schema: sections hold sections) and ``broken()``
(an input schema whose ``$ref`` points at nothing, which a client must skip).
"""

from __future__ import annotations

import os
import sys
from typing import Any

import anyio
import mcp_types as types
from mcp.server import Server, ServerRequestContext
from mcp.server.lowlevel import NotificationOptions
from mcp.server.runner import serve_loop
from mcp.server.stdio import stdio_server
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ToolsListChanged
from mcp.shared.exceptions import MCPError

bus = InMemorySubscriptionBus()
extras: list[str] = []

OBJECT: dict[str, Any] = {"type": "object", "properties": {}}


def listing() -> list[types.Tool]:
    tools = [
        types.Tool(
            name="greet",
            description="Greet someone by name.",
            input_schema={
                "type": "object",
                "properties": {"name": {"type": "string"}},
                "required": ["name"],
            },
            annotations=types.ToolAnnotations(read_only_hint=True, open_world_hint=False),
        ),
        types.Tool(
            name="dotted.name",
            description="A tool whose name needs sanitising.",
            input_schema=OBJECT,
        ),
        types.Tool(name="pid", description="The server's process id.", input_schema=OBJECT),
        types.Tool(
            name="sleep",
            description="Sleep for a while.",
            input_schema={"type": "object", "properties": {"seconds": {"type": "number"}}},
        ),
        types.Tool(
            name="crash",
            description="Die in the middle of the call.",
            input_schema=OBJECT,
            annotations=types.ToolAnnotations(destructive_hint=True),
        ),
        types.Tool(name="grow", description="Add a tool.", input_schema=OBJECT),
        types.Tool(
            name="outline",
            description="Count the sections of an outline.",
            input_schema={
                "type": "object",
                "properties": {"root": {"$ref": "#/definitions/section"}},
                "required": ["root"],
                "definitions": {
                    "section": {
                        "type": "object",
                        "properties": {
                            "heading": {"type": "string"},
                            "sections": {
                                "type": "array",
                                "items": {"$ref": "#/definitions/section"},
                            },
                        },
                        "required": ["heading"],
                    }
                },
            },
        ),
        types.Tool(
            name="broken",
            description="A tool whose schema refers to nothing.",
            input_schema={"type": "object", "properties": {"x": {"$ref": "#/$defs/Missing"}}},
        ),
    ]
    tools += [
        types.Tool(name=n, description=f"Extra tool {n}.", input_schema=OBJECT) for n in extras
    ]
    return tools


def text(value: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=value)])


async def list_tools(
    ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    return types.ListToolsResult(tools=listing())


async def call_tool(
    ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
) -> types.CallToolResult:
    args = params.arguments or {}
    match params.name:
        case "greet":
            return text(f"hello {args['name']}")
        case "dotted.name":
            return text("dotted")
        case "pid":
            return text(str(os.getpid()))
        case "sleep":
            await anyio.sleep(float(args.get("seconds", 1)))
            return text("slept")
        case "crash":
            os._exit(3)
        case "grow":
            extras.append(f"extra_{len(extras) + 1}")
            await ctx.session.send_tool_list_changed()
            await bus.publish(ToolsListChanged())
            return text(extras[-1])
        case "outline":
            return text(str(_count_sections(args["root"])))
        case name if name in extras:
            return text(name)
        case _:
            return types.CallToolResult(
                content=[types.TextContent(text="no such tool")], is_error=True
            )


def _count_sections(section: dict[str, Any]) -> int:
    return 1 + sum(_count_sections(s) for s in section.get("sections", []))


async def no_discover(
    ctx: ServerRequestContext[Any, Any], params: types.RequestParams
) -> types.EmptyResult:
    raise MCPError(types.METHOD_NOT_FOUND, "Method not found")


async def main(legacy: bool) -> None:
    server = Server(
        "toy",
        version="1.0",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_subscriptions_listen=ListenHandler(bus),
    )
    options = server.create_initialization_options(NotificationOptions(tools_changed=True))
    async with stdio_server() as (read, write):
        if legacy:  # handshake only, like most servers before 2026-07-28
            server.add_request_handler("server/discover", types.RequestParams, no_discover)
            await serve_loop(server, read, write, lifespan_state={}, init_options=options)
        else:
            await server.run(read, write, options)


if __name__ == "__main__":
    anyio.run(main, "--legacy" in sys.argv)
