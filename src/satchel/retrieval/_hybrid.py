"""Hybrid search's fusion: BM25 and vector candidates into one ranking that respects
how sure each signal is (memory search).

Both retrievers hand over candidates keyed alike, as named signals (``bm25``,
``vector``, ``coverage``, and any other a :class:`HybridFusion` gives a weight).
:func:`fuse_named` combines them, as the fusion says, with one of the methods below
(:func:`fuse_hybrid` is the same for the three usual signals); a new signal is one
more name in the mapping and one weight, not a new parameter in every layer:

* ``coverage`` (the default): ``(1 - w) * coverage + w * cosine``, where ``coverage``
  is the share of the query's IDF mass an entry contains (:func:`term_coverage`);
* ``rrf``: reciprocal-rank fusion, ``w_bm25 / (k + rank_bm25) + w_vec / (k + rank_vec)``;
* ``minmax``: each list's scores scaled to [0, 1] by its min and max, then
  ``(1 - w) * bm25 + w * vec``;
* ``zscore``: each list standardised (mean 0, deviation 1), then the same convex
  combination, a missing score counting as the list's minimum;
* ``convex``: raw cosine with max-scaled BM25 (``bm25 / max_bm25``).

Why coverage. Rank- and range-based fusion (``rrf``, ``minmax``, ``zscore``) throw away
how *sure* a signal is. In a small memory where five facts all name "Ada", the query
"what is Ada's job?" matches every fact on "ada" alone; "job" matches none. Every BM25
score is then about equal noise (FTS5 even clamps the IDF of a term in most rows to
1e-6), yet min-max stretches that noise to the full 0..1 range and it outweighs a clear
semantic match. Coverage asks instead what fraction of the query the entry actually
contains, weighting each query term by its IDF: 1.0 when it contains every term, about
0 when it shares only a word that is in nearly every entry, and never more than its
share when it contains one rare term of several. A query term found in no entry at all
counts in the denominator: it says the query is about something the words of the store
do not name, which is exactly when the vector side should decide. Entries containing
the same query terms tie on this side (term frequency and length only re-order BM25's
own candidates), so the vector side breaks the tie instead of document-length noise.

Cosine similarity already has an absolute scale (0 is unrelated, 1 identical), so it is
used as it is; a candidate without a vector counts as 0. Both sides are then on a
fixed scale that does not depend on the other candidates, the BM25 side does not depend
on the BM25 engine's score scale (SQLite FTS5 and PostgreSQL compute different ones),
and an entry scores high only for strong evidence: most of the query's rare words, or a
close meaning. The weight and the choice of method were measured on LoCoMo (each
session as its own store and whole conversations) and on a personal-facts set
(:mod:`satchel.retrieval._settings`; the figures and the command are in
``bench/README.md``).

Everything here is a pure function of its arguments: no store, no SQL.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Hashable, Iterable, Mapping
from typing import Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from satchel.retrieval._bm25 import idf
from satchel.retrieval._settings import (
    HYBRID_CANDIDATES,
    HYBRID_METHOD,
    HYBRID_VECTOR_WEIGHT,
    RRF_K,
)

__all__ = [
    "DEFAULT_HYBRID_FUSION",
    "HybridFusion",
    "fuse_hybrid",
    "fuse_named",
    "lexical_signal",
    "signal_weights",
    "term_coverage",
]

_K = TypeVar("_K", bound=Hashable)


class HybridFusion(BaseModel):
    """How hybrid search combines BM25 and vector candidates (memory search).

    Attributes:
        method: ``coverage``, ``rrf``, ``minmax``, ``zscore`` or ``convex`` (see the
            module doc).
        vector_weight: Weight of the vector side, in [0, 1]; BM25 gets the rest.
        k: The RRF constant (only for ``rrf``).
        candidates: How many candidates each retriever contributes (at least the
            search's ``limit``).
        fill_in: Give every BM25 candidate its true cosine (one dot product each)
            instead of treating "not among the vector candidates" as the worst score.
        weights: The weights of further named signals (:func:`fuse_named`), e.g.
            ``{"recency": 0.1}``; a name here also overrides the lexical signal's
            ``1 - vector_weight`` or the vector's ``vector_weight``.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    method: Literal["coverage", "rrf", "minmax", "zscore", "convex"] = HYBRID_METHOD
    vector_weight: float = Field(default=HYBRID_VECTOR_WEIGHT, ge=0.0, le=1.0)
    k: float = Field(default=RRF_K, gt=0.0)
    candidates: int = Field(default=HYBRID_CANDIDATES, ge=1, le=1000)
    fill_in: bool = True
    weights: dict[str, float] = Field(default_factory=dict[str, float])


DEFAULT_HYBRID_FUSION = HybridFusion()
"""The fusion satchel uses unless told otherwise: query-term coverage and cosine,
weighted equally, 50 candidates per retriever, filled in (see the module doc)."""


def term_coverage(
    matched: Mapping[_K, Collection[str]],
    document_frequency: Mapping[str, float],
    documents: float,
) -> dict[_K, float]:
    """The share of the query's IDF mass each candidate contains, in [0, 1].

    Args:
        matched: The query terms each candidate contains.
        document_frequency: Every query term's document frequency (0 for a term in no
            entry); its keys are the query's terms.
        documents: How many entries there are.

    Example:
        >>> cover = term_coverage({"a": ["ada"], "b": ["ada", "job"]}, {"ada": 5, "job": 0}, 5)
        >>> round(cover["a"], 2), cover["b"]
        (0.03, 1.0)
    """
    weights = {term: idf(df, documents) for term, df in document_frequency.items()}
    total = sum(weights.values())
    if total <= 0:
        return dict.fromkeys(matched, 0.0)
    # Summed in the query's term order (not a set's), so a score is the same to the
    # last bit in every process, whatever the string hash seed.
    out: dict[_K, float] = {}
    for key, terms in matched.items():
        inside = set(terms)
        out[key] = min(1.0, sum(w for term, w in weights.items() if term in inside) / total)
    return out


def _ranks(scores: Mapping[_K, float]) -> dict[_K, int]:
    ordered = sorted(scores.items(), key=lambda item: -item[1])
    return {key: position for position, (key, _) in enumerate(ordered, start=1)}


def _minmax(scores: Mapping[_K, float]) -> dict[_K, float]:
    if not scores:
        return {}
    low, high = min(scores.values()), max(scores.values())
    span = high - low
    if span <= 0:
        return dict.fromkeys(scores, 1.0)
    return {key: (value - low) / span for key, value in scores.items()}


def _zscore(scores: Mapping[_K, float]) -> tuple[dict[_K, float], float]:
    if not scores:
        return {}, 0.0
    values = list(scores.values())
    mean = sum(values) / len(values)
    deviation = math.sqrt(sum((v - mean) ** 2 for v in values) / len(values)) or 1.0
    standard = {key: (value - mean) / deviation for key, value in scores.items()}
    return standard, min(standard.values())


def lexical_signal(fusion: HybridFusion) -> str:
    """The name of the lexical signal ``fusion``'s method weighs: ``"coverage"`` for
    ``coverage`` fusion, ``"bm25"`` for every other method."""
    return "coverage" if fusion.method == "coverage" else "bm25"


def signal_weights(fusion: HybridFusion) -> dict[str, float]:
    """Each named signal's weight, in the order they are summed: the lexical signal
    (:func:`lexical_signal`) ``1 - vector_weight``, ``"vector"`` ``vector_weight``,
    then :attr:`HybridFusion.weights` (which may also override those two).

    Example:
        >>> signal_weights(HybridFusion(vector_weight=0.3, weights={"recency": 0.1}))
        {'coverage': 0.7, 'vector': 0.3, 'recency': 0.1}
    """
    w = fusion.vector_weight
    return {lexical_signal(fusion): 1 - w, "vector": w, **fusion.weights}


def _contribution(
    method: str, scores: Mapping[_K, float], *, lexical: bool, k: float
) -> Callable[[float, _K], float]:
    """``(weight, key) -> weight × the key's score on method's scale`` for one signal."""
    match method:
        case "rrf":
            ranks = _ranks(scores)
            return lambda weight, key: weight / (k + ranks[key]) if key in ranks else 0.0
        case "minmax":
            norm = _minmax(scores)
            return lambda weight, key: weight * norm.get(key, 0.0)
        case "zscore":
            z, floor = _zscore(scores)
            return lambda weight, key: weight * z.get(key, floor)
        case "convex" if lexical:
            top = max(scores.values(), default=0.0) or 1.0
            return lambda weight, key: weight * scores.get(key, 0.0) / top
        case _:  # coverage, and convex's non-lexical signals: the score as it is
            return lambda weight, key: weight * scores.get(key, 0.0)


def fuse_named(
    signals: Mapping[str, Mapping[_K, float]],
    fusion: HybridFusion = DEFAULT_HYBRID_FUSION,
    *,
    candidates: Iterable[_K] | None = None,
) -> list[tuple[_K, float]]:
    """Combine named score maps into one list of ``(key, score)``, best first (ties
    keep the candidates' order).

    Each signal with a weight (:func:`signal_weights`) is put on the method's scale
    and summed with its weight; a signal without one is ignored, and a weighted signal
    that is missing counts as empty. ``coverage`` fusion without a ``"coverage"``
    signal uses ``"bm25"`` divided by its best score instead.

    Args:
        signals: Score per candidate, by signal name (``"bm25"``, ``"vector"``,
            ``"coverage"``, or any other the fusion weighs).
        fusion: The method, the vector weight and any other signals' weights.
        candidates: The keys to rank; by default every key of every signal, in the
            order they first appear.

    Example:
        >>> fusion = HybridFusion(method="minmax", weights={"recency": 0.5})
        >>> fuse_named({"bm25": {"a": 1.0, "b": 0.5}, "vector": {"a": 0.2, "b": 0.2},
        ...             "recency": {"a": 0.0, "b": 1.0}}, fusion)[0][0]
        'b'
    """
    if candidates is None:
        candidates = (key for scores in signals.values() for key in scores)
    keys = list(dict.fromkeys(candidates))
    lexical = lexical_signal(fusion)
    terms: list[tuple[float, Callable[[float, _K], float]]] = []
    for name, weight in signal_weights(fusion).items():
        scores = signals.get(name)
        if scores is None and name == "coverage" and fusion.method == "coverage":
            bm25 = signals.get("bm25", {})
            top = max(bm25.values(), default=0.0)
            scores = {key: s / top if top > 0 else 0.0 for key, s in bm25.items()}
        part = _contribution(fusion.method, scores or {}, lexical=name == lexical, k=fusion.k)
        terms.append((weight, part))
    fused: dict[_K, float] = {}
    for key in keys:
        total = 0.0
        for weight, part in terms:
            total += part(weight, key)
        fused[key] = total
    return sorted(fused.items(), key=lambda item: -item[1])


def fuse_hybrid(
    bm25: Mapping[_K, float],
    vector: Mapping[_K, float],
    fusion: HybridFusion = DEFAULT_HYBRID_FUSION,
    coverage: Mapping[_K, float] | None = None,
) -> list[tuple[_K, float]]:
    """Combine BM25 and vector candidates into one list of ``(key, score)``, best
    first (ties keep the order in which keys first appear, BM25's first):
    :func:`fuse_named` over the signals ``bm25``, ``vector`` and ``coverage``.

    Args:
        bm25: BM25 relevance per candidate (higher is better).
        vector: Cosine similarity per candidate.
        fusion: The method and its parameters.
        coverage: For ``coverage``: each BM25 candidate's share of the query's IDF
            mass (:func:`term_coverage`); a key it lacks counts 0. Without it, BM25
            scores divided by the best one stand in.

    Example:
        >>> fuse_hybrid({"a": 3.0, "b": 1.0}, {"b": 0.9, "c": 0.5})[0][0]
        'b'
    """
    signals: dict[str, Mapping[_K, float]] = {"bm25": bm25, "vector": vector}
    if coverage is not None:
        signals["coverage"] = coverage
    return fuse_named(signals, fusion, candidates=[*bm25, *vector])
