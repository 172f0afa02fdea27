"""SQL for agents on PostgreSQL: setting one up once, and listing them.

:func:`initialise` runs in one transaction that first inserts the agent's row in
``satchel_agents`` (``ON CONFLICT DO NOTHING``): a second process setting up the same
agent at once waits on that row until the first commits, then inserts nothing and
creates no block.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, LiteralString

import numpy as np
import numpy.typing as npt

from satchel.memory._backend import NewBlock
from satchel.memory._models import AgentSummary, Block
from satchel.memory.postgres import _block_writes
from satchel.memory.postgres._db import Conn

__all__ = ["initialise", "is_set_up", "summaries"]

F32 = npt.NDArray[np.float32]


async def initialise(
    conn: Conn,
    agent: str,
    template: str,
    blocks: Sequence[tuple[NewBlock, F32 | None]],
    model: str | None,
) -> list[Block] | None:
    """Record ``agent`` as set up from ``template`` and create the blocks it lacks;
    ``None`` when it was set up already.

    Raises:
        AlreadyExistsError: A block of a template label was created meanwhile (nothing
            was written; try again).
    """
    async with conn.transaction():
        cursor = await conn.execute(
            "INSERT INTO satchel_agents (name, template) VALUES (%s, %s) "
            "ON CONFLICT (name) DO NOTHING RETURNING name",
            (agent, template),
        )
        if await cursor.fetchone() is None:
            return None
        cursor = await conn.execute(
            "SELECT label FROM satchel_blocks WHERE agent = %s AND label = ANY(%s)",
            (agent, [new["label"] for new, _ in blocks]),
        )
        taken = {str(row[0]) for row in await cursor.fetchall()}
        made: list[Block] = []
        for new, vector in blocks:
            if new["label"] in taken:
                continue
            _, block = await _block_writes.insert(
                conn, **new, vector=vector, model=model if vector is not None else None
            )
            made.append(block)
        return made


async def is_set_up(conn: Conn, agent: str) -> bool:
    """Whether ``agent`` was set up."""
    cursor = await conn.execute("SELECT 1 FROM satchel_agents WHERE name = %s", (agent,))
    return await cursor.fetchone() is not None


_SUMMARY: LiteralString = """
    WITH names AS (
        SELECT name FROM satchel_agents
        UNION SELECT agent FROM satchel_blocks
        UNION SELECT agent FROM satchel_messages
    ),
    b AS (
        SELECT agent,
            count(*) FILTER (WHERE kind <> 'archival') AS blocks,
            count(*) FILTER (WHERE kind = 'archival') AS archival,
            min(created_at) AS first, max(updated_at) AS last
        FROM satchel_blocks GROUP BY agent
    ),
    m AS (
        SELECT agent, count(*) AS messages, min(created_at) AS first, max(created_at) AS last
        FROM satchel_messages GROUP BY agent
    )
    SELECT n.name, coalesce(b.blocks, 0), coalesce(b.archival, 0), coalesce(m.messages, 0),
        coalesce(a.created_at, least(b.first, m.first)),
        greatest(b.last, m.last, a.created_at),
        a.name IS NOT NULL, a.template
    FROM names AS n
    LEFT JOIN satchel_agents AS a ON a.name = n.name
    LEFT JOIN b ON b.agent = n.name
    LEFT JOIN m ON m.agent = n.name
    WHERE %(agent)s::text IS NULL OR n.name = %(agent)s
    ORDER BY n.name COLLATE "C"
"""


async def summaries(conn: Conn, agent: str | None) -> list[AgentSummary]:
    """Every agent that was set up or owns something (or only ``agent``), by name."""
    params: dict[str, Any] = {"agent": agent}
    cursor = await conn.execute(_SUMMARY, params)
    return [
        AgentSummary(
            name=row[0],
            blocks=row[1],
            archival=row[2],
            messages=row[3],
            created_at=row[4],
            last_active=row[5],
            initialised=row[6],
            template=row[7],
        )
        for row in await cursor.fetchall()
    ]
