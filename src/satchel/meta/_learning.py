"""Learning from use: a ``discover_tools`` query followed by a successful call.

:class:`UsageLearning` remembers each session's latest ``discover_tools`` query (a
session is one agent on one channel). When a tool is then called
successfully in that session, through ``invoke_tool`` or as a pinned tool, within
:attr:`UsageLearning.window` seconds, the pair (query, tool) is stored in the
:class:`~satchel.meta.UsageStore` under the catalog's id, and the catalog index ranks by
it from then on (the learned queries count as the tool's examples).

A failure of the store is logged and never fails the call that taught it.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from typing import Final

from satchel._errors import InvalidInputError, StorageError
from satchel.meta._catalog import CatalogIndex
from satchel.meta._usage import LearnedPair, UsageStore, check_pair
from satchel.tools import MAX_EXAMPLE_CHARS, ToolContext

__all__ = ["DEFAULT_WINDOW", "UsageLearning", "session_key"]

logger = logging.getLogger("satchel.meta.learning")

DEFAULT_WINDOW: Final = 600.0
"""Seconds after a ``discover_tools`` query in which a successful call is learned."""
_MAX_SESSIONS: Final = 1024


def session_key(ctx: ToolContext) -> tuple[str, str]:
    """Which session a call belongs to: its agent and its channel.

    Not the MCP connection: a client of the stateless protocol (2026-07-28) gives no
    lasting connection to tell apart, while the agent (one per project with ``--agent
    auto``) does.
    """
    return (ctx.agent, ctx.origin or "")


class UsageLearning:
    """The learned pairs of one catalog: recorded from use, loaded into its index.

    Args:
        index: The catalog index that ranks by what is learned.
        store: Where the pairs live.
        catalog: The catalog's id (see :func:`~satchel.meta.catalog_id`).
        enabled: Whether calls teach anything (``False``: pairs already stored still
            rank, and :meth:`add` still works; nothing is recorded from use).
        window: Seconds after a query in which a successful call is learned.
    """

    def __init__(
        self,
        index: CatalogIndex,
        store: UsageStore,
        catalog: str,
        *,
        enabled: bool = True,
        window: float = DEFAULT_WINDOW,
    ) -> None:
        self.index = index
        self.store = store
        self.catalog = catalog
        self.enabled = enabled
        self.window = window
        self._lock = threading.Lock()
        self._recent: OrderedDict[tuple[str, str], tuple[str, float]] = OrderedDict()
        self._loaded = False

    async def load(self) -> None:
        """Load the stored pairs into the index (again)."""
        pairs = await self.store.pairs(self.catalog)
        per_tool: dict[str, list[str]] = {}
        for pair in reversed(pairs):  # oldest first
            per_tool.setdefault(pair.tool, []).append(pair.query)
        for tool in set(self.index.learned()) | set(per_tool):
            self.index.set_learned(tool, per_tool.get(tool, ()))
        self._loaded = True

    async def ensure_loaded(self) -> None:
        """Load the stored pairs once."""
        if not self._loaded:
            await self.load()

    def noted(self, query: str, ctx: ToolContext) -> None:
        """Remember ``query`` as the session's latest ``discover_tools`` query."""
        text = " ".join(query.split())
        if len(text) > MAX_EXAMPLE_CHARS:  # learn the start of a very long query
            text = text[: MAX_EXAMPLE_CHARS + 1].rsplit(" ", 1)[0][:MAX_EXAMPLE_CHARS]
        if not self.enabled or not text:
            return
        with self._lock:
            key = session_key(ctx)
            self._recent.pop(key, None)
            self._recent[key] = (text, time.monotonic())
            while len(self._recent) > _MAX_SESSIONS:
                self._recent.popitem(last=False)

    async def succeeded(self, tool: str, ctx: ToolContext) -> LearnedPair | None:
        """Learn (latest query, ``tool``) after a successful call of ``tool`` in the
        session, when the query is recent enough; returns the pair learned."""
        if not self.enabled:
            return None
        with self._lock:
            recent = self._recent.get(session_key(ctx))
        if recent is None or time.monotonic() - recent[1] > self.window:
            return None
        try:
            return await self.add(recent[0], tool)
        except (StorageError, InvalidInputError) as exc:
            logger.warning("could not learn that %r served a query: %s", tool, exc)
            return None

    async def add(self, query: str, tool: str) -> LearnedPair:
        """Store the pair (query, ``tool``) and rank by it.

        Raises:
            InvalidInputError: An empty or overlong query, or an empty tool name.
            StorageError: The store failed.
        """
        query, tool = check_pair(query, tool)
        pair = await self.store.learn(self.catalog, query, tool)
        await self.load()
        return pair

    async def pairs(self, tool: str | None = None) -> list[LearnedPair]:
        """The stored pairs (only ``tool``'s when given), most recently used first."""
        return await self.store.pairs(self.catalog, tool=tool)

    async def forget(self, *, query: str | None = None, tool: str | None = None) -> int:
        """Delete the matching pairs (all of the catalog's when both are ``None``) and
        stop ranking by them; returns how many went."""
        gone = await self.store.forget(self.catalog, query=query, tool=tool)
        await self.load()
        return gone
