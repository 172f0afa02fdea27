"""Blocking SQL for neighbouring-entry context (:mod:`satchel.memory._context_window`):
which rows sit just before and after each candidate in its owner's sequence."""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping, Sequence

import numpy as np
import numpy.typing as npt

from satchel.memory.sqlite._messages import BLOCKS
from satchel.memory.sqlite._rows import placeholders

__all__ = ["closeness", "neighbour_pks"]

_BLOCK_NEIGHBOURS = """
    SELECT b.pk,
        (SELECT max(x.pk) FROM blocks AS x
            WHERE x.agent_id = b.agent_id AND x.kind = 'archival' AND x.pk < b.pk),
        (SELECT min(x.pk) FROM blocks AS x
            WHERE x.agent_id = b.agent_id AND x.kind = 'archival' AND x.pk > b.pk)
    FROM blocks AS b WHERE b.agent_id = ? AND b.kind = 'archival' AND b.pk IN ({marks})
"""

_MESSAGE_NEIGHBOURS = """
    SELECT m.pk,
        (SELECT x.pk FROM messages AS x
            WHERE x.agent_id = m.agent_id AND x.conversation_id IS m.conversation_id
            AND (x.created_at, x.pk) < (m.created_at, m.pk)
            ORDER BY x.created_at DESC, x.pk DESC LIMIT 1),
        (SELECT x.pk FROM messages AS x
            WHERE x.agent_id = m.agent_id AND x.conversation_id IS m.conversation_id
            AND (x.created_at, x.pk) > (m.created_at, m.pk)
            ORDER BY x.created_at, x.pk LIMIT 1)
    FROM messages AS m WHERE m.agent_id = ? AND m.pk IN ({marks})
"""


def neighbour_pks(
    conn: sqlite3.Connection, domain: int, me: int, pks: Sequence[int]
) -> dict[int, tuple[int, ...]]:
    """The entries just before and after each of ``pks`` that agent id ``me`` owns.

    Archival blocks: the owner's previous and next archival block in insertion order.
    Messages: the previous and next message of the same conversation (``conversation_id``,
    ``NULL`` being one conversation) in ``created_at`` order, ties in insertion order.
    Rows ``me`` does not own (shared blocks) get no neighbours: another agent's entries
    never colour a search.
    """
    sql = _BLOCK_NEIGHBOURS if domain == BLOCKS else _MESSAGE_NEIGHBOURS
    out: dict[int, tuple[int, ...]] = {}
    for start in range(0, len(pks), 900):
        chunk = pks[start : start + 900]
        rows = conn.execute(sql.format(marks=placeholders(len(chunk))), (me, *chunk))
        for pk, before, after in rows:
            out[int(pk)] = tuple(int(n) for n in (before, after) if n is not None)
    return out


def closeness(
    conn: sqlite3.Connection,
    domain: int,
    dim: int,
    around: Mapping[int, Sequence[int]],
) -> dict[int, list[tuple[int, float]]]:
    """Each row's neighbours with their cosine to it, from the stored vectors (a pair
    where either row has no vector of ``dim`` dimensions is left out)."""
    pks = sorted(set(around) | {n for ns in around.values() for n in ns})
    vectors: dict[int, npt.NDArray[np.float32]] = {}
    for start in range(0, len(pks), 900):
        chunk = pks[start : start + 900]
        rows = conn.execute(
            "SELECT item, vec FROM embeddings WHERE domain = ? AND item IN "
            f"({placeholders(len(chunk))})",
            (domain, *chunk),
        )
        for item, blob in rows:
            if len(blob) == 4 * dim:
                vector = np.frombuffer(blob, dtype=np.float32)
                vectors[int(item)] = vector / max(1e-12, float(np.linalg.norm(vector)))
    return {
        pk: [(n, float(vectors[pk] @ vectors[n])) for n in neighbours if n in vectors]
        for pk, neighbours in around.items()
        if pk in vectors
    }
