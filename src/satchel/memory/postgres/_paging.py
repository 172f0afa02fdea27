"""A page of the blocks an agent sees, on PostgreSQL (see :mod:`satchel.memory._paging`).

One statement, so the page and the total come from one snapshot: the visible blocks'
keys are sorted narrow (key, kind rank, owner, label; never the text), the page's keys
are joined back to their rows, and the count rides on a one-row side that is there even
when the page is empty.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any, LiteralString

from satchel.memory._block_rules import as_seen_by
from satchel.memory._models import Block, BlockKind
from satchel.memory.postgres._db import Conn
from satchel.memory.postgres._rows import BLOCK_COLUMNS, block_from_row

__all__ = ["visible_page"]

_ORDER: LiteralString = 'p.rank, p.agent COLLATE "C", p.label COLLATE "C"'


async def visible_page(
    conn: Conn, agent: str, kinds: Collection[BlockKind] | None, offset: int, limit: int
) -> tuple[list[Block], int]:
    """The blocks at ``offset`` to ``offset + limit`` of what ``agent`` sees (owned or
    shared, optionally of some kinds), ordered by kind, owner, label; and how many
    there are in all."""
    where: LiteralString = "(b.agent = %(me)s OR b.shares ? %(me)s)"
    params: dict[str, Any] = {"me": agent, "limit": limit, "offset": offset}
    if kinds is not None:
        where += " AND b.kind = ANY(%(kinds)s)"
        params["kinds"] = [BlockKind(kind).value for kind in kinds]
    cursor = await conn.execute(
        "WITH visible AS ("
        " SELECT b.pk, CASE b.kind WHEN 'core' THEN 0 WHEN 'working' THEN 1 ELSE 2 END AS rank,"
        f" b.agent, b.label FROM satchel_blocks AS b WHERE {where}"
        "), p AS ("
        f" SELECT * FROM visible AS p ORDER BY {_ORDER} LIMIT %(limit)s OFFSET %(offset)s"
        ") "
        f"SELECT {BLOCK_COLUMNS}, c.total FROM (SELECT count(*) AS total FROM visible) AS c "
        "LEFT JOIN (p JOIN satchel_blocks AS b ON b.pk = p.pk) ON true "
        f"ORDER BY {_ORDER}",
        params,
    )
    rows = await cursor.fetchall()
    total = int(rows[0][-1])
    blocks = [as_seen_by(block_from_row(row), agent) for row in rows if row[0] is not None]
    return blocks, total
