"""Learned (query, tool) pairs: what ``discover_tools`` learns from use.

When a ``discover_tools`` query is followed by a successful call of a tool, the pair is
kept in a :class:`UsageStore`, and later searches treat the query as one more example
request of that tool (see :mod:`satchel.meta._examples`). Pairs are kept per catalog
(:func:`catalog_id`, derived from the tool names), and each catalog keeps at most
``max_pairs`` of them: adding one more evicts the pair used least recently.

:class:`MemoryUsageStore` keeps pairs for one process (the library's default);
:class:`~satchel.meta.SQLiteUsageStore` keeps them in the memory database ``satchel
serve`` uses, so a new server process starts with what the old one learned.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections import OrderedDict
from collections.abc import Iterable
from typing import Any, Final, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict

from satchel._errors import InvalidInputError
from satchel.tools import MAX_EXAMPLE_CHARS

__all__ = [
    "DEFAULT_MAX_PAIRS",
    "LearnedPair",
    "MemoryUsageStore",
    "UsageStore",
    "catalog_id",
    "check_pair",
]

DEFAULT_MAX_PAIRS: Final = 5000
"""How many learned pairs one catalog keeps by default (the least recently used go)."""


class LearnedPair(BaseModel):
    """One request that a tool served.

    Attributes:
        query: The ``discover_tools`` query, whitespace folded.
        tool: The tool that was then called successfully.
        uses: How many times the pair was learned.
        last_used: When it was last learned (seconds since the epoch).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    query: str
    tool: str
    uses: int = 1
    last_used: float = 0.0


def catalog_id(names: Iterable[str]) -> str:
    """A short, stable id of a tool set: the same names give the same id in any order.

    Example:
        >>> catalog_id(["b", "a"]) == catalog_id(["a", "b"])
        True
    """
    text = "\n".join(sorted(set(names)))
    return hashlib.blake2b(text.encode("utf-8"), digest_size=8).hexdigest()


def check_pair(query: Any, tool: Any) -> tuple[str, str]:
    """``(query, tool)`` checked: both non-empty strings, the query whitespace folded and
    at most :data:`~satchel.tools.MAX_EXAMPLE_CHARS` long.

    Raises:
        InvalidInputError: Either is not a string, or is empty, or the query is too long.
    """
    if not isinstance(query, str) or not isinstance(tool, str):
        raise InvalidInputError(
            f"a learned pair needs a query and a tool name as text, not {query!r}, {tool!r}"
        )
    text = " ".join(query.split())
    if not text or not tool.strip():
        raise InvalidInputError("a learned pair needs a non-empty query and tool name")
    if len(text) > MAX_EXAMPLE_CHARS:
        raise InvalidInputError(
            f"the query is {len(text)} characters; a learned query may have at most "
            f"{MAX_EXAMPLE_CHARS}"
        )
    if "\x00" in text or "\x00" in tool:
        raise InvalidInputError("a learned pair may not contain NUL characters")
    return text, tool


@runtime_checkable
class UsageStore(Protocol):
    """Where learned pairs live: one bounded set per catalog id."""

    max_pairs: int
    """The most pairs one catalog keeps; the least recently used go first."""

    async def learn(self, catalog: str, query: str, tool: str) -> LearnedPair:
        """Record that ``tool`` served ``query`` (again), evicting the least recently
        used pairs beyond :attr:`max_pairs`; returns the stored pair."""
        ...

    async def pairs(self, catalog: str, *, tool: str | None = None) -> list[LearnedPair]:
        """The catalog's pairs (only ``tool``'s when given), most recently used first."""
        ...

    async def forget(
        self, catalog: str, *, query: str | None = None, tool: str | None = None
    ) -> int:
        """Delete the pairs matching ``query`` and/or ``tool`` (every pair of the catalog
        when both are ``None``); returns how many went."""
        ...


class MemoryUsageStore:
    """A :class:`UsageStore` in this process's memory (lost when it ends).

    Args:
        max_pairs: The most pairs one catalog keeps.
    """

    def __init__(self, *, max_pairs: int = DEFAULT_MAX_PAIRS) -> None:
        if max_pairs < 1:
            raise InvalidInputError(f"max_pairs must be at least 1, not {max_pairs}")
        self.max_pairs = max_pairs
        self._lock = threading.Lock()
        self._catalogs: dict[str, OrderedDict[tuple[str, str], LearnedPair]] = {}

    async def learn(self, catalog: str, query: str, tool: str) -> LearnedPair:
        """See :meth:`UsageStore.learn`."""
        query, tool = check_pair(query, tool)
        with self._lock:
            pairs = self._catalogs.setdefault(catalog, OrderedDict())
            old = pairs.pop((query, tool), None)
            pair = LearnedPair(
                query=query,
                tool=tool,
                uses=1 if old is None else old.uses + 1,
                last_used=time.time(),
            )
            pairs[(query, tool)] = pair
            while len(pairs) > self.max_pairs:
                pairs.popitem(last=False)
            return pair

    async def pairs(self, catalog: str, *, tool: str | None = None) -> list[LearnedPair]:
        """See :meth:`UsageStore.pairs`."""
        with self._lock:
            held = self._catalogs.get(catalog)
            found = [] if held is None else list(held.values())
        return [p for p in reversed(found) if tool is None or p.tool == tool]

    async def forget(
        self, catalog: str, *, query: str | None = None, tool: str | None = None
    ) -> int:
        """See :meth:`UsageStore.forget`."""
        folded = None if query is None else " ".join(query.split())
        with self._lock:
            pairs = self._catalogs.get(catalog)
            if pairs is None:
                return 0
            gone = [
                key
                for key in pairs
                if (folded is None or key[0] == folded) and (tool is None or key[1] == tool)
            ]
            for key in gone:
                del pairs[key]
            return len(gone)
