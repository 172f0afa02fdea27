"""Fusing BM25 and vector candidates into one ranking.

Both retrievers hand over a mapping of candidate key to raw score (BM25 relevance,
higher is better; cosine similarity). :func:`fuse` combines them with one of:

* ``rrf``: reciprocal-rank fusion, ``w_bm25 / (k + rank_bm25) + w_vec / (k + rank_vec)``;
* ``minmax``: each list's scores scaled to [0, 1] by its min and max, then
  ``(1 - w) * bm25 + w * vec``;
* ``zscore``: each list standardised (mean 0, deviation 1), then the same convex
  combination, a missing score counting as the list's minimum;
* ``convex``: raw cosine with max-scaled BM25 (``bm25 / max_bm25``),
  ``(1 - w) * bm25 + w * cosine``.

A candidate missing from one list gets that list's worst value (0 after scaling, no
RRF term). Backends fill in the cosine of every BM25 candidate (``fill_in``), so the
score-based methods see both signals for those; a vector-only candidate keeps BM25 0
(it matched no query term, or too weakly to be among the BM25 candidates).

The default, :data:`DEFAULT_FUSION` (``Fusion()``: ``minmax``, vector weight 0.4, 50
candidates, fill-in on), was chosen by recall@5 and recall@10 of the evidence turns of
302 questions over 788 turns of the LoCoMo dev set (``bench/memory_quality.py --fusions
all``, all-MiniLM-L6-v2 int8):

=============================  ========  =========
method                         recall@5  recall@10
=============================  ========  =========
BM25 only (baseline)           0.533     0.632
vector only                    0.344     0.434
rrf k=60 (plain RRF)           0.479     0.582
rrf k=5                        0.559     0.637
zscore, w=0.4                  0.563     0.664
convex, w=0.5                  0.568     0.649
minmax, w=0.3                  0.560     0.665
**minmax, w=0.4 (default)**    0.569     0.667
minmax, w=0.5                  0.557     0.673
minmax, w=0.7                  0.517     0.610
minmax, w=0.3, no fill-in      0.554     0.670
=============================  ========  =========

Plain RRF with the usual k=60 *hurts* here (-10% recall@5, -8% recall@10):
vector-only is much weaker than BM25 on this data, and RRF gives its top ranks as much
weight as BM25's. Score-based fusion with the vector side weighted 0.3-0.5 sits on a
plateau 5-7% above BM25 at both cut-offs (and far above vectors alone); 0.4 is its
centre and the best recall@5. Candidate depth (20, 50 or 100) did not change the
figures. Differences under ~0.01 are within noise (one question is 0.003).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping
from typing import Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["DEFAULT_FUSION", "Fusion", "fuse"]

_K = TypeVar("_K", bound=Hashable)


class Fusion(BaseModel):
    """How hybrid search combines BM25 and vector scores.

    Attributes:
        method: ``rrf``, ``minmax``, ``zscore`` or ``convex`` (see the module doc).
        vector_weight: Weight of the vector side, in [0, 1]; BM25 gets the rest.
        k: The RRF constant (only for ``rrf``).
        candidates: How many candidates each retriever contributes (at least the
            search's ``limit``).
        fill_in: Give every BM25 candidate its true cosine (one dot product each)
            instead of treating "not among the vector candidates" as the worst score.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    method: Literal["rrf", "minmax", "zscore", "convex"] = "minmax"
    vector_weight: float = Field(default=0.4, ge=0.0, le=1.0)
    k: float = Field(default=60.0, gt=0.0)
    candidates: int = Field(default=50, ge=1, le=1000)
    fill_in: bool = True


DEFAULT_FUSION = Fusion()
"""The fusion satchel uses unless told otherwise: min-max scaling, vector weight 0.4,
50 candidates per retriever, filled in (tuned on LoCoMo; see the module doc)."""


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


def fuse(
    bm25: Mapping[_K, float], vector: Mapping[_K, float], fusion: Fusion = DEFAULT_FUSION
) -> list[tuple[_K, float]]:
    """Combine two candidate score maps into one list of ``(key, score)``, best first.

    Args:
        bm25: BM25 relevance per candidate (higher is better).
        vector: Cosine similarity per candidate.
        fusion: The method and its parameters.

    Example:
        >>> fuse({"a": 3.0, "b": 1.0}, {"b": 0.9, "c": 0.5})[0][0]
        'b'
    """
    keys = list(dict.fromkeys([*bm25, *vector]))
    w = fusion.vector_weight
    fused: dict[_K, float] = {}
    match fusion.method:
        case "rrf":
            rank_b, rank_v = _ranks(bm25), _ranks(vector)
            for key in keys:
                score = 0.0
                if key in rank_b:
                    score += (1 - w) / (fusion.k + rank_b[key])
                if key in rank_v:
                    score += w / (fusion.k + rank_v[key])
                fused[key] = score
        case "minmax":
            norm_b, norm_v = _minmax(bm25), _minmax(vector)
            for key in keys:
                fused[key] = (1 - w) * norm_b.get(key, 0.0) + w * norm_v.get(key, 0.0)
        case "zscore":
            (z_b, floor_b), (z_v, floor_v) = _zscore(bm25), _zscore(vector)
            for key in keys:
                fused[key] = (1 - w) * z_b.get(key, floor_b) + w * z_v.get(key, floor_v)
        case "convex":
            top = max(bm25.values(), default=0.0) or 1.0
            for key in keys:
                fused[key] = (1 - w) * bm25.get(key, 0.0) / top + w * vector.get(key, 0.0)
    return sorted(fused.items(), key=lambda item: -item[1])
