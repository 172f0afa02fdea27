"""How ``discover_tools`` ranks tools for a query: BM25, embeddings, or both fused.

A catalog is small, so every candidate tool gets both scores (no top-N cut-off before
fusion). The fusion methods:

* ``rrf``: reciprocal-rank fusion, ``(1 - w) / (k + rank_bm25) + w / (k + rank_cos)``
  (a tool with no BM25 match gets no BM25 term);
* ``minmax``: each score list scaled to [0, 1] over the candidates, then
  ``(1 - w) * bm25 + w * cosine``;
* ``zscore``: each list standardised (mean 0, deviation 1) over the candidates, then the
  same convex combination;
* ``convex``: BM25 divided by its maximum, combined with the raw cosine.

:data:`DEFAULT_RANKING` was chosen on the MetaTool benchmark (199 tools, 4,074 dev
queries; ``bench/meta_retrieval.py``): tuned on a fixed random half of the queries and
checked on the other half. Figures, held-out half:

=========================  =========  =========
ranking                    recall@1   recall@5
=========================  =========  =========
BM25 only                  0.571      0.805
embedding only             0.625      0.875
rrf, k=60, w=0.5           0.656      0.887
zscore, w=0.65 (default)   0.686      0.911
=========================  =========  =========
"""

from __future__ import annotations

from typing import Literal

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, ConfigDict, Field

__all__ = ["DEFAULT_RANKING", "Ranking", "fuse_scores"]

_Scores = npt.NDArray[np.float32]


class Ranking(BaseModel):
    """How :class:`~satchel.meta.CatalogIndex` ranks tools for a query.

    Attributes:
        mode: ``hybrid`` (BM25 and embeddings fused), ``bm25`` or ``embedding`` only.
            Without an embedder, every mode is ``bm25``.
        fusion: ``rrf``, ``minmax``, ``zscore`` or ``convex`` (see the module doc).
        embedding_weight: Weight of the embedding side in [0, 1]; BM25 gets the rest.
        rrf_k: The RRF constant (``rrf`` only).
        k1: BM25 term-frequency saturation.
        b: BM25 length normalisation.
        name_weight: How many times a tool's name words count in its BM25 document.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    mode: Literal["hybrid", "bm25", "embedding"] = "hybrid"
    fusion: Literal["rrf", "minmax", "zscore", "convex"] = "zscore"
    embedding_weight: float = Field(default=0.65, ge=0.0, le=1.0)
    rrf_k: float = Field(default=60.0, gt=0.0)
    k1: float = Field(default=1.2, gt=0.0)
    b: float = Field(default=0.75, ge=0.0, le=1.0)
    name_weight: int = Field(default=2, ge=1, le=10)


DEFAULT_RANKING = Ranking()
"""The ranking satchel uses unless told otherwise (see the module doc)."""


def _minmax(scores: _Scores) -> _Scores:
    low, high = float(scores.min()), float(scores.max())
    if high - low <= 1e-12:
        return np.zeros_like(scores)
    return (scores - low) / (high - low)


def _zscore(scores: _Scores) -> _Scores:
    deviation = float(scores.std())
    if deviation <= 1e-12:
        return np.zeros_like(scores)
    return (scores - float(scores.mean())) / deviation


def _reciprocal_ranks(scores: _Scores, k: float, *, skip_zero: bool) -> _Scores:
    order = np.argsort(-scores, kind="stable")
    ranks = np.empty(len(scores), dtype=np.float32)
    ranks[order] = np.arange(1, len(scores) + 1, dtype=np.float32)
    out = (1.0 / (k + ranks)).astype(np.float32)
    if skip_zero:
        out[scores <= 0] = 0.0
    return out


def fuse_scores(bm25: _Scores, cosine: _Scores, ranking: Ranking = DEFAULT_RANKING) -> _Scores:
    """One score per candidate from its BM25 score and its cosine similarity.

    Args:
        bm25: BM25 score of each candidate (0 for no shared term).
        cosine: Cosine similarity of each candidate to the query.
        ranking: The fusion method and weight.

    Returns:
        The fused scores, higher is better, aligned with the inputs.

    Example:
        >>> fused = fuse_scores(np.array([2.0, 0.0], "f4"), np.array([0.1, 0.5], "f4"))
        >>> fused.shape
        (2,)
    """
    if not len(bm25):
        return np.zeros(0, dtype=np.float32)
    w = ranking.embedding_weight
    match ranking.fusion:
        case "rrf":
            b = _reciprocal_ranks(bm25, ranking.rrf_k, skip_zero=True)
            c = _reciprocal_ranks(cosine, ranking.rrf_k, skip_zero=False)
        case "minmax":
            b, c = _minmax(bm25), _minmax(cosine)
        case "zscore":
            b, c = _zscore(bm25), _zscore(cosine)
        case "convex":
            top = float(bm25.max())
            b = bm25 / top if top > 0 else np.zeros_like(bm25)
            c = cosine
    return ((1.0 - w) * b + w * c).astype(np.float32)
