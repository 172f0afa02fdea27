"""An agent's memory as MCP resources, so clients that show resources can display it.

Each core and working block of the acting agent is a text resource at
``memory://{agent}/{label}`` (the label percent-encoded, so a shared block's
``owner/label`` stays one path segment), and the rendered system context at
``memory://{agent}/context`` (a block labelled ``context`` is reached as
``memory://{agent}/blocks/context``; the list always gives the right URI). The template
``memory://{agent}/{label}`` says so to clients that build URIs themselves.

A version tag per URI (the block's id, version and the agent's level on it; for the
context, a digest of every tag and the tool rules) lets the server see which resource
changed, whoever changed it, and tell subscribed clients.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Final
from urllib.parse import quote, unquote

from satchel._errors import NotFoundError
from satchel.builtin import render_context
from satchel.mcp.server._resources import ResourceContent, ResourceInfo, ResourceTemplateInfo
from satchel.memory import Block, BlockKind, MemoryStore
from satchel.registry import BaseRegistry
from satchel.tools import ToolContext

__all__ = ["MemoryResources"]

_CONTEXT: Final = "context"
_BLOCKS: Final = "blocks/"
_KINDS: Final = (BlockKind.CORE, BlockKind.WORKING)


class MemoryResources:
    """Serves the acting agent's core and working blocks, and its rendered context, as
    resources (a :class:`~satchel.mcp.ResourceProvider`, with
    :class:`~satchel.mcp.ResourceTemplates` and :class:`~satchel.mcp.ResourceVersions`).

    Args:
        store: The memory store.
        registry: The tools whose usage rules the rendered context includes.

    Example:
        >>> server = create_server(tools, resources=MemoryResources(store, tools))
    """

    def __init__(self, store: MemoryStore, registry: BaseRegistry | None = None) -> None:
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

    async def list_resource_templates(self, ctx: ToolContext) -> Sequence[ResourceTemplateInfo]:
        """One template, ``memory://{agent}/{label}``."""
        return [
            ResourceTemplateInfo(
                uri_template="memory://{agent}/{label}",
                name="memory block",
                description=f"A core or working memory block of the agent {ctx.agent!r} "
                "(agent is that name; label is the block's label, percent-encoded). "
                f"memory://{quote(ctx.agent, safe='')}/context is the rendered system "
                "context; a block labelled 'context' is at .../blocks/context.",
            )
        ]

    async def resource_versions(self, ctx: ToolContext) -> Mapping[str, str]:
        """A tag per URI of ``ctx.agent``'s memory that changes with the resource's text
        (see the module docstring). One read of the block list."""
        agent = ctx.agent
        blocks = await self.store.list_blocks(agent, _KINDS)
        tags = {self.block_uri(agent, b.address_for(agent)): _tag(b, agent) for b in blocks}
        rules = self.registry.usage_rules() if self.registry is not None else ""
        digest = hashlib.sha256(rules.encode())
        for uri in sorted(tags):
            digest.update(f"\0{uri}\0{tags[uri]}".encode())
        tags[self.context_uri(agent)] = digest.hexdigest()[:32]
        return tags

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


def _tag(block: Block, agent: str) -> str:
    level = block.shares.get(agent, block.permission) if block.agent != agent else block.permission
    return f"{block.id}:{block.version}:{level.value}"
