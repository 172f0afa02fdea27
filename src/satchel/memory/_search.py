"""Backend-neutral parts of hybrid search: what a search asks for, which domains it
touches, and turning two candidate score maps into the final ranking with per-method
diagnostics.

Core and working blocks are not the backend's: :class:`SearchPlan` ``context`` is
answered by :mod:`satchel.memory._context_lines`, line by line.

The store prepares a :class:`SearchRequest`. A backend finds candidates its own way
(SQLite: FTS5 BM25 and the in-memory :class:`~satchel.retrieval.AnnIndex`, saved beside the file;
PostgreSQL: ``tsvector`` and pgvector), keyed by ``(domain, row id)``, calls
:func:`rank` with its named signals, reads the chosen rows and turns them into hits
with :func:`to_hits`.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

import numpy as np
import numpy.typing as npt

from satchel.memory._context_window import DEFAULT_NEIGHBOURS, Neighbours
from satchel.memory._models import Domain, SearchFilters, SearchHit, SearchMode
from satchel.retrieval import (
    RELEVANT_COSINE,
    RELEVANT_COVERAGE,
    HybridFusion,
    fuse_named,
)

__all__ = [
    "Ranked",
    "SearchPlan",
    "SearchRequest",
    "SearchResults",
    "is_relevant",
    "plan_search",
    "rank",
    "to_hits",
]

_K = TypeVar("_K", bound=Hashable)
F32 = npt.NDArray[np.float32]


class SearchResults(list[SearchHit]):
    """The hits of :meth:`~satchel.memory.MemoryStore.search`, best first: a ``list``
    of :class:`~satchel.memory.SearchHit`, with :attr:`warnings` saying what made the
    search less than it could be (the embedder failed, so it ran by keywords only; the
    database holds another model's vectors).

    Example:
        >>> hits = await store.search("ada", "tea")  # doctest: +SKIP
        >>> hits.warnings  # doctest: +SKIP
        ('searched by keywords only: the embedder failed (cannot reach ...)',)
    """

    def __init__(self, hits: Iterable[SearchHit] = (), *, warnings: Sequence[str] = ()) -> None:
        super().__init__(hits)
        self.warnings: tuple[str, ...] = tuple(warnings)
        """What made this search less than it could be, in words; empty when nothing
        did."""


@dataclass(kw_only=True, frozen=True)
class SearchPlan:
    """Which kinds of entry a search looks at.

    Attributes:
        blocks: Archival blocks.
        messages: Conversation messages.
        context: The lines of core and working blocks (in the agent's context
            already, found so that a fact kept there is a hit too); the store ranks
            them (:mod:`satchel.memory._context_lines`), not the backend.
    """

    blocks: bool
    messages: bool
    context: bool = False


def plan_search(domains: Domain, filters: SearchFilters) -> SearchPlan:
    """Decide the domains: the requested ones (``all`` also covers core and working
    blocks), minus blocks when a message-only filter (``role``, ``conversation_id``) is
    set and minus messages when ``labels`` is set."""
    blocks = domains in (Domain.ARCHIVAL_MEMORY, Domain.ALL)
    context = domains == Domain.ALL
    messages = domains in (Domain.CONVERSATIONS, Domain.ALL)
    if filters.role is not None or filters.conversation_id is not None:
        blocks = context = False
    if filters.labels:
        messages = False
    return SearchPlan(blocks=blocks, messages=messages, context=context)


@dataclass(kw_only=True, frozen=True)
class SearchRequest:
    """Everything a search needs, prepared by the store on the event loop.

    Attributes:
        agent: The searching agent.
        terms: Sanitised query terms.
        query_vector: The query's embedding, or ``None`` (no vector side).
        plan: Which domains to search.
        filters: The filters.
        limit: Hits wanted.
        mode: ``hybrid``, ``bm25`` or ``vector``.
        fusion: How to fuse.
        neighbours: How much a query term only a candidate's neighbouring entry
            contains counts in ``coverage`` fusion, per domain
            (:mod:`~satchel.memory._context_window`).
    """

    agent: str
    terms: list[str]
    query_vector: F32 | None
    plan: SearchPlan
    filters: SearchFilters
    limit: int
    mode: SearchMode
    fusion: HybridFusion
    neighbours: Neighbours = DEFAULT_NEIGHBOURS


@dataclass(kw_only=True, frozen=True)
class Ranked(Generic[_K]):
    """One fused result with the diagnostics that explain it."""

    key: _K
    score: float
    bm25_rank: int | None
    vector_rank: int | None
    bm25_score: float | None
    vector_score: float | None
    coverage: float | None = None
    signals: Mapping[str, float] = field(default_factory=dict[str, float])
    """Every named signal's score for this key (those that scored it)."""


def _ranks(scores: Mapping[_K, float]) -> dict[_K, int]:
    ordered = sorted(scores, key=lambda key: -scores[key])
    return {key: position for position, key in enumerate(ordered, start=1)}


def rank(
    signals: Mapping[str, Mapping[_K, float]],
    *,
    mode: SearchMode,
    fusion: HybridFusion,
    limit: int,
) -> list[Ranked[_K]]:
    """The best ``limit`` candidates for ``mode``, with each signal's rank and score.

    ``signals`` are the backend's named score maps: ``bm25`` and ``vector`` (whose
    keys are the candidates), ``coverage`` (each BM25 candidate's share of the query's
    IDF mass, :func:`~satchel.retrieval.term_coverage`, used by ``coverage`` fusion),
    and any other signal the fusion weighs (:func:`~satchel.retrieval.fuse_named`). In
    ``bm25`` and ``vector`` mode the other signals still supply diagnostics but not
    the order.
    """
    bm25, vector = signals.get("bm25", {}), signals.get("vector", {})
    coverage = signals.get("coverage")
    match mode:
        case "bm25":
            ordered = sorted(bm25.items(), key=lambda item: -item[1])
        case "vector":
            ordered = sorted(vector.items(), key=lambda item: -item[1])
        case "hybrid":
            ordered = fuse_named(signals, fusion, candidates=[*bm25, *vector])
    rank_b, rank_v = _ranks(bm25), _ranks(vector)
    return [
        Ranked(
            key=key,
            score=float(score),
            bm25_rank=rank_b.get(key),
            vector_rank=rank_v.get(key),
            bm25_score=bm25.get(key),
            vector_score=vector.get(key),
            coverage=None if coverage is None else coverage.get(key),
            signals={name: s[key] for name, s in signals.items() if key in s},
        )
        for key, score in ordered[:limit]
    ]


def is_relevant(
    hit: SearchHit,
    *,
    min_coverage: float = RELEVANT_COVERAGE,
    min_cosine: float = RELEVANT_COSINE,
) -> bool:
    """Whether ``hit`` is evidence for its query rather than the least unrelated entry:
    its words cover at least ``min_coverage`` of the query's IDF mass, or its cosine to
    the query is at least ``min_cosine``. A hit with neither signal (a BM25-only
    search) counts as relevant: there is nothing to judge it by. The defaults were
    calibrated on questions whose answer is and is not in the store
    (``bench/README.md``, "Nothing in memory matches").

    Example:
        >>> from datetime import UTC, datetime
        >>> hit = SearchHit(domain="conversations", id="m1", owner="ada", text="hi",
        ...     score=0.06, created_at=datetime.now(UTC), coverage=0.0, vector_score=0.12)
        >>> is_relevant(hit)
        False
    """
    if hit.coverage is None and hit.vector_score is None:
        return True
    return (hit.coverage or 0.0) >= min_coverage or (hit.vector_score or 0.0) >= min_cosine


def to_hits(
    ranked: Sequence[Ranked[_K]], fields: Mapping[_K, Mapping[str, Any]]
) -> list[SearchHit]:
    """The hits for ``ranked``, in order, from each entry's stored ``fields`` (the
    :class:`SearchHit` fields other than the scores); an entry without fields was
    deleted since it was a candidate and is left out."""
    hits: list[SearchHit] = []
    for r in ranked:
        found = fields.get(r.key)
        if found is None:
            continue
        hits.append(
            SearchHit(
                **found,
                score=r.score,
                bm25_rank=r.bm25_rank,
                vector_rank=r.vector_rank,
                bm25_score=r.bm25_score,
                vector_score=r.vector_score,
                coverage=r.coverage,
            )
        )
    return hits
