"""SQL for the operator's block writes on PostgreSQL (see
:mod:`satchel.memory._operator`).

Each write locks the block's row (``FOR UPDATE``) in its own transaction, checks the
owner and the expected version on the row as locked, and writes every change in one
``UPDATE`` (or ``DELETE``): the history row (trigger ``satchel_block_history_keep``)
and a new text's vector (the side row, :mod:`._vector_rows`) commit with it. Another
process's write to the block waits for the lock and then sees the edit whole.
"""

from __future__ import annotations

import json
from typing import Any, LiteralString

import numpy as np
import numpy.typing as npt

from satchel._errors import NotFoundError
from satchel.memory._block_rules import check_version
from satchel.memory._models import Block, utc_now
from satchel.memory._operator import BlockChange, changed
from satchel.memory.postgres._blocks import load
from satchel.memory.postgres._db import Conn
from satchel.memory.postgres._rows import BLOCK_COLUMNS, block_from_row, enc
from satchel.memory.postgres._vector_rows import BLOCK_VECTORS, VECTOR_VALUE, with_vector_set

__all__ = ["operator_delete", "operator_write"]

F32 = npt.NDArray[np.float32]

_UPDATE: LiteralString = (
    "UPDATE satchel_blocks AS b SET value = %(value)s, chars = %(chars)s, "
    "description = %(description)s, permission = %(permission)s, "
    "char_limit = %(char_limit)s, kind = %(kind)s, shares = %(shares)s::jsonb, "
    "version = b.version + 1, updated_at = %(now)s "
    f"WHERE b.pk = %(pk)s RETURNING {BLOCK_COLUMNS}"
)


async def _owned(conn: Conn, pk: int, agent: str, expected_version: int) -> Block:
    before = await load(conn, pk, lock=True)
    if before.agent != agent:
        raise NotFoundError("the block was deleted meanwhile")
    check_version(before, expected_version)
    return before


async def operator_write(
    conn: Conn,
    pk: int,
    agent: str,
    change: BlockChange,
    *,
    expected_version: int,
    vector: F32 | None,
    model: str | None,
) -> Block:
    """Apply ``change`` to block ``pk`` of ``agent`` at ``expected_version``, as one
    version step under the row lock; a change that changes nothing keeps the version.
    A new text's vector is ``vector`` (stored while the database's model is
    ``model``), or none.

    Raises:
        NotFoundError: The block is gone.
        VersionConflictError: It is not at ``expected_version``.
        CharLimitError: The text would be over the limit.
    """
    async with conn.transaction():
        before = await _owned(conn, pk, agent, expected_version)
        after = changed(before, change)
        if after is None:
            return before
        params: dict[str, Any] = {
            "pk": pk,
            "value": enc(after.value),
            "chars": len(after.value),
            "description": enc(after.description),
            "permission": after.permission.value,
            "char_limit": after.char_limit,
            "kind": after.kind.value,
            "shares": json.dumps({who: level.value for who, level in after.shares.items()}),
            "now": utc_now(),
            "vec": vector,
            "model": model,
        }
        query = (
            with_vector_set(_UPDATE, BLOCK_VECTORS, VECTOR_VALUE)
            if after.value != before.value
            else _UPDATE
        )
        row = await (await conn.execute(query, params)).fetchone()
    assert row is not None
    return block_from_row(row)


async def operator_delete(conn: Conn, pk: int, agent: str, *, expected_version: int) -> Block:
    """Delete block ``pk`` of ``agent`` at ``expected_version``; returns it as it was.

    Raises:
        NotFoundError: The block is gone.
        VersionConflictError: It is not at ``expected_version``.
    """
    async with conn.transaction():
        before = await _owned(conn, pk, agent, expected_version)
        await conn.execute("DELETE FROM satchel_blocks WHERE pk = %s", (pk,))
    return before
