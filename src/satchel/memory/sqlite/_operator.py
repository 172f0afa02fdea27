"""Blocking SQL for the operator's block writes (see :mod:`satchel.memory._operator`).

Each function takes a connection already inside the writer's transaction, so the
ownership and version checks, the write, the shares, the vector and the history row
(written by the ``block_history_keep`` trigger) all commit together or not at all.
"""

from __future__ import annotations

import sqlite3

import numpy as np
import numpy.typing as npt

from satchel._errors import NotFoundError
from satchel.memory._block_rules import check_version
from satchel.memory._models import Block, utc_now
from satchel.memory._operator import BlockChange, changed
from satchel.memory.sqlite._blocks import load
from satchel.memory.sqlite._messages import BLOCKS, store_vectors
from satchel.memory.sqlite._rows import to_us

__all__ = ["operator_delete", "operator_write"]

F32 = npt.NDArray[np.float32]


def _owned(conn: sqlite3.Connection, pk: int, agent: str, expected_version: int) -> Block:
    before = load(conn, pk)
    if before.agent != agent:
        raise NotFoundError("the block was deleted meanwhile")
    check_version(before, expected_version)
    return before


def operator_write(
    conn: sqlite3.Connection,
    pk: int,
    agent: str,
    change: BlockChange,
    *,
    expected_version: int,
    vector: F32 | None,
) -> Block:
    """Apply ``change`` to block ``pk`` of ``agent`` at ``expected_version``, as one
    version step; a change that changes nothing keeps the version.

    Raises:
        NotFoundError: The block is gone.
        VersionConflictError: It is not at ``expected_version``.
        CharLimitError: The text would be over the limit.
    """
    before = _owned(conn, pk, agent, expected_version)
    after = changed(before, change)
    if after is None:
        return before
    conn.execute(
        "UPDATE blocks SET value = ?, chars = ?, description = ?, permission = ?, "
        "char_limit = ?, kind = ?, version = version + 1, updated_at = ? WHERE pk = ?",
        (
            after.value,
            len(after.value),
            after.description,
            after.permission.value,
            after.char_limit,
            after.kind.value,
            to_us(utc_now()),
            pk,
        ),
    )
    conn.executemany(
        "UPDATE shares SET permission = ? WHERE block_pk = ? "
        "AND agent_id = (SELECT id FROM agents WHERE name = ?)",
        [
            (level.value, pk, who)
            for who, level in after.shares.items()
            if level != before.shares[who]
        ],
    )
    if vector is not None and after.value != before.value:
        store_vectors(conn, BLOCKS, [(pk, after.value)], vector[None, :])
    return load(conn, pk)


def operator_delete(
    conn: sqlite3.Connection, pk: int, agent: str, *, expected_version: int
) -> Block:
    """Delete block ``pk`` of ``agent`` at ``expected_version``; returns it as it was.

    Raises:
        NotFoundError: The block is gone.
        VersionConflictError: It is not at ``expected_version``.
    """
    before = _owned(conn, pk, agent, expected_version)
    conn.execute("DELETE FROM blocks WHERE pk = ?", (pk,))
    return before
