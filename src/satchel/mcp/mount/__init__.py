"""The MCP client side: mount another MCP server's tools (stdio or streamable HTTP)
into a :class:`~satchel.ToolRegistry` as ordinary tools, following its tool list.

Start with :func:`mount_mcp` (or :meth:`satchel.ToolRegistry.mount_mcp`); everything
here is re-exported by :mod:`satchel.mcp`.
"""

from satchel.mcp.mount._mount import MountedServer, mount_mcp
from satchel.mcp.mount._remote import RemoteTool, local_tool_name

__all__ = ["MountedServer", "RemoteTool", "local_tool_name", "mount_mcp"]
