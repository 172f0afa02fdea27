"""Blocking SQL for search: scope and filter clauses, BM25 candidates, hydration, and
keeping the in-memory vector indexes in step with the ``embeddings`` table."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from satchel.memory._fts import fts5_match
from satchel.memory._models import SearchFilters
from satchel.memory._vectors import VectorIndex
from satchel.memory.sqlite._messages import BLOCKS, MESSAGES
from satchel.memory.sqlite._rows import placeholders, to_us

__all__ = [
    "BM25_BUDGET",
    "StoredIndexes",
    "bm25_candidates",
    "bm25_match",
    "filter_clause",
    "keep_matching",
    "matching_ids",
    "shared_block_pks",
]

BM25_BUDGET = 2_000
"""About how many matching rows BM25 may rank per domain and query (FTS5 scores every
matching row, a few microseconds each)."""

_TOKENIZER = "porter unicode61 remove_diacritics 2"

_BM25 = {
    BLOCKS: ("blocks_fts", "bm25(blocks_fts, 0.5, 0.5, 1.0)", "blocks AS b", "b"),
    MESSAGES: ("messages_fts", "bm25(messages_fts)", "messages AS m", "m"),
}


def filter_clause(
    domain: int, me: int, filters: SearchFilters, *, archival_only: bool
) -> tuple[str, list[Any]]:
    """A ``WHERE`` clause (on alias ``b`` or ``m``) for scope and filters."""
    params: list[Any] = []
    if domain == BLOCKS:
        alias, tag_table, tag_key = "b", "block_tags", "block_pk"
        clauses = ["(b.agent_id = ? OR b.pk IN (SELECT block_pk FROM shares WHERE agent_id = ?))"]
        params += [me, me]
        if archival_only:
            clauses.append("b.kind = 'archival'")
        if filters.labels:
            parts: list[str] = []
            for label in filters.labels:
                owner, slash, bare = label.partition("/")
                if slash:
                    parts.append(
                        "(b.label = ? AND b.agent_id = (SELECT id FROM agents WHERE name = ?))"
                    )
                    params += [bare, owner]
                else:
                    parts.append("b.label = ?")
                    params.append(label)
            clauses.append("(" + " OR ".join(parts) + ")")
    else:
        alias, tag_table, tag_key = "m", "message_tags", "message_pk"
        clauses = ["m.agent_id = ?"]
        params.append(me)
        if filters.role is not None:
            clauses.append("m.role = ?")
            params.append(filters.role)
        if filters.conversation_id is not None:
            clauses.append("m.conversation_id = ?")
            params.append(filters.conversation_id)
    if filters.start_time is not None:
        clauses.append(f"{alias}.created_at >= ?")
        params.append(to_us(filters.start_time))
    if filters.end_time is not None:
        clauses.append(f"{alias}.created_at <= ?")
        params.append(to_us(filters.end_time))
    if filters.tags:
        tags = sorted(set(filters.tags))
        marks = placeholders(len(tags))
        if filters.tags_match == "all":
            clauses.append(
                f"(SELECT count(*) FROM {tag_table} AS t WHERE t.{tag_key} = {alias}.pk "
                f"AND t.tag IN ({marks})) = ?"
            )
            params += [*tags, len(tags)]
        else:
            clauses.append(
                f"{alias}.pk IN (SELECT {tag_key} FROM {tag_table} WHERE tag IN ({marks}))"
            )
            params += tags
    return " AND ".join(clauses), params


def bm25_candidates(
    conn: sqlite3.Connection, domain: int, match: str, where: str, params: Sequence[Any], n: int
) -> dict[int, float]:
    """The top ``n`` rows by BM25 (as positive scores, higher is better) that pass
    ``where``. The FTS table drives the join (``CROSS JOIN``), so the cost follows the
    number of matching rows, not the table size."""
    fts, score, table, alias = _BM25[domain]
    rows = conn.execute(
        f"SELECT {fts}.rowid, {score} AS s FROM {fts} CROSS JOIN {table} "
        f"ON {alias}.pk = {fts}.rowid WHERE {fts} MATCH ? AND {where} ORDER BY s LIMIT ?",
        (match, *params, n),
    ).fetchall()
    return {int(pk): -float(s) for pk, s in rows}


def bm25_match(
    conn: sqlite3.Connection, domain: int, terms: Sequence[str], budget: int = BM25_BUDGET
) -> str | None:
    """An FTS5 query for ``terms`` whose ranking cost stays near ``budget`` rows.

    FTS5 ranks every row that matches, so one very common term can make a query slow
    on a large store. Terms are looked up in the index (stemmed by FTS5 itself, through
    a scratch table in the connection's TEMP schema) and kept rarest first while their
    document counts add up to at most ``budget``; the rarest always stays. Dropped terms
    are the most common ones, whose BM25 weight (IDF) is the smallest anyway. If even
    the rarest term is over budget, the query becomes the AND of the three rarest.
    Below ``budget`` rows in the table nothing is looked up or dropped.
    """
    if not terms:
        return None
    fts = _BM25[domain][0]
    table = "blocks" if domain == BLOCKS else "messages"
    top = conn.execute(f"SELECT max(pk) FROM {table}").fetchone()[0] or 0
    if top <= budget:
        return fts5_match(list(terms))
    conn.execute(
        "CREATE VIRTUAL TABLE IF NOT EXISTS temp.satchel_terms "
        f"USING fts5(t, tokenize = '{_TOKENIZER}')"
    )
    conn.execute(
        "CREATE VIRTUAL TABLE IF NOT EXISTS temp.satchel_terms_vocab "
        "USING fts5vocab(temp, satchel_terms, 'instance')"
    )
    conn.execute(
        f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.satchel_{fts}_vocab "
        f"USING fts5vocab(main, {fts}, 'row')"
    )
    conn.execute("DELETE FROM temp.satchel_terms")
    conn.executemany(
        "INSERT INTO temp.satchel_terms (rowid, t) VALUES (?, ?)", list(enumerate(terms))
    )
    counts: dict[int, int] = {}
    for position, stem in conn.execute("SELECT doc, term FROM temp.satchel_terms_vocab"):
        row = conn.execute(
            f"SELECT doc FROM temp.satchel_{fts}_vocab WHERE term = ?", (stem,)
        ).fetchone()
        counts[int(position)] = counts.get(int(position), 0) + (int(row[0]) if row else 0)
    present = sorted((n, i) for i, n in counts.items() if n > 0)
    if not present:
        return None
    if present[0][0] > budget:
        rarest = [terms[i] for _, i in present[:3]]
        return " AND ".join('"' + t.replace('"', '""') + '"' for t in rarest)
    kept: list[str] = []
    total = 0
    for count, i in present:
        if kept and total + count > budget:
            break
        kept.append(terms[i])
        total += count
    return fts5_match(kept)


def keep_matching(
    conn: sqlite3.Connection, domain: int, pks: Sequence[int], where: str, params: Sequence[Any]
) -> set[int]:
    """Which of ``pks`` pass ``where``."""
    if not pks:
        return set()
    table, alias = ("blocks AS b", "b") if domain == BLOCKS else ("messages AS m", "m")
    out: set[int] = set()
    for start in range(0, len(pks), 900):
        chunk = pks[start : start + 900]
        rows = conn.execute(
            f"SELECT {alias}.pk FROM {table} WHERE {alias}.pk IN ({placeholders(len(chunk))}) "
            f"AND {where}",
            (*chunk, *params),
        ).fetchall()
        out.update(int(row[0]) for row in rows)
    return out


def matching_ids(
    conn: sqlite3.Connection, domain: int, where: str, params: Sequence[Any]
) -> list[int]:
    """Every row id that passes ``where`` (for exact pre-filtered vector scoring)."""
    table, alias = ("blocks AS b", "b") if domain == BLOCKS else ("messages AS m", "m")
    rows = conn.execute(f"SELECT {alias}.pk FROM {table} WHERE {where}", tuple(params))
    return [int(row[0]) for row in rows]


def shared_block_pks(conn: sqlite3.Connection, me: int) -> list[int]:
    """Blocks shared with agent id ``me``."""
    rows = conn.execute("SELECT block_pk FROM shares WHERE agent_id = ?", (me,)).fetchall()
    return [int(row[0]) for row in rows]


class StoredIndexes:
    """One :class:`VectorIndex` per domain, kept in step with the ``embeddings`` table.

    :meth:`sync` applies, in one read snapshot, the vector removals and then the
    additions logged since the last sync. Removals go first: the table holds only
    current vectors, so whatever it still has after a removal is newer than it.
    """

    def __init__(self, dim: int) -> None:
        self.dim = dim
        self.indexes = {BLOCKS: VectorIndex(dim), MESSAGES: VectorIndex(dim)}
        self._added = 0
        self._removed = 0
        self._lock = threading.Lock()

    def sync(self, conn: sqlite3.Connection) -> None:
        """Catch up with the database (``conn`` is inside a read transaction)."""
        with self._lock:
            removed = conn.execute(
                "SELECT seq, domain, item FROM embedding_deletes WHERE seq > ? ORDER BY seq",
                (self._removed,),
            ).fetchall()
            for domain in (BLOCKS, MESSAGES):
                items = [int(item) for _, d, item in removed if d == domain]
                if items:
                    self.indexes[domain].remove(np.asarray(items, dtype=np.int64))
            if removed:
                self._removed = int(removed[-1][0])
            size = self.dim * 4
            while True:
                rows = conn.execute(
                    "SELECT seq, domain, item, agent_id, vec FROM embeddings WHERE seq > ? "
                    "ORDER BY seq LIMIT 65536",
                    (self._added,),
                ).fetchall()
                if not rows:
                    return
                self._added = int(rows[-1][0])
                for domain in (BLOCKS, MESSAGES):
                    chosen = [row for row in rows if row[1] == domain and len(row[4]) == size]
                    if not chosen:
                        continue
                    vectors = np.frombuffer(b"".join(row[4] for row in chosen), dtype=np.float32)
                    self.indexes[domain].add(
                        np.fromiter((row[2] for row in chosen), np.int64, len(chosen)),
                        vectors.reshape(len(chosen), self.dim),
                        np.fromiter((row[3] for row in chosen), np.int32, len(chosen)),
                    )
