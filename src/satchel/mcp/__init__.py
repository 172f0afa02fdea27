"""MCP for satchel: serve any :class:`~satchel.ToolRegistry` over MCP, and mount other
MCP servers' tools into a registry. Built on the official ``mcp`` SDK.

Serve::

    from satchel.mcp import create_server

    server = create_server(registry, instructions="...")
    anyio.run(server.run_stdio)                       # or: await server.run_http(...)

Mount::

    from satchel.mcp import mount_mcp

    async with mount_mcp(registry, prefix="git", command="uvx", args=["mcp-server-git"]):
        result = await registry.call("git_status", {"repo_path": "."})

A tool served over MCP reaches its client (to ask its human with elicitation) through
:func:`client_channel`. Memory blocks and other readable things are served through a
:class:`ResourceProvider`.
"""

from satchel.mcp._channel import (
    CLIENT_CHANNEL_KEY,
    ClientChannel,
    ElicitationAnswer,
    ElicitationPending,
    client_channel,
)
from satchel.mcp._mount import MountedServer, RemoteTool, local_tool_name, mount_mcp
from satchel.mcp._resources import ResourceContent, ResourceInfo, ResourceProvider
from satchel.mcp._server import ContextFactory, SatchelServer, create_server

__all__ = [
    "CLIENT_CHANNEL_KEY",
    "ClientChannel",
    "ContextFactory",
    "ElicitationAnswer",
    "ElicitationPending",
    "MountedServer",
    "RemoteTool",
    "ResourceContent",
    "ResourceInfo",
    "ResourceProvider",
    "SatchelServer",
    "client_channel",
    "create_server",
    "local_tool_name",
    "mount_mcp",
]
