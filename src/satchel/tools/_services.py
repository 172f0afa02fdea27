"""The services a :class:`~satchel.tools.ToolContext` carries, as the tools layer sees
them: small protocols, so that the bottom of the house names nothing built on it.

:class:`satchel.memory.AgentMemory`, :class:`satchel.channels.MessageRouter` and
:class:`satchel.consent.PermissionBroker` implement them (pyright checks that where
each is defined); their records (blocks, hits, receipts, approval requests) are the
upper packages' own types, so the protocols type them as ``Any``.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any, Protocol, runtime_checkable

__all__ = ["ToolBroker", "ToolMemory", "ToolRouter", "ToolSharedBlocks", "ToolSources"]


class ToolMemory(Protocol):
    """The acting agent's memory as a tool reaches it (``ctx.memory``), for example
    :class:`satchel.memory.AgentMemory`: the store's methods without the agent."""

    @property
    def agent(self) -> str:
        """The agent whose memory this is."""
        ...

    async def get_block(self, label: str) -> Any:
        """The block ``label`` this agent can read."""
        ...

    async def get_block_by_id(self, block_id: str) -> Any:
        """The block with this id, if this agent can read it."""
        ...

    async def list_blocks(self, kinds: Collection[Any] | None = None) -> list[Any]:
        """The blocks this agent can read, of the given kinds (default: all)."""
        ...

    async def append_to_block(self, label: str, text: str, *, separator: str = "\n") -> Any:
        """Append ``text`` to block ``label`` through the permission gate."""
        ...

    async def search(self, query: str, *, limit: int = 10) -> list[Any]:
        """Search this agent's archival memory and conversations, best first."""
        ...


class ToolSources(Protocol):
    """The acting agent's sources as a tool reaches them (``ctx.sources()``), for
    example :class:`satchel.sources.SourceIndex`: folders and files to search, grep and
    open, each hit with its file and lines."""

    async def search(self, query: str, *, limit: int = 10) -> list[Any]:
        """The passages that best match ``query``, best first."""
        ...

    async def grep(
        self, pattern: str, *, files: str | None = None, limit: int = 50, ignore_case: bool = True
    ) -> Any:
        """The lines that match the regular expression ``pattern``."""
        ...

    async def open(self, name: str, *, line: int = 1, lines: int = 100) -> Any:
        """A window of lines of one file."""
        ...


@runtime_checkable
class ToolSharedBlocks(Protocol):
    """Sharing the acting agent's blocks with other agents (``ctx.shared_blocks``), for
    example :class:`satchel.memory.AgentMemory`; every change goes through the store's
    permission gate."""

    async def share_block(self, label: str, recipient: str, permission: Any) -> Any:
        """Share block ``label`` with ``recipient`` at ``permission``."""
        ...

    async def unshare_block(self, label: str, recipient: str) -> Any:
        """Stop sharing block ``label`` with ``recipient``."""
        ...

    async def shared_blocks(self) -> list[Any]:
        """The blocks shared with this agent by others, and its own that it shares."""
        ...


class ToolRouter(Protocol):
    """Delivers a tool's outgoing message (``ctx.router``), for example
    :class:`satchel.channels.MessageRouter`."""

    async def send(self, message: Any, /) -> Any:
        """Deliver ``message`` to its target and report how it went."""
        ...


class ToolBroker(Protocol):
    """Asks a human to approve an action and remembers the answer (``ctx.broker``), for
    example :class:`satchel.consent.PermissionBroker`."""

    async def check(self, scope: Any, /) -> Any:
        """The standing grant that covers ``scope``, or ``None``."""
        ...

    async def request(self, scope: Any, reason: str, origin: str, /) -> Any:
        """Ask a human to allow ``scope``, for ``reason``, where ``origin`` says."""
        ...

    async def consume(self, request_id: str, scope: Any, /) -> Any:
        """Spend the one-time approval ``request_id`` for ``scope``."""
        ...
