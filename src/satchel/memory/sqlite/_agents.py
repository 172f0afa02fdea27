"""Blocking SQL for agents on SQLite: setting one up once, and listing them.

The store runs :func:`initialise` inside one ``BEGIN IMMEDIATE`` write transaction, so
two processes setting up the same agent at once are serialised by SQLite's write lock:
the second finds ``initialised_at`` set and creates nothing.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from satchel.memory._backend import NewBlock
from satchel.memory._models import AgentSummary, Block, utc_now
from satchel.memory.sqlite import _blocks
from satchel.memory.sqlite._messages import BLOCKS, store_vectors
from satchel.memory.sqlite._rows import agent_id, from_us, to_us

__all__ = ["initialise", "is_set_up", "summaries"]

F32 = npt.NDArray[np.float32]


def initialise(
    conn: sqlite3.Connection,
    agent: str,
    template: str,
    blocks: Sequence[tuple[NewBlock, F32 | None]],
) -> list[Block] | None:
    """Mark ``agent`` set up from ``template`` and create the blocks it lacks; ``None``
    when it was set up already. Run inside a write transaction."""
    owner = agent_id(conn, agent, create=True)
    row = conn.execute("SELECT initialised_at FROM agents WHERE id = ?", (owner,)).fetchone()
    if row is None or row[0] is not None:
        return None
    conn.execute(
        "UPDATE agents SET initialised_at = ?, template = ? WHERE id = ?",
        (to_us(utc_now()), template, owner),
    )
    made: list[Block] = []
    for new, vector in blocks:
        taken = conn.execute(
            "SELECT 1 FROM blocks WHERE agent_id = ? AND label = ?", (owner, new["label"])
        ).fetchone()
        if taken is not None:
            continue
        pk, block = _blocks.insert(conn, **new)
        if vector is not None:
            store_vectors(conn, BLOCKS, [(pk, new["value"])], vector[None, :])
        made.append(block)
    return made


def is_set_up(conn: sqlite3.Connection, agent: str) -> bool:
    """Whether ``agent`` was set up."""
    row = conn.execute("SELECT initialised_at FROM agents WHERE name = ?", (agent,)).fetchone()
    return row is not None and row[0] is not None


_SUMMARY = """
    SELECT a.name, a.created_at, a.initialised_at, a.template,
        (SELECT count(*) FROM blocks WHERE agent_id = a.id AND kind != 'archival'),
        (SELECT count(*) FROM blocks WHERE agent_id = a.id AND kind = 'archival'),
        (SELECT count(*) FROM messages WHERE agent_id = a.id),
        (SELECT max(updated_at) FROM blocks WHERE agent_id = a.id),
        (SELECT max(created_at) FROM messages WHERE agent_id = a.id)
    FROM agents AS a
    WHERE (a.initialised_at IS NOT NULL
        OR EXISTS (SELECT 1 FROM blocks WHERE agent_id = a.id)
        OR EXISTS (SELECT 1 FROM messages WHERE agent_id = a.id))
"""


def summaries(conn: sqlite3.Connection, agent: str | None) -> list[AgentSummary]:
    """Every agent that was set up or owns something (or only ``agent``), by name."""
    if agent is None:
        rows = conn.execute(_SUMMARY + " ORDER BY a.name").fetchall()
    else:
        rows = conn.execute(_SUMMARY + " AND a.name = ?", (agent,)).fetchall()
    out: list[AgentSummary] = []
    for name, created, initialised, template, core, archival, messages, *lasts in rows:
        moments = [int(m) for m in (*lasts, initialised) if m is not None]
        out.append(
            AgentSummary(
                name=name,
                blocks=core,
                archival=archival,
                messages=messages,
                created_at=from_us(created) if created is not None else None,
                last_active=from_us(max(moments)) if moments else None,
                initialised=initialised is not None,
                template=template,
            )
        )
    return out
