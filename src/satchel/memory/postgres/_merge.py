"""SQL for merging one agent into another on PostgreSQL (see
:mod:`satchel.memory._merge`), in one transaction: the source's blocks and the joined
ones are locked (``FOR UPDATE``) and checked against the versions read, then the joined
blocks, the moves, the shares and the messages are written and commit together."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import numpy.typing as npt

from satchel.memory._merge import MergeSteps, check_unchanged, moved_shares
from satchel.memory._models import Permission, utc_now
from satchel.memory.postgres._db import Conn
from satchel.memory.postgres._rows import enc, enc_all
from satchel.memory.postgres._vector_rows import BLOCK_VECTORS, VECTOR_VALUE, with_vector_set

__all__ = ["merge_agents"]

F32 = npt.NDArray[np.float32]

_JOIN = with_vector_set(
    "UPDATE satchel_blocks AS b SET value = %(value)s, chars = %(chars)s, tags = %(tags)s, "
    "shares = %(shares)s::jsonb, version = b.version + 1, updated_at = %(now)s "
    "WHERE b.id = %(id)s RETURNING b.pk",
    BLOCK_VECTORS,
    VECTOR_VALUE,
)


def _dump(shares: dict[str, Permission]) -> str:
    return json.dumps({who: level.value for who, level in shares.items()})


async def merge_agents(conn: Conn, steps: MergeSteps, model: str | None) -> int:
    """Write ``steps`` in one transaction; returns how many messages moved.

    Raises:
        VersionConflictError: A block read for the plan changed since.
    """
    source, target = steps.source, steps.target
    async with conn.transaction():
        rows = await (
            await conn.execute(
                "SELECT id, version FROM satchel_blocks WHERE agent = %s OR id = ANY(%s) "
                "ORDER BY pk FOR UPDATE",
                (source, list(steps.read)),
            )
        ).fetchall()
        check_unchanged(steps.read, {str(i): int(v) for i, v in rows}, source)
        now = utc_now()
        for after, dropped, vector in steps.joined:
            params: dict[str, Any] = {
                "id": after.id,
                "value": enc(after.value),
                "chars": len(after.value),
                "tags": enc_all(after.tags),
                "shares": _dump(dict(after.shares)),
                "now": now,
                "vec": vector,
                "model": model,
            }
            await conn.execute(_JOIN, params)
            await conn.execute("DELETE FROM satchel_blocks WHERE id = %s", (dropped.id,))
        await conn.execute(
            "UPDATE satchel_blocks SET agent = %s WHERE agent = %s", (target, source)
        )
        touched = await (
            await conn.execute(
                "SELECT pk, agent, shares FROM satchel_blocks WHERE shares ? %s "
                "OR (agent = %s AND shares ? %s) ORDER BY pk FOR UPDATE",
                (source, target, target),
            )
        ).fetchall()
        for pk, owner, shares in touched:
            levels = {str(who): Permission(level) for who, level in dict(shares).items()}
            after_shares = moved_shares(levels, owner=str(owner), source=source, target=target)
            await conn.execute(
                "UPDATE satchel_blocks SET shares = %s::jsonb WHERE pk = %s",
                (_dump(after_shares), pk),
            )
        cursor = await conn.execute(
            "UPDATE satchel_messages SET agent = %s WHERE agent = %s", (target, source)
        )
        return cursor.rowcount
