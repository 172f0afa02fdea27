"""A page of the blocks an agent sees, on SQLite (see :mod:`satchel.memory._paging`).

Three statements in the caller's read transaction, so the page and the total agree:
the count, the page's primary keys in listing order (a narrow sort: the key, the kind's
rank, the owner and the label, never the text), then those rows and their shares.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Collection
from typing import Any

from satchel.memory._block_rules import as_seen_by
from satchel.memory._models import Block, BlockKind
from satchel.memory.sqlite._rows import (
    BLOCK_COLUMNS,
    BLOCK_FROM,
    agent_id,
    block_from_row,
    placeholders,
    shares_of,
)

__all__ = ["visible_page"]

_KIND_ORDER = "CASE b.kind WHEN 'core' THEN 0 WHEN 'working' THEN 1 ELSE 2 END"


def visible_page(
    conn: sqlite3.Connection,
    agent: str,
    kinds: Collection[BlockKind] | None,
    offset: int,
    limit: int,
) -> tuple[list[Block], int]:
    """The blocks at ``offset`` to ``offset + limit`` of what ``agent`` sees (owned or
    shared, optionally of some kinds), ordered by kind, owner, label; and how many
    there are in all."""
    me = agent_id(conn, agent, create=False)
    if me is None:
        return [], 0
    where = "(b.agent_id = ? OR b.pk IN (SELECT block_pk FROM shares WHERE agent_id = ?))"
    params: list[Any] = [me, me]
    if kinds is not None:
        kinds = list(kinds)
        where += f" AND b.kind IN ({placeholders(len(kinds))})"
        params.extend(BlockKind(kind).value for kind in kinds)
    (total,) = conn.execute(f"SELECT count(*) FROM blocks AS b WHERE {where}", params).fetchone()
    pks = [
        int(row[0])
        for row in conn.execute(
            f"SELECT b.pk FROM {BLOCK_FROM} WHERE {where} "
            f"ORDER BY {_KIND_ORDER}, a.name, b.label LIMIT ? OFFSET ?",
            (*params, limit, offset),
        )
    ]
    if not pks:
        return [], int(total)
    rows = conn.execute(
        f"SELECT {BLOCK_COLUMNS} FROM {BLOCK_FROM} WHERE b.pk IN ({placeholders(len(pks))})",
        pks,
    ).fetchall()
    shares = shares_of(conn, pks)
    by_pk = {int(row[0]): block_from_row(row, shares[int(row[0])]) for row in rows}
    return [as_seen_by(by_pk[pk], agent) for pk in pks], int(total)
