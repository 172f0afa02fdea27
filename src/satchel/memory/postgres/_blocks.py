"""SQL that reads blocks on PostgreSQL: one block by key, the block an agent means by a
label or an id, and every block an agent sees.

The writes are in :mod:`._block_writes` (a block's text) and :mod:`._block_settings`
(kind, sharing, permission and limit); the operator's writes in :mod:`._operator`.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any, LiteralString

from satchel._errors import NotFoundError
from satchel.memory._block_rules import as_seen_by, only_match
from satchel.memory._models import Block, BlockKind
from satchel.memory.postgres._db import Conn
from satchel.memory.postgres._rows import BLOCK_COLUMNS, block_from_row, keyed_blocks

__all__ = ["list_visible", "load", "resolve", "resolve_id"]

_KIND_ORDER: LiteralString = (
    "CASE b.kind WHEN 'core' THEN 0 WHEN 'working' THEN 1 ELSE 2 END, "
    'b.agent COLLATE "C", b.label COLLATE "C"'
)


async def load(conn: Conn, pk: int, *, lock: bool = False) -> Block:
    """The block with primary key ``pk`` (locked for update if ``lock``).

    Raises:
        NotFoundError: It was deleted.
    """
    query: LiteralString = f"SELECT {BLOCK_COLUMNS} FROM satchel_blocks AS b WHERE b.pk = %s"
    if lock:
        query += " FOR UPDATE"
    row = await (await conn.execute(query, (pk,))).fetchone()
    if row is None:
        raise NotFoundError("the block was deleted meanwhile")
    return block_from_row(row)


async def resolve(conn: Conn, agent: str, label: str) -> tuple[int, Block]:
    """Find the block ``agent`` means by ``label`` (bare or ``owner/label``).

    The agent's own block wins; otherwise a block shared with it under that label; an
    ``owner/label`` name picks a shared block explicitly.

    Raises:
        NotFoundError: Nothing visible to ``agent`` has that name, or a bare label is
            shared by two owners (the message lists the ``owner/label`` names).
    """
    found: list[tuple[int, Block]] = []
    if "\x00" not in label:
        if "/" in label:
            owner, _, bare = label.partition("/")
            cursor = await conn.execute(
                f"SELECT {BLOCK_COLUMNS} FROM satchel_blocks AS b "
                "WHERE b.agent = %(owner)s AND b.label = %(label)s "
                "AND (b.agent = %(me)s OR b.shares ? %(me)s)",
                {"owner": owner, "label": bare, "me": agent},
            )
        else:
            cursor = await conn.execute(
                f"SELECT {BLOCK_COLUMNS} FROM satchel_blocks AS b "
                "WHERE (b.agent = %(me)s AND b.label = %(label)s) "
                "OR (b.shares ? %(me)s AND b.label = %(label)s) "
                'ORDER BY b.agent COLLATE "C"',
                {"label": label, "me": agent},
            )
        found = keyed_blocks(await cursor.fetchall())
        own = [item for item in found if item[1].agent == agent]
        found = own or found
    return only_match(found, agent, label)


async def resolve_id(conn: Conn, agent: str, block_id: str) -> Block:
    """The block with id ``block_id``, if ``agent`` owns it or it is shared with it.

    Raises:
        NotFoundError: No block visible to ``agent`` has that id.
    """
    found: list[tuple[int, Block]] = []
    if "\x00" not in block_id:  # PostgreSQL text cannot hold NUL: no such id
        cursor = await conn.execute(
            f"SELECT {BLOCK_COLUMNS} FROM satchel_blocks AS b "
            "WHERE b.id = %(id)s AND (b.agent = %(me)s OR b.shares ? %(me)s)",
            {"id": block_id, "me": agent},
        )
        found = keyed_blocks(await cursor.fetchall())
    if not found:
        raise NotFoundError(
            f"no block with id {block_id[:80]!r} for agent {agent!r}", details={"id": block_id}
        )
    return as_seen_by(found[0][1], agent)


async def list_visible(conn: Conn, agent: str, kinds: Collection[BlockKind] | None) -> list[Block]:
    """Every block ``agent`` owns or that is shared with it."""
    where: LiteralString = "(b.agent = %(me)s OR b.shares ? %(me)s)"
    params: dict[str, Any] = {"me": agent}
    if kinds is not None:
        where += " AND b.kind = ANY(%(kinds)s)"
        params["kinds"] = [BlockKind(kind).value for kind in kinds]
    cursor = await conn.execute(
        f"SELECT {BLOCK_COLUMNS} FROM satchel_blocks AS b WHERE {where} ORDER BY {_KIND_ORDER}",
        params,
    )
    return [as_seen_by(block, agent) for _, block in keyed_blocks(await cursor.fetchall())]
