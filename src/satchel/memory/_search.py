"""Backend-neutral parts of hybrid search: which domains a search touches, and turning
two candidate score maps into the final ranking with per-method diagnostics.

A backend finds candidates its own way (SQLite: FTS5 BM25 and the in-memory
:class:`~satchel.memory._vectors.VectorIndex`; PostgreSQL: ``tsvector`` and pgvector),
keyed by ``(domain, row id)``, then calls :func:`rank`.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from typing import Generic, TypeVar

from satchel.memory._fusion import Fusion, fuse
from satchel.memory._models import Domain, SearchFilters, SearchMode

__all__ = ["Ranked", "SearchPlan", "plan_search", "rank"]

_K = TypeVar("_K", bound=Hashable)


@dataclass(kw_only=True, frozen=True)
class SearchPlan:
    """Which kinds of entry a search looks at.

    Attributes:
        blocks: Archival blocks.
        messages: Conversation messages.
    """

    blocks: bool
    messages: bool


def plan_search(domains: Domain, filters: SearchFilters) -> SearchPlan:
    """Decide the domains: the requested ones, minus blocks when a message-only filter
    (``role``, ``conversation_id``) is set and minus messages when ``labels`` is set."""
    blocks = domains in (Domain.ARCHIVAL_MEMORY, Domain.ALL)
    messages = domains in (Domain.CONVERSATIONS, Domain.ALL)
    if filters.role is not None or filters.conversation_id is not None:
        blocks = False
    if filters.labels:
        messages = False
    return SearchPlan(blocks=blocks, messages=messages)


@dataclass(kw_only=True, frozen=True)
class Ranked(Generic[_K]):
    """One fused result with the diagnostics that explain it."""

    key: _K
    score: float
    bm25_rank: int | None
    vector_rank: int | None
    bm25_score: float | None
    vector_score: float | None


def _ranks(scores: Mapping[_K, float]) -> dict[_K, int]:
    ordered = sorted(scores, key=lambda key: -scores[key])
    return {key: position for position, key in enumerate(ordered, start=1)}


def rank(
    bm25: Mapping[_K, float],
    vector: Mapping[_K, float],
    *,
    mode: SearchMode,
    fusion: Fusion,
    limit: int,
) -> list[Ranked[_K]]:
    """The best ``limit`` candidates for ``mode``, with each method's rank and score.

    In ``bm25`` and ``vector`` mode the other map still supplies diagnostics but not
    the order.
    """
    match mode:
        case "bm25":
            ordered = sorted(bm25.items(), key=lambda item: -item[1])
        case "vector":
            ordered = sorted(vector.items(), key=lambda item: -item[1])
        case "hybrid":
            ordered = fuse(bm25, vector, fusion)
    rank_b, rank_v = _ranks(bm25), _ranks(vector)
    return [
        Ranked(
            key=key,
            score=float(score),
            bm25_rank=rank_b.get(key),
            vector_rank=rank_v.get(key),
            bm25_score=bm25.get(key),
            vector_score=vector.get(key),
        )
        for key, score in ordered[:limit]
    ]
