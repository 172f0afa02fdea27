"""The blocking half of :meth:`SQLiteStore.search`: candidates, fusion, hydration.

Vector candidates with filters: the index is asked for more rows than needed
(``4 x candidates + 64``, owner-filtered inside the scan), the rest of the filters are
applied in SQL, and if too few survive while more may exist, the search falls back to
scoring every row that passes the filters exactly (a pre-filter). So a filtered vector
search is never wrong, only slower when the filter is very selective.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from satchel.memory._fusion import Fusion
from satchel.memory._models import SearchFilters, SearchHit, SearchMode
from satchel.memory._search import SearchPlan, rank
from satchel.memory.sqlite._messages import BLOCKS, MESSAGES
from satchel.memory.sqlite._rows import (
    BLOCK_COLUMNS,
    BLOCK_FROM,
    MESSAGE_COLUMNS,
    MESSAGE_FROM,
    agent_id,
    block_from_row,
    message_from_row,
    placeholders,
)
from satchel.memory.sqlite._search_sql import (
    StoredIndexes,
    bm25_candidates,
    bm25_for,
    filter_clause,
    keep_matching,
    matching_ids,
    shared_block_pks,
)

__all__ = ["SearchRequest", "run_search"]

F32 = npt.NDArray[np.float32]
_Key = tuple[int, int]


@dataclass(kw_only=True, frozen=True)
class SearchRequest:
    """Everything the blocking search needs, prepared on the event loop."""

    agent: str
    match: str | None
    query_vector: F32 | None
    plan: SearchPlan
    filters: SearchFilters
    limit: int
    mode: SearchMode
    fusion: Fusion


def _vector_candidates(
    conn: sqlite3.Connection,
    indexes: StoredIndexes,
    domain: int,
    me: int,
    query: F32,
    where: str,
    params: list[Any],
    n: int,
) -> dict[int, float]:
    index = indexes.indexes[domain]
    fetch = 4 * n + 64
    ids, scores = index.search(query, fetch, owner=me)
    found = dict(zip(ids.tolist(), scores.tolist(), strict=True))
    if domain == BLOCKS:
        shared = shared_block_pks(conn, me)
        if shared:
            extra_ids, extra_scores = index.scores_for(query, np.asarray(shared, np.int64))
            found.update(zip(extra_ids.tolist(), extra_scores.tolist(), strict=True))
    keep = keep_matching(conn, domain, list(found), where, params)
    passing = sorted(((pk, s) for pk, s in found.items() if pk in keep), key=lambda x: -x[1])
    if len(passing) < n and len(ids) >= fetch:
        # Too selective for over-fetching: score every passing row exactly.
        allowed = np.asarray(matching_ids(conn, domain, where, params), dtype=np.int64)
        exact_ids, exact_scores = index.scores_for(query, allowed)
        top = np.argsort(-exact_scores)[:n]
        return dict(zip(exact_ids[top].tolist(), exact_scores[top].tolist(), strict=True))
    return dict(passing[:n])


def _hydrate(conn: sqlite3.Connection, agent: str, keys: list[_Key]) -> dict[_Key, tuple[Any, ...]]:
    found: dict[_Key, tuple[Any, ...]] = {}
    block_pks = [pk for domain, pk in keys if domain == BLOCKS]
    message_pks = [pk for domain, pk in keys if domain == MESSAGES]
    if block_pks:
        rows = conn.execute(
            f"SELECT {BLOCK_COLUMNS} FROM {BLOCK_FROM} WHERE b.pk IN "
            f"({placeholders(len(block_pks))})",
            block_pks,
        ).fetchall()
        for row in rows:
            block = block_from_row(row, {})
            found[(BLOCKS, int(row[0]))] = (
                "archival_memory",
                block.id,
                block.address_for(agent),
                block.agent,
                block.value,
                block.created_at,
                None,
                None,
                block.tags,
                block.metadata,
            )
    if message_pks:
        rows = conn.execute(
            f"SELECT {MESSAGE_COLUMNS} FROM {MESSAGE_FROM} WHERE m.pk IN "
            f"({placeholders(len(message_pks))})",
            message_pks,
        ).fetchall()
        for row in rows:
            message = message_from_row(row)
            found[(MESSAGES, int(row[0]))] = (
                "conversations",
                message.id,
                None,
                message.agent,
                message.content,
                message.created_at,
                message.role,
                message.conversation_id,
                message.tags,
                message.metadata,
            )
    return found


def run_search(
    conn: sqlite3.Connection, indexes: StoredIndexes | None, request: SearchRequest
) -> list[SearchHit]:
    """Run a search inside one read transaction."""
    me = agent_id(conn, request.agent, create=False)
    if me is None:
        return []
    query = request.query_vector if request.mode != "bm25" else None
    match = request.match if request.mode != "vector" else None
    if query is not None and indexes is not None:
        indexes.sync(conn)
    else:
        query = None
    n = max(request.fusion.candidates, request.limit)
    fill_in = request.fusion.fill_in and request.mode == "hybrid"
    bm25: dict[_Key, float] = {}
    vector: dict[_Key, float] = {}
    domains = [
        d for d, on in ((BLOCKS, request.plan.blocks), (MESSAGES, request.plan.messages)) if on
    ]
    for domain in domains:
        where, params = filter_clause(domain, me, request.filters, archival_only=True)
        lexical = bm25_candidates(conn, domain, match, where, params, n) if match else {}
        semantic: dict[int, float] = {}
        if query is not None and indexes is not None:
            semantic = _vector_candidates(conn, indexes, domain, me, query, where, params, n)
            if fill_in:
                missing = np.asarray([pk for pk in lexical if pk not in semantic], np.int64)
                ids, scores = indexes.indexes[domain].scores_for(query, missing)
                semantic.update(zip(ids.tolist(), scores.tolist(), strict=True))
        if fill_in and match:
            lexical.update(
                bm25_for(conn, domain, match, [pk for pk in semantic if pk not in lexical])
            )
        bm25.update({(domain, pk): s for pk, s in lexical.items()})
        vector.update({(domain, pk): s for pk, s in semantic.items()})
    ranked = rank(bm25, vector, mode=request.mode, fusion=request.fusion, limit=request.limit)
    rows = _hydrate(conn, request.agent, [r.key for r in ranked])
    hits: list[SearchHit] = []
    for r in ranked:
        row = rows.get(r.key)
        if row is None:
            continue
        domain_name, id_, label, owner, text, created, role, conversation, tags, metadata = row
        hits.append(
            SearchHit(
                domain=domain_name,
                id=id_,
                label=label,
                owner=owner,
                text=text,
                score=r.score,
                created_at=created,
                role=role,
                conversation_id=conversation,
                tags=tags,
                metadata=metadata,
                bm25_rank=r.bm25_rank,
                vector_rank=r.vector_rank,
                bm25_score=r.bm25_score,
                vector_score=r.vector_score,
            )
        )
    return hits
