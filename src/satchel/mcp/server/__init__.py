"""The MCP server side: serve a :class:`~satchel.ToolRegistry` (and memory resources
and prompts) over stdio or streamable HTTP, on the official ``mcp`` SDK.

Start with :func:`create_server`; everything here is re-exported by
:mod:`satchel.mcp`.
"""

from satchel.mcp.server._approvals import APPROVAL_ARGUMENT, MemoryConsent, with_mcp_approval
from satchel.mcp.server._channel import (
    CLIENT_CHANNEL_KEY,
    ClientChannel,
    ElicitationAnswer,
    ElicitationPending,
    client_channel,
)
from satchel.mcp.server._memory_prompts import MemoryPrompts
from satchel.mcp.server._memory_resources import MemoryResources
from satchel.mcp.server._projects import AgentResolver, ProjectAgents
from satchel.mcp.server._prompts import (
    PromptArgument,
    PromptContent,
    PromptInfo,
    PromptMessage,
    PromptProvider,
)
from satchel.mcp.server._resources import (
    ResourceContent,
    ResourceInfo,
    ResourceProvider,
    ResourceTemplateInfo,
    ResourceTemplates,
    ResourceVersions,
)
from satchel.mcp.server._server import ContextFactory, SatchelServer, create_server

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
    "ProjectAgents",
    "PromptArgument",
    "PromptContent",
    "PromptInfo",
    "PromptMessage",
    "PromptProvider",
    "ResourceContent",
    "ResourceInfo",
    "ResourceProvider",
    "ResourceTemplateInfo",
    "ResourceTemplates",
    "ResourceVersions",
    "SatchelServer",
    "client_channel",
    "create_server",
    "with_mcp_approval",
]
