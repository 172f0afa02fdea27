"""A page of an agent's blocks: :class:`BlockPage`, and the checks on its arguments.

:meth:`~satchel.memory.MemoryStore.list_blocks_page` reads one page of what
:meth:`~satchel.memory.MemoryStore.list_blocks` would return, in the same order (kind:
core, working, archival; then owner; then label), which is a total order: an agent sees
at most one block per owner and label. Paging is by offset, so a page can be asked for
by number (the console's ``?page=N``); the database still reads only the page's rows
and counts the rest.
"""

from __future__ import annotations

from collections.abc import Collection

from pydantic import BaseModel, ConfigDict

from satchel._errors import InvalidInputError
from satchel.memory._models import Block, BlockKind

__all__ = ["MAX_PAGE_LIMIT", "BlockPage", "check_kinds", "check_page"]

MAX_PAGE_LIMIT = 1000
"""The most blocks one page may hold."""

_MAX_OFFSET = 2**62  # past any table, and still a 64-bit integer in SQL


class BlockPage(BaseModel):
    """One page of the blocks an agent sees.

    Attributes:
        blocks: The page's blocks, in :meth:`~satchel.memory.MemoryStore.list_blocks`'s
            order.
        total: How many blocks the whole listing holds (with the same kinds), read
            with the page.
        offset: How many blocks of the listing come before this page.
        limit: The most blocks the page could hold.

    Example:
        >>> page = await store.list_blocks_page("ada", limit=50)  # doctest: +SKIP
        >>> while page.next_offset is not None:  # doctest: +SKIP
        ...     page = await store.list_blocks_page("ada", offset=page.next_offset, limit=50)
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    blocks: list[Block]
    total: int
    offset: int
    limit: int

    @property
    def next_offset(self) -> int | None:
        """The offset of the next page; ``None`` when this page is the last."""
        following = self.offset + len(self.blocks)
        return following if self.blocks and following < self.total else None


def check_page(offset: object, limit: object) -> tuple[int, int]:
    """Check a page's ``offset`` and ``limit`` and return them.

    Raises:
        InvalidInputError: ``offset`` is not an integer ``>= 0`` (and below 2**62), or
            ``limit`` is not an integer from 1 to :data:`MAX_PAGE_LIMIT`.
    """
    if isinstance(offset, bool) or not isinstance(offset, int) or not 0 <= offset < _MAX_OFFSET:
        raise InvalidInputError(
            f"offset must be a whole number >= 0, not {str(offset)[:40]!r}",
            details={"offset": str(offset)[:40]},
        )
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_PAGE_LIMIT:
        raise InvalidInputError(
            f"limit must be a whole number from 1 to {MAX_PAGE_LIMIT}, not {str(limit)[:40]!r}",
            details={"limit": str(limit)[:40]},
        )
    return offset, limit


def check_kinds(kinds: Collection[BlockKind | str] | None) -> list[BlockKind] | None:
    """The distinct kinds asked for, in a fixed order (``None``: every kind).

    Raises:
        InvalidInputError: One is no kind of block.
    """
    if kinds is None:
        return None
    chosen: set[BlockKind] = set()
    for kind in kinds:
        try:
            chosen.add(BlockKind(kind))
        except ValueError:
            raise InvalidInputError(
                f"{str(kind)[:40]!r} is no kind of block; use one of "
                + ", ".join(k.value for k in BlockKind),
                details={"kind": str(kind)[:40]},
            ) from None
    return [k for k in BlockKind if k in chosen]
