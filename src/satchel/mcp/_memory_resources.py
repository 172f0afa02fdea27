"""An agent's memory as MCP resources, so clients that show resources can display it.

Each core and working block of the acting agent is a text resource at
``memory://{agent}/{label}`` (the label percent-encoded, so a shared block's
``owner/label`` stays one path segment), and the rendered system context at
``memory://{agent}/context`` (a block labelled ``context`` is reached as
``memory://{agent}/blocks/context``; the list always gives the right URI).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final
from urllib.parse import quote, unquote

from satchel._errors import NotFoundError
from satchel.builtin import render_context
from satchel.mcp._resources import ResourceContent, ResourceInfo
from satchel.memory import Block, BlockKind, MemoryStore
from satchel.registry import ToolRegistry
from satchel.tools import ToolContext

__all__ = ["MemoryResources"]

_CONTEXT: Final = "context"
_BLOCKS: Final = "blocks/"
_KINDS: Final = (BlockKind.CORE, BlockKind.WORKING)


class MemoryResources:
    """Serves the acting agent's core and working blocks, and its rendered context, as
    resources (a :class:`~satchel.mcp.ResourceProvider`).

    Args:
        store: The memory store.
        registry: The tools whose usage rules the rendered context includes.

    Example:
        >>> server = create_server(tools, resources=MemoryResources(store, tools))
    """

    def __init__(self, store: MemoryStore, registry: ToolRegistry | None = None) -> None:
        self.store = store
        self.registry = registry

    @staticmethod
    def block_uri(agent: str, address: str) -> str:
        """The URI of the block ``agent`` addresses as ``address``."""
        segment = quote(address, safe="")
        if segment == _CONTEXT:
            segment = _BLOCKS + segment
        return f"memory://{quote(agent, safe='')}/{segment}"

    @staticmethod
    def context_uri(agent: str) -> str:
        """The URI of ``agent``'s rendered system context."""
        return f"memory://{quote(agent, safe='')}/{_CONTEXT}"

    async def list_resources(self, ctx: ToolContext) -> Sequence[ResourceInfo]:
        """The rendered context, then each core and working block of ``ctx.agent``."""
        agent = ctx.agent
        blocks = await self.store.list_blocks(agent, _KINDS)
        found = [
            ResourceInfo(
                uri=self.context_uri(agent),
                name="context",
                description=f"The system context of {agent}: core and working memory, "
                "then the tool rules.",
            )
        ]
        found += [self._info(agent, b) for b in blocks]
        return found

    def _info(self, agent: str, block: Block) -> ResourceInfo:
        address = block.address_for(agent)
        limit = f"/{block.char_limit}" if block.char_limit is not None else ""
        about = block.description or f"The {block.kind.value} memory block {address!r}."
        return ResourceInfo(
            uri=self.block_uri(agent, address),
            name=address,
            description=f"{about} ({block.kind.value}, {block.chars}{limit} characters, "
            f"{block.permission.value})",
            size=len(block.value.encode()),
        )

    async def read_resource(self, uri: str, ctx: ToolContext) -> ResourceContent:
        """The current text at ``uri``.

        Raises:
            NotFoundError: Not one of ``ctx.agent``'s memory URIs, or no such core or
                working block.
        """
        agent = ctx.agent
        prefix = f"memory://{quote(agent, safe='')}/"
        if not uri.startswith(prefix):
            raise NotFoundError(f"No resource {uri!r} for agent {agent!r}.")
        rest = uri.removeprefix(prefix)
        if rest == _CONTEXT:
            text = await render_context(self.store, agent, self.registry)
            return ResourceContent(uri=uri, text=text)
        label = unquote(rest.removeprefix(_BLOCKS) if rest == _BLOCKS + _CONTEXT else rest)
        block = await self.store.get_block(agent, label)
        if block.kind not in _KINDS:
            raise NotFoundError(f"{label!r} is archival memory, not a core or working block.")
        return ResourceContent(uri=uri, text=block.value)
