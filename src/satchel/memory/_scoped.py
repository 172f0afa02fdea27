""":class:`AgentMemory`: one agent's view of a memory store, for tool authors.

A tool gets it as ``ctx.memory`` when it runs under ``satchel serve`` or the agent
runtime. Its methods are the :class:`~satchel.memory.MemoryStore` methods without the
``agent`` argument (the view is bound to the calling agent), and every write carries the
request's :class:`~satchel.memory.RequestOrigin`, so a consent prompt reaches the human
where the request came from. It is a view, not a copy: each call goes to the store, and
through its permission gate.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from satchel.memory._models import (
    Block,
    BlockKind,
    Domain,
    Message,
    Permission,
    Role,
    SearchFilters,
    SearchHit,
    SearchMode,
)
from satchel.memory._paging import BlockPage
from satchel.memory._permissions import RequestOrigin
from satchel.memory._protocol import MemoryStore
from satchel.tools import ToolMemory, ToolSharedBlocks

if TYPE_CHECKING:
    from satchel.memory.sources import SourceIndex

__all__ = ["AgentMemory"]


@dataclass(frozen=True, slots=True)
class AgentMemory:
    """The memory of one agent: a :class:`~satchel.memory.MemoryStore` bound to
    ``agent`` and to the origin of the request.

    Args:
        store: The store underneath (every call goes through its permission gate).
        agent: The agent acting.
        origin: Where the request came from; every write passes it on.

    Example:
        >>> @tool
        ... async def remember(fact: str, ctx: ToolContext) -> str:
        ...     '''Note a fact about the user.'''
        ...     assert ctx.memory is not None
        ...     block = await ctx.memory.append_to_block("human", fact)
        ...     return f"{block.chars} characters"
    """

    store: MemoryStore
    agent: str
    origin: RequestOrigin | None = None

    async def get_block(self, label: str) -> Block:
        """Read one block (see :meth:`MemoryStore.get_block`)."""
        return await self.store.get_block(self.agent, label)

    async def get_block_by_id(self, block_id: str) -> Block:
        """Read one block by its id (see :meth:`MemoryStore.get_block_by_id`)."""
        return await self.store.get_block_by_id(self.agent, block_id)

    async def list_blocks(self, kinds: Collection[BlockKind] | None = None) -> list[Block]:
        """Every block this agent sees, optionally of some kinds only."""
        return await self.store.list_blocks(self.agent, kinds)

    async def list_blocks_page(
        self,
        *,
        kinds: Collection[BlockKind] | None = None,
        offset: int = 0,
        limit: int = 100,
    ) -> BlockPage:
        """One page of the blocks this agent sees (see
        :meth:`MemoryStore.list_blocks_page`)."""
        return await self.store.list_blocks_page(
            self.agent, kinds=kinds, offset=offset, limit=limit
        )

    async def create_block(
        self,
        label: str,
        value: str = "",
        *,
        description: str = "",
        kind: BlockKind = BlockKind.CORE,
        permission: Permission = Permission.READ_WRITE,
        char_limit: int | None = None,
        tags: Sequence[str] = (),
        metadata: Mapping[str, Any] | None = None,
    ) -> Block:
        """Create a block this agent owns (see :meth:`MemoryStore.create_block`)."""
        return await self.store.create_block(
            self.agent,
            label,
            value,
            description=description,
            kind=kind,
            permission=permission,
            char_limit=char_limit,
            tags=tags,
            metadata=metadata,
        )

    async def append_to_block(self, label: str, text: str, *, separator: str = "\n") -> Block:
        """Append to a block, through the permission gate."""
        return await self.store.append_to_block(
            self.agent, label, text, separator=separator, origin=self.origin
        )

    async def replace_in_block(
        self, label: str, old: str, new: str, *, expected_version: int | None = None
    ) -> Block:
        """Replace the one occurrence of ``old``, through the permission gate."""
        return await self.store.replace_in_block(
            self.agent, label, old, new, expected_version=expected_version, origin=self.origin
        )

    async def update_block_text(
        self,
        label: str,
        value: str,
        *,
        expected_version: int | None = None,
        description: str | None = None,
    ) -> Block:
        """Overwrite a block's value, through the permission gate."""
        return await self.store.update_block_text(
            self.agent,
            label,
            value,
            expected_version=expected_version,
            description=description,
            origin=self.origin,
        )

    async def set_kind(
        self, label: str, kind: BlockKind, *, expected_version: int | None = None
    ) -> Block:
        """Move a block between core, working and archival memory."""
        return await self.store.set_kind(
            self.agent, label, kind, expected_version=expected_version, origin=self.origin
        )

    async def delete_block(self, label: str, *, expected_version: int | None = None) -> Block:
        """Delete a block (``admin`` blocks only), returning it as it was."""
        return await self.store.delete_block(
            self.agent, label, expected_version=expected_version, origin=self.origin
        )

    async def add_message(
        self,
        role: Role,
        content: str,
        *,
        conversation_id: str = "default",
        tags: Sequence[str] = (),
        metadata: Mapping[str, Any] | None = None,
    ) -> Message:
        """Record a message in this agent's conversations."""
        return await self.store.add_message(
            self.agent,
            role,
            content,
            conversation_id=conversation_id,
            tags=tags,
            metadata=metadata,
        )

    async def list_messages(
        self,
        *,
        conversation_id: str | None = None,
        limit: int = 50,
        before: datetime | None = None,
    ) -> list[Message]:
        """The latest messages of this agent, oldest first."""
        return await self.store.list_messages(
            self.agent, conversation_id=conversation_id, limit=limit, before=before
        )

    def sources(self) -> SourceIndex:
        """This agent's sources: folders and files it can search, grep and open (see
        :class:`satchel.sources.SourceIndex`)."""
        from satchel.memory.sources import SourceIndex

        return SourceIndex(self.store, self.agent)

    async def search(
        self,
        query: str,
        *,
        domains: Domain = Domain.ALL,
        filters: SearchFilters | None = None,
        limit: int = 10,
        mode: SearchMode = "hybrid",
    ) -> list[SearchHit]:
        """Search what this agent may read (see :meth:`MemoryStore.search`)."""
        return await self.store.search(
            self.agent, query, domains=domains, filters=filters, limit=limit, mode=mode
        )

    async def share_block(self, label: str, recipient: str, permission: Permission) -> Block:
        """Share this agent's block with ``recipient`` at ``permission`` (see
        :meth:`MemoryStore.share_block`); what ``ctx.shared_blocks`` offers a tool."""
        return await self.store.share_block(
            self.agent, label, recipient, Permission(permission), origin=self.origin
        )

    async def unshare_block(self, label: str, recipient: str) -> Block:
        """Stop sharing this agent's block with ``recipient``."""
        return await self.store.unshare_block(self.agent, label, recipient, origin=self.origin)

    async def shared_blocks(self) -> list[Block]:
        """The blocks other agents share with this one, then its own that it shares."""
        blocks = await self.store.list_blocks(self.agent)
        theirs = [b for b in blocks if b.agent != self.agent]
        return theirs + [b for b in blocks if b.agent == self.agent and b.shares]


if TYPE_CHECKING:  # what a ToolContext carries as its ``memory``
    _SERVES_TOOLS: type[ToolMemory] = AgentMemory
    _SHARES: type[ToolSharedBlocks] = AgentMemory
