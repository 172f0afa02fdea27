"""Blocking SQL for merging one agent into another (see :mod:`satchel.memory._merge`),
inside the writer's transaction: the checks, the joined blocks, the moves, the shares
and the messages commit together or not at all."""

from __future__ import annotations

import json
import sqlite3

from satchel.memory._merge import MergeSteps, check_unchanged, moved_shares
from satchel.memory._models import Permission, utc_now
from satchel.memory.sqlite._messages import BLOCKS, store_vectors
from satchel.memory.sqlite._rows import agent_id, to_us

__all__ = ["merge_agents"]


def _set_shares(conn: sqlite3.Connection, pk: int, shares: dict[str, Permission]) -> None:
    conn.execute("DELETE FROM shares WHERE block_pk = ?", (pk,))
    conn.executemany(
        "INSERT INTO shares (block_pk, agent_id, permission) VALUES (?, ?, ?)",
        [(pk, agent_id(conn, who, create=True), level.value) for who, level in shares.items()],
    )


def _shares(conn: sqlite3.Connection, pk: int) -> dict[str, Permission]:
    rows = conn.execute(
        "SELECT a.name, s.permission FROM shares AS s JOIN agents AS a ON a.id = s.agent_id "
        "WHERE s.block_pk = ?",
        (pk,),
    ).fetchall()
    return {str(name): Permission(level) for name, level in rows}


def merge_agents(conn: sqlite3.Connection, steps: MergeSteps) -> int:
    """Write ``steps``; returns how many messages moved.

    Raises:
        VersionConflictError: A block read for the plan changed since.
    """
    source = agent_id(conn, steps.source, create=False)
    target = agent_id(conn, steps.target, create=True)
    assert target is not None
    if source is None:
        check_unchanged(steps.read, {}, steps.source)
        return 0
    ids = [*steps.read]
    now_rows = conn.execute(
        "SELECT id, version FROM blocks WHERE agent_id = ? OR id IN (SELECT value FROM "
        "json_each(?))",
        (source, json.dumps(ids)),
    ).fetchall()
    check_unchanged(steps.read, {str(i): int(v) for i, v in now_rows}, steps.source)
    now = to_us(utc_now())
    for after, dropped, vector in steps.joined:
        row = conn.execute("SELECT pk FROM blocks WHERE id = ?", (after.id,)).fetchone()
        pk = int(row[0])
        conn.execute(
            "UPDATE blocks SET value = ?, chars = ?, tags = ?, version = version + 1, "
            "updated_at = ? WHERE pk = ?",
            (after.value, len(after.value), json.dumps(list(after.tags)), now, pk),
        )
        conn.execute("DELETE FROM block_tags WHERE block_pk = ?", (pk,))
        conn.executemany(
            "INSERT INTO block_tags (tag, block_pk) VALUES (?, ?)", [(t, pk) for t in after.tags]
        )
        _set_shares(conn, pk, dict(after.shares))
        if vector is not None:
            store_vectors(conn, BLOCKS, [(pk, after.value)], vector[None, :])
        conn.execute("DELETE FROM blocks WHERE id = ?", (dropped.id,))
    conn.execute("UPDATE blocks SET agent_id = ? WHERE agent_id = ?", (target, source))
    # shares with the source (and with the target on its own blocks, moved ones included)
    touched = conn.execute(
        "SELECT DISTINCT s.block_pk, a.name FROM shares AS s "
        "JOIN blocks AS b ON b.pk = s.block_pk JOIN agents AS a ON a.id = b.agent_id "
        "WHERE s.agent_id = ? OR (s.agent_id = ? AND b.agent_id = ?)",
        (source, target, target),
    ).fetchall()
    for pk, owner in touched:
        shares = moved_shares(
            _shares(conn, int(pk)), owner=str(owner), source=steps.source, target=steps.target
        )
        _set_shares(conn, int(pk), shares)
    moved = conn.execute(
        "UPDATE messages SET agent_id = ? WHERE agent_id = ?", (target, source)
    ).rowcount
    conn.execute("UPDATE embeddings SET agent_id = ? WHERE agent_id = ?", (target, source))
    return int(moved)
