"""A block's history on its page (versions over time, and a diff between two)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from satchel.memory import Block, MemoryStore

__all__ = ["history_view"]


async def history_view(
    store: MemoryStore, block: Block, query: Mapping[str, str]
) -> dict[str, Any] | None:
    """What the block page shows of ``block``'s history; ``None`` when the store keeps
    none."""
    return None
