"""The blocking half of :meth:`SQLiteStore.search`: candidates, fusion, hydration.

Vector candidates with filters: the index (one per domain, shared by every agent in
the file) is asked for more rows than needed (``candidates + 32`` without filters, to
absorb the few core and working blocks; ``4 x candidates + 64`` with filters); the
owner and the other filters are applied in SQL, which also drops any row deleted since.
If too few survive while more may exist, the index is asked once more for 8 times as
many, and if still too few survive, every row that passes the filters is scored exactly
(a pre-filter: an agent owning a small share of a large file). So a filtered vector
search is never wrong, only slower when the filter is very selective.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

import numpy as np
import numpy.typing as npt

from satchel.memory._models import SearchHit
from satchel.memory._search import SearchRequest, rank, to_hits
from satchel.memory.sqlite._context_sql import ContextQuery, context_shares
from satchel.memory.sqlite._indexes import StoredIndexes
from satchel.memory.sqlite._messages import BLOCKS, MESSAGES
from satchel.memory.sqlite._rows import (
    BLOCK_FROM,
    MESSAGE_FROM,
    agent_id,
    from_us,
    placeholders,
)
from satchel.memory.sqlite._search_sql import (
    bm25_candidates,
    bm25_query,
    filter_clause,
    keep_matching,
    lexical_coverage,
    matching_ids,
    shared_block_pks,
)

__all__ = ["run_search"]

F32 = npt.NDArray[np.float32]
_Key = tuple[int, int]


def _vector_candidates(
    conn: sqlite3.Connection,
    indexes: StoredIndexes,
    domain: int,
    me: int,
    query: F32,
    where: str,
    params: list[Any],
    n: int,
    narrowing: bool,
) -> dict[int, float]:
    index = indexes.indexes[domain]
    fetch = 4 * n + 64 if narrowing else n + 32
    shared = shared_block_pks(conn, me) if domain == BLOCKS else []
    ids = np.zeros(0, np.int64)
    passing: list[tuple[int, float]] = []
    for attempt in range(2):
        ids, scores = index.search(query, fetch)
        found: dict[int, float] = dict(zip(ids.tolist(), scores.tolist(), strict=True))
        if shared:
            extra_ids, extra_scores = index.scores_for(query, np.asarray(shared, np.int64))
            found.update(zip(extra_ids.tolist(), extra_scores.tolist(), strict=True))
        keep = keep_matching(conn, domain, list(found), where, params)
        passing = sorted(((pk, s) for pk, s in found.items() if pk in keep), key=lambda x: -x[1])
        if len(passing) >= n or len(ids) < fetch or attempt:
            break
        fetch *= 8
    if len(passing) < n and len(ids) >= fetch:
        # Too selective for over-fetching: score every passing row exactly.
        allowed = np.asarray(matching_ids(conn, domain, where, params), dtype=np.int64)
        exact_ids, exact_scores = index.scores_for(query, allowed)
        top = np.argsort(-exact_scores)[:n]
        return dict(zip(exact_ids[top].tolist(), exact_scores[top].tolist(), strict=True))
    return dict(passing[:n])


def _hydrate(conn: sqlite3.Connection, agent: str, keys: list[_Key]) -> dict[_Key, dict[str, Any]]:
    """The fields of a :class:`SearchHit` for each key, read in one query per domain."""
    found: dict[_Key, dict[str, Any]] = {}
    block_pks = [pk for domain, pk in keys if domain == BLOCKS]
    message_pks = [pk for domain, pk in keys if domain == MESSAGES]
    if block_pks:
        rows = conn.execute(
            "SELECT b.pk, b.id, b.label, a.name, b.value, b.created_at, b.tags, b.metadata, "
            f"b.kind FROM {BLOCK_FROM} WHERE b.pk IN ({placeholders(len(block_pks))})",
            block_pks,
        )
        for pk, id_, label, owner, value, created, tags, metadata, kind in rows:
            found[(BLOCKS, int(pk))] = {
                "domain": "archival_memory",
                "id": id_,
                "label": label if owner == agent else f"{owner}/{label}",
                "owner": owner,
                "text": value,
                "created_at": from_us(created),
                "tags": tuple(json.loads(tags)),
                "metadata": json.loads(metadata),
                "kind": kind,
            }
    if message_pks:
        rows = conn.execute(
            "SELECT m.pk, m.id, a.name, m.content, m.created_at, m.role, m.conversation_id, "
            f"m.tags, m.metadata FROM {MESSAGE_FROM} WHERE m.pk IN "
            f"({placeholders(len(message_pks))})",
            message_pks,
        )
        for pk, id_, owner, content, created, role, conversation, tags, metadata in rows:
            found[(MESSAGES, int(pk))] = {
                "domain": "conversations",
                "id": id_,
                "owner": owner,
                "text": content,
                "created_at": from_us(created),
                "role": role,
                "conversation_id": conversation,
                "tags": tuple(json.loads(tags)),
                "metadata": json.loads(metadata),
            }
    return found


def run_search(
    conn: sqlite3.Connection,
    indexes: StoredIndexes | None,
    request: SearchRequest,
) -> list[SearchHit]:
    """Run a search inside one read transaction."""
    me = agent_id(conn, request.agent, create=False)
    if me is None:
        return []
    query = request.query_vector if request.mode != "bm25" else None
    lexical_on = request.mode != "vector" and bool(request.terms)
    if query is not None and indexes is not None:
        indexes.sync(conn)
    else:
        query = None
    n = max(request.fusion.candidates, request.limit)
    fill_in = request.fusion.fill_in and request.mode == "hybrid"
    f = request.filters
    narrowing = bool(
        f.role or f.start_time or f.end_time or f.tags or f.labels or f.conversation_id
    )
    covering = request.mode == "hybrid" and request.fusion.method == "coverage"
    bm25: dict[_Key, float] = {}
    vector: dict[_Key, float] = {}
    coverage: dict[_Key, float] = {}
    domains = [
        d for d, on in ((BLOCKS, request.plan.blocks), (MESSAGES, request.plan.messages)) if on
    ]
    for domain in domains:
        where, params = filter_clause(domain, me, request.filters, archival_only=True)
        bm25_plan = bm25_query(conn, domain, request.terms) if lexical_on else None
        lexical = (
            bm25_candidates(conn, domain, bm25_plan, where, params, n, narrowing=narrowing)
            if bm25_plan
            else {}
        )
        semantic: dict[int, float] = {}
        if query is not None and indexes is not None:
            semantic = _vector_candidates(
                conn, indexes, domain, me, query, where, params, n, narrowing
            )
            if fill_in:
                missing = np.asarray([pk for pk in lexical if pk not in semantic], np.int64)
                ids, scores = indexes.indexes[domain].scores_for(query, missing)
                semantic.update(zip(ids.tolist(), scores.tolist(), strict=True))
        bm25.update({(domain, pk): s for pk, s in lexical.items()})
        if covering and lexical:
            counts = bm25_plan.counts if bm25_plan else None
            weight, lend_share = request.neighbours.of(archival=domain == BLOCKS)
            if weight > 0 and query is not None and indexes is not None:
                ask = ContextQuery(
                    domain=domain,
                    me=me,
                    query=query,
                    where=where,
                    params=params,
                    terms=request.terms,
                    counts=counts,
                    weight=weight,
                    lend_share=lend_share,
                    vector_weight=request.fusion.vector_weight,
                    limit=request.limit,
                )
                cover = context_shares(conn, indexes.indexes[domain], ask, lexical, semantic)
            else:
                cover = lexical_coverage(conn, domain, request.terms, list(lexical), counts)
            coverage.update({(domain, pk): c for pk, c in cover.items()})
        vector.update({(domain, pk): s for pk, s in semantic.items()})
    signals = {"bm25": bm25, "vector": vector, "coverage": coverage}
    ranked = rank(signals, mode=request.mode, fusion=request.fusion, limit=request.limit)
    return to_hits(ranked, _hydrate(conn, request.agent, [r.key for r in ranked]))
