"""Blocking SQL for search: scope and filter clauses, BM25 candidates, hydration, and
keeping the in-memory vector indexes in step with the ``embeddings`` table."""

from __future__ import annotations

import json
import math
import sqlite3
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from satchel.memory._models import SearchFilters
from satchel.memory.sqlite._messages import BLOCKS, MESSAGES
from satchel.memory.sqlite._rows import placeholders, to_us
from satchel.memory.sqlite._term_match import matched_terms
from satchel.retrieval import term_coverage

__all__ = [
    "BM25_BUDGET",
    "TOOL_TRAFFIC",
    "Bm25Query",
    "bm25_candidates",
    "bm25_query",
    "filter_clause",
    "first_matching",
    "fts5_match",
    "keep_matching",
    "lexical_coverage",
    "matching_ids",
    "shared_block_pks",
    "term_statistics",
]

BM25_BUDGET = 2_000
"""About how many matching rows BM25 may rank per domain and query (FTS5 scores every
matching row, a few microseconds each)."""


def _first_slice(n: int) -> int:
    """How many ranked rows are checked against the filters first, to find ``n``."""
    return 2 * n + 16


_BM25 = {
    BLOCKS: ("blocks_fts", "bm25(blocks_fts, 0.5, 0.5, 1.0)", "blocks AS b", "b"),
    MESSAGES: ("messages_fts", "bm25(messages_fts)", "messages AS m", "m"),
}


TOOL_TRAFFIC = "(m.role = 'tool' OR json_extract(m.metadata, '$.content_from_calls') IS NOT NULL)"
"""Messages that are tool traffic: tool results, and assistant messages whose only
content is the calls they made (see ``SearchFilters.tool_traffic``)."""


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
            # Each list is one JSON parameter read by json_each, so any number of labels
            # fits (an ``IN (?, ?, ...)`` of a thousand breaks SQLite's expression limit).
            bare = [label for label in filters.labels if "/" not in label]
            owned = [label.split("/", 1) for label in filters.labels if "/" in label]
            parts: list[str] = []
            if bare:
                parts.append("b.label IN (SELECT value FROM json_each(?))")
                params.append(json.dumps(bare))
            if owned:
                parts.append(
                    "(b.agent_id, b.label) IN (SELECT a.id, json_extract(q.value, '$[1]') "
                    "FROM json_each(?) AS q "
                    "JOIN agents AS a ON a.name = json_extract(q.value, '$[0]'))"
                )
                params.append(json.dumps(owned))
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
        if filters.hides_tool_traffic:
            clauses.append(f"NOT {TOOL_TRAFFIC}")
        if filters.exclude_turn is not None:
            clauses.append("NOT (m.conversation_id = ? AND m.created_at >= ?)")
            params += [
                filters.exclude_turn.conversation_id,
                to_us(filters.exclude_turn.started_at),
            ]
    if filters.start_time is not None:
        clauses.append(f"{alias}.created_at >= ?")
        params.append(to_us(filters.start_time))
    if filters.end_time is not None:
        clauses.append(f"{alias}.created_at <= ?")
        params.append(to_us(filters.end_time))
    if filters.tags:
        tags = sorted(set(filters.tags))
        wanted = "(SELECT value FROM json_each(?))"
        if filters.tags_match == "all":
            clauses.append(
                f"(SELECT count(*) FROM {tag_table} AS t WHERE t.{tag_key} = {alias}.pk "
                f"AND t.tag IN {wanted}) = ?"
            )
            params += [json.dumps(tags), len(tags)]
        else:
            clauses.append(
                f"{alias}.pk IN (SELECT {tag_key} FROM {tag_table} WHERE tag IN {wanted})"
            )
            params.append(json.dumps(tags))
    return " AND ".join(clauses), params


def bm25_candidates(
    conn: sqlite3.Connection,
    domain: int,
    query: Bm25Query,
    where: str,
    params: Sequence[Any],
    n: int,
    budget: int = BM25_BUDGET,
    *,
    narrowing: bool = False,
) -> dict[int, float]:
    """The top ``n`` rows by BM25 (as positive scores, higher is better) that pass
    ``where``; equal scores go to the lower row id.

    The full-text index ranks its matches on its own and only the best ``2n + 16`` are
    checked against ``where`` (:func:`first_matching`): joining every matching row to its
    table first cost as much as ranking them (random pages, ×0.55 at 1M rows,
    ``bench/README.md``). When too few of those pass (an agent owning a small share of
    a shared file), or when filters narrow the search (``narrowing``), the table is
    joined while ranking (``CROSS JOIN``: the FTS table drives it, so the cost follows
    the number of matching rows, not the table size). Both give the same rows. A table
    of at most ``budget`` rows (``query.counts`` empty) is always joined: its pages are
    few, and one statement costs less than two."""
    if query.newest_only:
        return _window_candidates(conn, domain, query, where, params, n, budget)
    fts, score, table, alias = _BM25[domain]
    if query.counts and not narrowing:
        fetch = _first_slice(n)
        ranked: dict[int, float] = {
            int(pk): -float(s)
            for pk, s in conn.execute(
                f"SELECT rowid, {score} AS s FROM {fts} WHERE {fts} MATCH ? "
                "ORDER BY s, rowid LIMIT ?",
                (query.match, fetch),
            )
        }
        best = first_matching(conn, domain, list(ranked), where, params, n)
        if len(best) >= n or len(ranked) < fetch:
            return {pk: ranked[pk] for pk in best}
    rows = conn.execute(
        f"SELECT {fts}.rowid, {score} AS s FROM {fts} CROSS JOIN {table} "
        f"ON {alias}.pk = {fts}.rowid WHERE {fts} MATCH ? AND {where} "
        f"ORDER BY s, {fts}.rowid LIMIT ?",
        (query.match, *params, n),
    ).fetchall()
    return {int(pk): -float(s) for pk, s in rows}


def _window_candidates(
    conn: sqlite3.Connection,
    domain: int,
    query: Bm25Query,
    where: str,
    params: Sequence[Any],
    n: int,
    budget: int,
) -> dict[int, float]:
    """Rank the newest ``budget`` matches of very common terms without FTS5's
    ``bm25()``, whose IDF step scans each term's whole doclist (100 ms at 1M rows).

    Each term's document frequency is estimated from its density among the newest rows,
    and a row scores the sum of ``ln(1 + N / df)`` over the terms it contains; ties go
    to the newer row. Scores are on BM25's scale only roughly; fusion rescales them.
    Rows are checked against ``where`` best first, only until ``n`` pass.
    """
    fts = _BM25[domain][0]
    table = "blocks" if domain == BLOCKS else "messages"
    top = int(conn.execute(f"SELECT max(pk) FROM {table}").fetchone()[0] or 0)
    row = conn.execute(
        f"SELECT rowid FROM {fts} WHERE {fts} MATCH ? ORDER BY rowid DESC LIMIT 1 OFFSET ?",
        (query.match, budget),
    ).fetchone()
    start = int(row[0]) if row else 0
    span = max(1, top - start + 1)
    scores: dict[int, float] = {}
    for term in query.terms:
        found = [
            int(r[0])
            for r in conn.execute(
                f"SELECT rowid FROM {fts} WHERE {fts} MATCH ? AND rowid >= ?", (term, start)
            )
        ]
        weight = math.log(1 + top / max(1.0, len(found) * top / span))
        for pk in found:
            scores[pk] = scores.get(pk, 0.0) + weight
    ranked = sorted(scores, key=lambda pk: (-scores[pk], -pk))
    best = first_matching(conn, domain, ranked, where, params, n)
    return {pk: scores[pk] for pk in best}


def _quoted(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def fts5_match(terms: Sequence[str]) -> str | None:
    """An FTS5 ``MATCH`` expression that ORs ``terms`` as quoted strings (so it can
    never be a syntax error), or ``None`` when there are no terms (the caller then
    skips full-text search)."""
    if not terms:
        return None
    return " OR ".join(_quoted(term) for term in terms)


def _count(conn: sqlite3.Connection, fts: str, match: str, cap: int) -> int:
    """How many rows match, counting no further than ``cap`` (cheap: no ranking)."""
    row = conn.execute(
        f"SELECT count(*) FROM (SELECT 1 FROM {fts} WHERE {fts} MATCH ? LIMIT ?)",
        (match, cap),
    ).fetchone()
    return int(row[0])


@dataclass(kw_only=True, frozen=True)
class Bm25Query:
    """What :func:`bm25_candidates` runs: an FTS5 expression, and whether to rank only
    the newest ``budget`` matches because even the narrowed query matches more; on a
    large table also each query term's match count, capped at ``budget + 1`` (coverage
    fusion re-uses them)."""

    match: str
    newest_only: bool = False
    terms: tuple[str, ...] = ()
    counts: dict[str, int] = field(default_factory=dict[str, int])


def bm25_query(
    conn: sqlite3.Connection, domain: int, terms: Sequence[str], budget: int = BM25_BUDGET
) -> Bm25Query | None:
    """An FTS5 query for ``terms`` whose ranking cost stays near ``budget`` rows.

    FTS5 ranks every row that matches, so one very common term makes a query slow on a
    large store. Each term's match count is taken (stopping at ``budget + 1``, which is
    cheap) and terms are kept rarest first while their counts add up to at most
    ``budget``; the rarest always stays. The dropped terms are the most common ones,
    whose BM25 weight (IDF) is the smallest anyway. If even the rarest term matches
    more than ``budget`` rows, the three rarest are kept and only their newest
    ``budget`` matches are ranked (a recency window, cheap because FTS5 walks doclists
    by row id). Tables with at most ``budget`` rows skip all of this.
    """
    if not terms:
        return None
    fts = _BM25[domain][0]
    table = "blocks" if domain == BLOCKS else "messages"
    top = conn.execute(f"SELECT max(pk) FROM {table}").fetchone()[0] or 0
    if top <= budget:
        match = fts5_match(list(terms))
        return Bm25Query(match=match) if match else None
    every = {term: _count(conn, fts, _quoted(term), budget + 1) for term in terms}
    counts = sorted((every[term], position) for position, term in enumerate(terms) if every[term])
    if not counts:
        return None
    if counts[0][0] <= budget:
        kept: list[str] = []
        total = 0
        for count, position in counts:
            if kept and total + count > budget:
                break
            kept.append(terms[position])
            total += count
        return Bm25Query(match=" OR ".join(_quoted(t) for t in kept), counts=every)
    # Even the rarest term matches more than the budget: rank the newest matches of
    # the three rarest terms only (an AND would be cheaper to rank but can cost a full
    # scan of very long doclists to evaluate).
    rarest = tuple(_quoted(terms[position]) for _, position in counts[:3])
    return Bm25Query(match=" OR ".join(rarest), newest_only=True, terms=rarest, counts=every)


def _document_frequency(
    conn: sqlite3.Connection, fts: str, term: str, top: int, known: int | None
) -> float:
    """How many rows contain ``term``: counted up to :data:`BM25_BUDGET` (or ``known``,
    a count capped at ``BM25_BUDGET + 1``), past that estimated from the term's density
    among its newest ``BM25_BUDGET`` matches (the same cost, and common terms weigh
    little in coverage anyway)."""
    quoted = _quoted(term)
    count = known if known is not None else _count(conn, fts, quoted, BM25_BUDGET)
    if count < BM25_BUDGET:
        return float(count)
    row = conn.execute(
        f"SELECT rowid FROM {fts} WHERE {fts} MATCH ? ORDER BY rowid DESC LIMIT 1 OFFSET ?",
        (quoted, BM25_BUDGET - 1),
    ).fetchone()
    oldest = int(row[0]) if row else 1
    return BM25_BUDGET * top / max(1, top - oldest + 1)


def term_statistics(
    conn: sqlite3.Connection,
    domain: int,
    terms: Sequence[str],
    counts: Mapping[str, int] | None = None,
) -> tuple[dict[str, float], float]:
    """Every one of ``terms``'s document frequency and the number of rows, over the
    whole table as FTS5's own BM25 takes them, for coverage fusion. ``counts`` are
    match counts :func:`bm25_query` already took."""
    fts = _BM25[domain][0]
    table = "blocks" if domain == BLOCKS else "messages"
    top = int(conn.execute(f"SELECT max(pk) FROM {table}").fetchone()[0] or 0)
    documents = (
        float(conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0])
        if top <= BM25_BUDGET
        else float(top)
    )
    known = counts or {}
    frequency = {term: _document_frequency(conn, fts, term, top, known.get(term)) for term in terms}
    return frequency, documents


def lexical_coverage(
    conn: sqlite3.Connection,
    domain: int,
    terms: Sequence[str],
    pks: Sequence[int],
    counts: Mapping[str, int] | None = None,
) -> dict[int, float]:
    """Each of ``pks``'s share of the IDF mass of ``terms`` (every query term, also
    those :func:`bm25_query` left out for cost), for coverage fusion
    (:func:`~satchel.retrieval.term_coverage`), with the statistics of
    :func:`term_statistics`."""
    if not pks or not terms:
        return dict.fromkeys(pks, 0.0)
    frequency, documents = term_statistics(conn, domain, terms, counts)
    present = [term for term in terms if frequency[term] > 0]
    matched = matched_terms(conn, domain, present, pks) if present else {}
    return term_coverage({pk: matched.get(pk, []) for pk in pks}, frequency, documents)


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


def first_matching(
    conn: sqlite3.Connection,
    domain: int,
    ranked: Sequence[int],
    where: str,
    params: Sequence[Any],
    n: int,
) -> list[int]:
    """The first ``n`` of ``ranked`` that pass ``where``, in their order, checked a
    slice at a time (``2n + 16`` rows, then 900) instead of all at once."""
    out: list[int] = []
    start, size = 0, _first_slice(n)
    while start < len(ranked) and len(out) < n:
        chunk = ranked[start : start + size]
        keep = keep_matching(conn, domain, chunk, where, params)
        out += [pk for pk in chunk if pk in keep]
        start, size = start + len(chunk), 900
    return out[:n]


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
