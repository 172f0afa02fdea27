"""Blocking SQL for neighbouring-entry context (:mod:`satchel.memory._context_window`):
which rows sit just before and after each candidate in its owner's sequence."""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping, Sequence

import numpy as np

from satchel.memory.sqlite._messages import BLOCKS
from satchel.memory.sqlite._rows import placeholders
from satchel.retrieval import AnnIndex

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
    index: AnnIndex, around: Mapping[int, Sequence[int]]
) -> dict[int, list[tuple[int, float]]]:
    """Each row's neighbours with their cosine to it, from the domain's vector
    ``index`` (a pair where either row has no vector is left out)."""
    wanted = np.asarray(sorted(set(around) | {n for ns in around.values() for n in ns}), np.int64)
    ids, matrix = index.vectors(wanted)
    if len(ids) == 0:
        return {}
    row = {int(item): position for position, item in enumerate(ids.tolist())}
    pairs = [(pk, n) for pk, ns in around.items() if pk in row for n in ns if n in row]
    left = np.fromiter((row[pk] for pk, _ in pairs), np.int64, len(pairs))
    right = np.fromiter((row[n] for _, n in pairs), np.int64, len(pairs))
    cosines = np.einsum("ij,ij->i", matrix[left], matrix[right]).tolist()
    out: dict[int, list[tuple[int, float]]] = {pk: [] for pk in around if pk in row}
    for (pk, n), cosine in zip(pairs, cosines, strict=True):
        out[pk].append((n, float(cosine)))
    return out
