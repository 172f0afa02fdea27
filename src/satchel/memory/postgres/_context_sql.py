"""SQL for neighbouring-entry context in PostgreSQL search
(:mod:`satchel.memory._context_window`): each candidate's previous and next entry in
its owner's sequence, the BM25 candidates' neighbours as extra candidates, and
coverage shares that count a term only a neighbour holds at the neighbour weight.

Kept apart from :mod:`._search_sql` so the candidate queries there stay as they are;
:func:`add_neighbour_context` runs after both sides' candidates of a domain are known.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, LiteralString, cast

from satchel.memory._context_window import context_coverage
from satchel.memory.postgres._db import Conn

__all__ = [
    "NEIGHBOUR_INDEX_SQL",
    "ONE_BLOCK_INDEX_SQL",
    "add_neighbour_context",
    "neighbour_pks",
]

NEIGHBOUR_INDEX_SQL = """
    CREATE INDEX satchel_blocks_agent_kind_pk ON satchel_blocks (agent, kind, pk);
"""
"""Migration: an index that finds an agent's previous and next archival block by
``pk`` in one step (messages already have ``(agent, conversation_id, created_at, pk)``)."""

ONE_BLOCK_INDEX_SQL = """
    DROP INDEX IF EXISTS satchel_blocks_agent_kind;
"""
"""Migration: drop ``(agent, kind)``, which ``(agent, kind, pk)`` covers. On a table not
yet analysed the planner preferred the shorter index for a neighbour lookup, then
sorted every archival block of the agent to find the one before (8 ms a LoCoMo
search instead of well under 1)."""

_BLOCKS: LiteralString = """
    SELECT b.pk, p.pk, 1 - (pv.embedding <=> bv.embedding), n.pk,
        1 - (nv.embedding <=> bv.embedding)
    FROM satchel_blocks AS b JOIN satchel_block_vectors AS bv ON bv.pk = b.pk
    LEFT JOIN LATERAL (SELECT x.pk FROM satchel_blocks AS x
        WHERE x.agent = b.agent AND x.kind = 'archival' AND x.pk < b.pk
        ORDER BY x.pk DESC LIMIT 1) AS p ON true
    LEFT JOIN satchel_block_vectors AS pv ON pv.pk = p.pk
    LEFT JOIN LATERAL (SELECT x.pk FROM satchel_blocks AS x
        WHERE x.agent = b.agent AND x.kind = 'archival' AND x.pk > b.pk
        ORDER BY x.pk LIMIT 1) AS n ON true
    LEFT JOIN satchel_block_vectors AS nv ON nv.pk = n.pk
    WHERE b.pk = ANY(%(pks)s) AND b.agent = %(me)s AND b.kind = 'archival'
        AND bv.embedding IS NOT NULL
"""

_MESSAGES: LiteralString = """
    SELECT m.pk, p.pk, 1 - (pv.embedding <=> mv.embedding), n.pk,
        1 - (nv.embedding <=> mv.embedding)
    FROM satchel_messages AS m JOIN satchel_message_vectors AS mv ON mv.pk = m.pk
    LEFT JOIN LATERAL (SELECT x.pk FROM satchel_messages AS x
        WHERE x.agent = m.agent AND x.conversation_id = m.conversation_id
        AND (x.created_at, x.pk) < (m.created_at, m.pk)
        ORDER BY x.created_at DESC, x.pk DESC LIMIT 1) AS p ON true
    LEFT JOIN satchel_message_vectors AS pv ON pv.pk = p.pk
    LEFT JOIN LATERAL (SELECT x.pk FROM satchel_messages AS x
        WHERE x.agent = m.agent AND x.conversation_id = m.conversation_id
        AND (x.created_at, x.pk) > (m.created_at, m.pk)
        ORDER BY x.created_at, x.pk LIMIT 1) AS n ON true
    LEFT JOIN satchel_message_vectors AS nv ON nv.pk = n.pk
    WHERE m.pk = ANY(%(pks)s) AND m.agent = %(me)s AND mv.embedding IS NOT NULL
"""
"""Each candidate's neighbours with their cosines; vectors live in the side tables
(:mod:`._vector_rows`). The neighbour is found first (one step down an index) and its
vector joined after: with the vector table joined inside the ``LATERAL``, the planner
merged the two by walking the vector table's key from one end to the neighbour, half
the table per candidate (96 ms a search at 10,000 entries)."""


async def neighbour_pks(
    conn: Conn, alias: LiteralString, agent: str, pks: Sequence[int]
) -> dict[int, list[tuple[int, float]]]:
    """The entries just before and after each of ``pks`` that ``agent`` owns (archival
    blocks: insertion order; messages: the same conversation in ``created_at`` order,
    ties in insertion order), each with its cosine to the entry. Shared blocks, rows
    without a vector and neighbours without one get none."""
    if not pks:
        return {}
    sql = _BLOCKS if alias == "b" else _MESSAGES
    cursor = await conn.execute(sql, {"pks": list(pks), "me": agent})
    return {
        int(pk): [
            (int(n), float(c)) for n, c in ((before, c_before), (after, c_after)) if c is not None
        ]
        for pk, before, c_before, after, c_after in await cursor.fetchall()
    }


async def _matched_terms(
    conn: Conn, table: LiteralString, terms: Sequence[str], pks: Sequence[int]
) -> dict[int, list[str]]:
    """Which of ``terms`` each row of ``pks`` contains, as its ``fts`` column sees them."""
    if not pks or not terms:
        return {}
    tests = ", ".join(
        cast(LiteralString, f"x.fts @@ plainto_tsquery('satchel_fts'::regconfig, %(t{i})s)")
        for i in range(len(terms))
    )
    params: dict[str, Any] = {f"t{i}": term for i, term in enumerate(terms)}
    params["pks"] = list(pks)
    cursor = await conn.execute(
        f"SELECT x.pk, ARRAY[{tests}] FROM {table} AS x WHERE x.pk = ANY(%(pks)s)", params
    )
    return {
        int(pk): [t for t, hit in zip(terms, hits, strict=True) if hit]
        for pk, hits in await cursor.fetchall()
    }


async def add_neighbour_context(
    conn: Conn,
    table: LiteralString,
    alias: LiteralString,
    *,
    vectors: LiteralString,
    agent: str,
    lexical: Sequence[int],
    semantic: Sequence[int],
    frequency: Mapping[str, float],
    total: float,
    weight: float,
    lend_share: float,
    where: LiteralString,
    params: dict[str, Any],
    cosine: LiteralString,
) -> tuple[dict[int, float], dict[int, float]]:
    """Coverage shares with neighbouring-entry context, and the cosines of the extra
    candidates.

    The BM25 candidates' neighbours that pass ``where`` (on ``alias``, with the
    query parameters ``params``, which gains ``extra``) join the candidates, scored
    by ``cosine`` (the SQL of a row's cosine to the query, on ``alias`` and ``v``, its
    row of the side table ``vectors``).

    Returns:
        ``(shares, cosines)``: each candidate's coverage share (BM25 candidates, vector
        candidates and extras alike), and each extra candidate's cosine.
    """
    pool = list(dict.fromkeys([*lexical, *semantic]))
    around = await neighbour_pks(conn, alias, agent, pool)
    seen = set(pool)
    fresh = list(dict.fromkeys(n for pk in lexical for n, _ in around.get(pk, ()) if n not in seen))
    cosines: dict[int, float] = {}
    if fresh:
        params["extra"] = fresh
        cursor = await conn.execute(
            f"SELECT {alias}.pk, {cosine} FROM {table} AS {alias} "
            f"LEFT JOIN {vectors} AS v ON v.pk = {alias}.pk "
            f"WHERE {alias}.pk = ANY(%(extra)s) AND {where}",
            params,
        )
        cosines = {int(pk): float(c) for pk, c in await cursor.fetchall() if c is not None}
        pool += list(cosines)
        around.update(await neighbour_pks(conn, alias, agent, list(cosines)))
    present = [term for term, df in frequency.items() if df > 0]
    near = sorted({n for ns in around.values() for n, _ in ns}.difference(pool))
    matched = await _matched_terms(conn, table, present, [*pool, *near])
    own = {pk: matched.get(pk, []) for pk in pool}
    nearby = {pk: [(matched.get(n, []), c) for n, c in around.get(pk, ())] for pk in pool}
    return context_coverage(own, nearby, frequency, total, weight, lend_share), cosines
