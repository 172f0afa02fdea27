"""SQL for :meth:`PostgresStore.search`: scope and filters, ranked full-text
candidates, pgvector candidates, and hydration of the chosen hits.

Full-text ranking. PostgreSQL has no BM25, so the store computes a BM25-shaped score
itself: for each query term ``t``, ``idf(t) * ts_rank(fts, t)``, summed, where
``ts_rank`` (length-normalised, label and description weighted 0.5 against the text)
plays the part of BM25's saturated term frequency and ``idf(t) = ln(1 + (N - df + 0.5)
/ (df + 0.5))`` is computed from the exact document frequency of ``t`` among the rows
that pass the search's scope and filters (every such row containing ``t`` matches the
OR query, so the count comes free with the ranking). ``N`` is the table's row count
(exact under 10,000 rows, the planner's estimate above). The same frequencies give
each candidate its share of the query's IDF mass for coverage fusion.
The query is built from :func:`~satchel.retrieval.query_terms` (plain word
tokens) with ``plainto_tsquery`` per term, joined with ``||``: user text never reaches
a tsquery parser as syntax.

Cost cap. Ranking touches every matching row, so, as on SQLite, terms are kept rarest
first while their document counts add up to at most :data:`BM25_BUDGET`; counts come
from the planner's statistics for the ``fts`` column (``pg_stats.most_common_elems``,
refreshed by autovacuum's ANALYZE), cached for a minute. Terms the statistics do not
list are rarer than any they do. If even the rarest term is over budget the query
becomes the AND of the three rarest, and if that still matches far more than the
budget, only the newest ``budget`` matches are ranked. Tables under the budget skip
all this.

Vector candidates use the HNSW index on ``embedding::vector(dim)`` of the records' side
table of vectors (joined to the records for the filters) with pgvector's
iterative scan, filtered in the same statement; when that yields fewer rows than asked
(a very selective filter), an exact scan of the rows passing the filter follows, so a
filtered vector search is never wrong, only slower.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, LiteralString, cast

import numpy as np
import numpy.typing as npt

from satchel.memory._models import SearchFilters, SearchHit
from satchel.memory._search import SearchRequest, rank, to_hits
from satchel.memory.postgres._context_sql import add_neighbour_context
from satchel.memory.postgres._db import Conn
from satchel.memory.postgres._rows import dec, enc, enc_all, utc
from satchel.memory.postgres._vector_rows import BLOCK_VECTORS, MESSAGE_VECTORS
from satchel.retrieval import term_coverage

__all__ = [
    "BLOCKS",
    "BM25_BUDGET",
    "MESSAGES",
    "TOOL_TRAFFIC",
    "Choice",
    "TermStats",
    "run_search",
]

F32 = npt.NDArray[np.float32]

BM25_BUDGET = 2_000
"""About how many matching rows full-text ranking may touch per domain and query."""

_MODEL_OK: LiteralString = (
    "EXISTS (SELECT 1 FROM satchel_meta WHERE key = 'embedding_model' AND value = %(model)s)"
)
_WEIGHTS: LiteralString = "'{0.1, 0.2, 0.5, 1.0}'"


@dataclass(kw_only=True, frozen=True)
class _Spec:
    key: int
    table: LiteralString
    alias: LiteralString
    vectors: LiteralString
    """The side table holding the records' vectors."""


BLOCKS = _Spec(key=0, table="satchel_blocks", alias="b", vectors=BLOCK_VECTORS)
"""The archival-memory domain."""
MESSAGES = _Spec(key=1, table="satchel_messages", alias="m", vectors=MESSAGE_VECTORS)
"""The conversations domain."""

_Key = tuple[int, int]


class _Params:
    """Named query parameters with generated placeholder names."""

    def __init__(self, **fixed: Any) -> None:
        self.values: dict[str, Any] = dict(fixed)
        self._n = 0

    def add(self, value: Any) -> LiteralString:
        name = f"p{self._n}"
        self._n += 1
        self.values[name] = value
        return cast(LiteralString, f"%({name})s")


TOOL_TRAFFIC: LiteralString = (
    "(m.role = 'tool' OR strpos(m.metadata::text, '\"content_from_calls\"') > 0)"
)
"""Messages that are tool traffic: tool results, and assistant messages whose only
content is the calls they made (see ``SearchFilters.tool_traffic``). The ``json``
column is read as its text: extracting a key parses the whole value, which fails on a
stored ``\\u0000``."""


def filter_clause(spec: _Spec, filters: SearchFilters, params: _Params) -> LiteralString:
    """A ``WHERE`` clause for the searching agent's scope (``%(me)s``) and filters."""
    a = spec.alias
    clauses: list[LiteralString] = []
    if spec is BLOCKS:
        clauses.append("(b.agent = %(me)s OR b.shares ? %(me)s)")
        clauses.append("b.kind = 'archival'")
        if filters.labels:
            parts: list[LiteralString] = []
            bare = [label for label in filters.labels if "/" not in label]
            if bare:
                parts.append(f"b.label = ANY({params.add(enc_all(bare))})")
            owned = [label.split("/", 1) for label in filters.labels if "/" in label]
            if owned:  # two array parameters, so any number of labels fits
                owners = params.add(enc_all(owner for owner, _ in owned))
                names = params.add(enc_all(name for _, name in owned))
                parts.append(
                    f"(b.agent, b.label) IN "
                    f"(SELECT * FROM unnest({owners}::text[], {names}::text[]))"
                )
            clauses.append("(" + " OR ".join(parts) + ")")
    else:
        clauses.append("m.agent = %(me)s")
        if filters.role is not None:
            clauses.append(f"m.role = {params.add(filters.role)}")
        if filters.conversation_id is not None:
            clauses.append(f"m.conversation_id = {params.add(enc(filters.conversation_id))}")
        if filters.hides_tool_traffic:
            clauses.append(f"NOT {TOOL_TRAFFIC}")
        if filters.exclude_turn is not None:
            turn = filters.exclude_turn
            clauses.append(
                f"NOT (m.conversation_id = {params.add(enc(turn.conversation_id))} "
                f"AND m.created_at >= {params.add(utc(turn.started_at))})"
            )
    if filters.start_time is not None:
        clauses.append(f"{a}.created_at >= {params.add(utc(filters.start_time))}")
    if filters.end_time is not None:
        clauses.append(f"{a}.created_at <= {params.add(utc(filters.end_time))}")
    if filters.tags:
        operator: LiteralString = "@>" if filters.tags_match == "all" else "&&"
        clauses.append(f"{a}.tags {operator} {params.add(enc_all(sorted(set(filters.tags))))}")
    return " AND ".join(clauses)


@dataclass(kw_only=True, frozen=True)
class Choice:
    """What full-text search looks for.

    Attributes:
        terms: The query terms kept.
        combine: Match any of them (``or``) or all (``and``).
        cap: Rank at most this many matching rows, the newest, when even the AND of
            the rarest terms matches far more rows than the budget (such terms are in
            nearly every entry, so they tell entries apart little anyway).
        dropped: The query terms left out for cost, with their estimated document
            frequencies (they still count in coverage fusion).
    """

    terms: list[str]
    combine: Literal["or", "and"]
    cap: int | None = None
    dropped: dict[str, float] = field(default_factory=dict[str, float])


class TermStats:
    """Estimated document frequencies of lexemes, from the planner's statistics.

    Args:
        ttl: Seconds a table's statistics are reused before being read again.
        budget: About how many matching rows ranking may touch.
    """

    def __init__(self, ttl: float = 60.0, budget: int = BM25_BUDGET) -> None:
        self.ttl = ttl
        self.budget = budget
        self._tables: dict[str, tuple[float, float, dict[str, float], float]] = {}
        self._lexemes: dict[str, str] = {}

    async def _table(self, conn: Conn, table: str) -> tuple[float, dict[str, float], float]:
        cached = self._tables.get(table)
        if cached is not None and time.monotonic() - cached[0] < self.ttl:
            return cached[1], cached[2], cached[3]
        cursor = await conn.execute(
            "SELECT c.reltuples, s.most_common_elems::text::text[], s.most_common_elem_freqs "
            "FROM pg_class AS c JOIN pg_namespace AS n ON n.oid = c.relnamespace "
            "LEFT JOIN pg_stats AS s ON s.schemaname = n.nspname AND s.tablename = c.relname "
            "AND s.attname = 'fts' WHERE c.oid = to_regclass(%s)",
            (table,),
        )
        row = await cursor.fetchone()
        rows, freqs, floor = 0.0, dict[str, float](), 0.0
        if row is not None:
            rows = max(0.0, float(row[0] or 0.0))
            elems: list[str] = row[1] or []
            values: list[float] = row[2] or []
            freqs = dict(zip(elems, values[: len(elems)], strict=True))
            floor = min(freqs.values(), default=0.0)
        self._tables[table] = (time.monotonic(), rows, freqs, floor)
        return rows, freqs, floor

    async def _lexemes_of(self, conn: Conn, terms: Sequence[str]) -> list[str]:
        missing = [term for term in terms if term not in self._lexemes]
        if missing:
            cursor = await conn.execute(
                "SELECT t, coalesce((tsvector_to_array(to_tsvector('satchel_fts'::regconfig, "
                "t)))[1], '') FROM unnest(%s::text[]) AS t",
                (missing,),
            )
            if len(self._lexemes) > 50_000:
                self._lexemes.clear()
            for term, lexeme in await cursor.fetchall():
                self._lexemes[str(term)] = str(lexeme)
        return [self._lexemes.get(term, term) for term in terms]

    async def choose(self, conn: Conn, spec: _Spec, terms: list[str]) -> Choice:
        """The terms to search for, how to combine them, and a cap on the rows ranked,
        keeping the rows ranked near the budget (see the module doc)."""
        budget = self.budget
        rows, freqs, floor = await self._table(conn, spec.table)
        if rows <= budget or not freqs:
            return Choice(terms=terms, combine="or")
        lexemes = await self._lexemes_of(conn, terms)
        counts = sorted(
            (freqs.get(lexeme, floor / 2) * rows, position)
            for position, lexeme in enumerate(lexemes)
        )
        if counts[0][0] > budget:
            rarest = counts[:3]
            both = rows * math.prod(count / rows for count, _ in rarest)
            return Choice(
                terms=[terms[i] for _, i in rarest],
                combine="and",
                cap=budget if both > budget else None,
                dropped={terms[i]: count for count, i in counts[3:]},
            )
        kept: list[str] = []
        total = 0.0
        for count, i in counts:
            if kept and total + count > budget:
                break
            kept.append(terms[i])
            total += count
        dropped = {terms[i]: count for count, i in counts if terms[i] not in kept}
        return Choice(terms=kept, combine="or", dropped=dropped)


async def bm25_candidates(
    conn: Conn,
    spec: _Spec,
    choice: Choice,
    where: LiteralString,
    params: _Params,
    n: int,
    *,
    fill_in: bool,
    statistics: list[tuple[dict[str, float], float]] | None = None,
) -> dict[int, tuple[float, float | None, float]]:
    """The top ``n`` rows by the BM25-shaped score, each with its cosine to
    ``%(q)s`` when ``fill_in`` (``None`` if the row has no vector) and its share of
    the query's IDF mass (:func:`~satchel.retrieval.term_coverage`). Each query
    term's document frequency and the row count are appended to ``statistics``."""
    a, table = spec.alias, spec.table
    queries: list[LiteralString] = []
    for term in choice.terms:
        queries.append(f"plainto_tsquery('satchel_fts'::regconfig, {params.add(term)})")
    joiner: LiteralString = " && " if choice.combine == "and" else " || "
    cap: LiteralString = ""
    if choice.cap is not None:
        cap = f" ORDER BY {a}.pk DESC LIMIT {params.add(choice.cap)}"
    ranks = ", ".join(
        cast(LiteralString, f"ts_rank({_WEIGHTS}, {a}.fts, {q}, 1) AS r{i}")
        for i, q in enumerate(queries)
    )
    dfs = ", ".join(
        cast(LiteralString, f"count(*) FILTER (WHERE r{i} > 0) AS df{i}")
        for i in range(len(queries))
    )
    score = " + ".join(
        cast(LiteralString, f"m.r{i} * ln(1.0 + (d.total - d.df{i} + 0.5) / (d.df{i} + 0.5))")
        for i in range(len(queries))
    )
    hits = ", ".join(cast(LiteralString, f"m.r{i} > 0") for i in range(len(queries)))
    counts = ", ".join(cast(LiteralString, f"d.df{i}") for i in range(len(queries)))
    cosine: LiteralString = (
        f"CASE WHEN {_MODEL_OK} THEN 1 - (v.embedding <=> %(q)s) END" if fill_in else "NULL"
    )
    sql: LiteralString = (
        f"WITH m AS MATERIALIZED (SELECT {a}.pk, {ranks} FROM {table} AS {a} "
        f"WHERE {a}.fts @@ ({joiner.join(queries)}) AND {where}{cap}), "
        f"d AS MATERIALIZED (SELECT greatest(count(*)::float8, (SELECT CASE "
        f"WHEN c.reltuples < 10000 THEN (SELECT count(*) FROM {table})::float8 "
        f"ELSE c.reltuples::float8 END "
        f"FROM pg_class AS c WHERE c.oid = to_regclass('{table}'))) AS total, {dfs} FROM m), "
        f"top AS (SELECT m.pk, {score} AS s, ARRAY[{hits}] AS hit, d.total, "
        f"ARRAY[{counts}]::float8[] AS df FROM m, d ORDER BY s DESC, m.pk LIMIT %(n)s) "
        f"SELECT top.pk, top.s, {cosine}, top.hit, top.total, top.df "
        f"FROM top LEFT JOIN {spec.vectors} AS v ON v.pk = top.pk"
    )
    params.values["n"] = n
    cursor = await conn.execute(sql, params.values)
    rows = await cursor.fetchall()
    if not rows:
        return {}
    total, frequency = float(rows[0][4]), dict(choice.dropped)
    frequency.update(zip(choice.terms, (float(df) for df in rows[0][5]), strict=True))
    matched = {
        int(pk): [t for t, hit in zip(choice.terms, hits, strict=True) if hit]
        for pk, _, _, hits, _, _ in rows
    }
    cover = term_coverage(matched, frequency, total)
    if statistics is not None:
        statistics.append((frequency, total))
    return {
        int(pk): (float(s), None if c is None else float(c), cover[int(pk)])
        for pk, s, c, _, _, _ in rows
    }


async def vector_candidates(
    conn: Conn, spec: _Spec, dim: LiteralString, where: LiteralString, params: _Params, n: int
) -> dict[int, float]:
    """The ``n`` rows nearest to ``%(q)s`` that pass ``where``: HNSW first, then an
    exact scan if the index scan found too few."""
    a, table = spec.alias, spec.table
    params.values["n"] = n
    indexed: LiteralString = f"(v.embedding::vector({dim}))"
    base: LiteralString = (
        f"FROM {spec.vectors} AS v JOIN {table} AS {a} ON {a}.pk = v.pk "
        f"WHERE {where} AND v.embedding IS NOT NULL AND {_MODEL_OK}"
    )
    cursor = await conn.execute(
        f"SELECT {a}.pk, 1 - ({indexed} <=> %(q)s) {base} ORDER BY {indexed} <=> %(q)s LIMIT %(n)s",
        params.values,
    )
    found = {int(pk): float(s) for pk, s in await cursor.fetchall()}
    if len(found) < n:
        # The expression differs from the index's, so this is an exact, filtered scan;
        # the pk breaks ties, so equal cosines at the cut-off pick the same rows on every
        # call (a parallel scan returns them in any order).
        cursor = await conn.execute(
            f"SELECT {a}.pk, 1 - (v.embedding <=> %(q)s) AS s {base} "
            f"ORDER BY s DESC, {a}.pk LIMIT %(n)s",
            params.values,
        )
        found = {int(pk): float(s) for pk, s in await cursor.fetchall()}
    return found


async def _hydrate(conn: Conn, agent: str, keys: list[_Key]) -> dict[_Key, dict[str, Any]]:
    found: dict[_Key, dict[str, Any]] = {}
    block_pks = [pk for domain, pk in keys if domain == BLOCKS.key]
    message_pks = [pk for domain, pk in keys if domain == MESSAGES.key]
    if block_pks:
        cursor = await conn.execute(
            "SELECT b.pk, b.id, b.label, b.agent, b.value, b.created_at, b.tags, b.metadata, "
            "b.kind FROM satchel_blocks AS b WHERE b.pk = ANY(%s)",
            (block_pks,),
        )
        for pk, id_, label, owner, value, created, tags, metadata, kind in await cursor.fetchall():
            found[(BLOCKS.key, int(pk))] = {
                "domain": "archival_memory",
                "id": id_,
                "label": label if owner == agent else f"{owner}/{label}",
                "owner": owner,
                "text": dec(value),
                "created_at": utc(created),
                "tags": tuple(dec(tag) for tag in tags),
                "metadata": metadata,
                "kind": kind,
            }
    if message_pks:
        cursor = await conn.execute(
            "SELECT m.pk, m.id, m.agent, m.content, m.created_at, m.role, m.conversation_id, "
            "m.tags, m.metadata FROM satchel_messages AS m WHERE m.pk = ANY(%s)",
            (message_pks,),
        )
        rows = await cursor.fetchall()
        for pk, id_, owner, content, created, role, conversation, tags, metadata in rows:
            found[(MESSAGES.key, int(pk))] = {
                "domain": "conversations",
                "id": id_,
                "owner": owner,
                "text": dec(content),
                "created_at": utc(created),
                "role": role,
                "conversation_id": dec(conversation),
                "tags": tuple(dec(tag) for tag in tags),
                "metadata": metadata,
            }
    return found


async def run_search(
    conn: Conn,
    stats: TermStats,
    request: SearchRequest,
    *,
    model: str | None,
    dim: LiteralString | None,
) -> list[SearchHit]:
    """Run a search on one connection: candidates per domain, fusion, hydration.

    Args:
        conn: The connection.
        stats: The cached term statistics.
        request: The search.
        model: The store's embedding model id (vectors are used only while the
            database holds that model's vectors).
        dim: The vector dimension, as SQL text; ``None`` turns the vector side off.
    """
    query = request.query_vector if request.mode != "bm25" else None
    if dim is None:
        query = None
    lexical_on = request.mode != "vector" and bool(request.terms)
    n = max(request.fusion.candidates, request.limit)
    fill_in = query is not None and request.fusion.fill_in and request.mode == "hybrid"
    covering = request.mode == "hybrid" and request.fusion.method == "coverage"
    bm25: dict[_Key, float] = {}
    vector: dict[_Key, float] = {}
    coverage: dict[_Key, float] = {}
    specs = [
        spec
        for spec, on in ((BLOCKS, request.plan.blocks), (MESSAGES, request.plan.messages))
        if on
    ]
    for spec in specs:
        lexical: dict[int, tuple[float, float | None, float]] = {}
        statistics: list[tuple[dict[str, float], float]] = []
        found: dict[int, float] = {}
        if lexical_on:
            choice = await stats.choose(conn, spec, request.terms)
            params = _Params(me=request.agent, q=query, model=model)
            where = filter_clause(spec, request.filters, params)
            lexical = await bm25_candidates(
                conn, spec, choice, where, params, n, fill_in=fill_in, statistics=statistics
            )
            for pk, (score, cosine, share) in lexical.items():
                bm25[(spec.key, pk)] = score
                coverage[(spec.key, pk)] = share
                if cosine is not None:
                    vector[(spec.key, pk)] = cosine
        if query is not None and dim is not None:
            params = _Params(me=request.agent, q=query, model=model)
            where = filter_clause(spec, request.filters, params)
            found = await vector_candidates(conn, spec, dim, where, params, n)
            vector.update({(spec.key, pk): score for pk, score in found.items()})
        weight, lend_share = request.neighbours.of(archival=spec is BLOCKS)
        if covering and fill_in and lexical and statistics and weight > 0:
            params = _Params(me=request.agent, q=query, model=model)
            where = filter_clause(spec, request.filters, params)
            cosine_sql: LiteralString = (
                f"CASE WHEN {_MODEL_OK} THEN 1 - (v.embedding <=> %(q)s) END"
            )
            shares, extra = await add_neighbour_context(
                conn,
                spec.table,
                spec.alias,
                vectors=spec.vectors,
                agent=request.agent,
                lexical=list(lexical),
                semantic=list(found),
                frequency=statistics[0][0],
                total=statistics[0][1],
                weight=weight,
                lend_share=lend_share,
                where=where,
                params=params.values,
                cosine=cosine_sql,
            )
            coverage.update({(spec.key, pk): share for pk, share in shares.items()})
            vector.update({(spec.key, pk): cosine for pk, cosine in extra.items()})
    signals = {"bm25": bm25, "vector": vector, "coverage": coverage}
    ranked = rank(signals, mode=request.mode, fusion=request.fusion, limit=request.limit)
    return to_hits(ranked, await _hydrate(conn, request.agent, [r.key for r in ranked]))
