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
:class:`ResourceProvider`; :class:`MemoryResources` serves an agent's memory blocks (and
tells subscribed clients when one changes). Prompts are served through a
:class:`PromptProvider`; :class:`MemoryPrompts` renders an agent's memory as the
``memory`` prompt.
:func:`with_mcp_approval` gates destructive calls behind the client's human
(elicitation) or ``satchel approvals`` in another terminal.
"""

from satchel.mcp.mount import MountedServer, RemoteTool, local_tool_name, mount_mcp
from satchel.mcp.server import (
    APPROVAL_ARGUMENT,
    CLIENT_CHANNEL_KEY,
    AgentResolver,
    ClientChannel,
    ContextFactory,
    ElicitationAnswer,
    ElicitationPending,
    MemoryConsent,
    MemoryPrompts,
    MemoryResources,
    ProjectAgents,
    PromptArgument,
    PromptContent,
    PromptInfo,
    PromptMessage,
    PromptProvider,
    ResourceContent,
    ResourceInfo,
    ResourceProvider,
    ResourceTemplateInfo,
    ResourceTemplates,
    ResourceVersions,
    SatchelServer,
    client_channel,
    create_server,
    with_mcp_approval,
)

__all__ = [
    "APPROVAL_ARGUMENT",
    "CLIENT_CHANNEL_KEY",
    "AgentResolver",
    "ClientChannel",
    "ContextFactory",
    "ElicitationAnswer",
    "ElicitationPending",
    "MemoryConsent",
    "MemoryPrompts",
    "MemoryResources",
    "MountedServer",
    "ProjectAgents",
    "PromptArgument",
    "PromptContent",
    "PromptInfo",
    "PromptMessage",
    "PromptProvider",
    "RemoteTool",
    "ResourceContent",
    "ResourceInfo",
    "ResourceProvider",
    "ResourceTemplateInfo",
    "ResourceTemplates",
    "ResourceVersions",
    "SatchelServer",
    "client_channel",
    "create_server",
    "local_tool_name",
    "mount_mcp",
    "with_mcp_approval",
]
