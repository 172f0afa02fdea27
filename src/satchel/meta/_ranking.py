"""How ``discover_tools`` ranks tools for a query: BM25 and embeddings, fused.

Three signals are computed for every candidate tool (a catalog is small, so there is
no top-N cut-off before fusion):

* ``bm25``: BM25 over the tool's name words, summary, description and parameter names;
* ``description``: cosine similarity of the query to the tool's description;
* ``name``: cosine similarity of the query to the words of the tool's name.

Each signal is normalised over the candidates, then combined with its weight:

* ``zscore``: standardised (mean 0, deviation 1);
* ``minmax``: scaled to [0, 1];
* ``rrf``: reciprocal rank ``1 / (k + rank)`` (a tool with no BM25 match gets no BM25
  term);
* ``convex``: raw values (BM25 divided by its maximum).

:data:`DEFAULT_RANKING` was chosen on the MetaTool benchmark (199 tools, 4,074 dev
queries) by ``bench/meta_retrieval.py --sweep``: every method and a grid of weights,
tuned on a fixed random half of the queries and reported on the other half. On the
held-out half:

===========================================  =========  =========
ranking                                      recall@1   recall@5
===========================================  =========  =========
BM25 only                                    0.425      0.633
embedding, one vector (name + description)   0.552      0.768
embedding, description + name vectors        0.570      0.791
hybrid, plain RRF (k=60, equal weights)      0.540      0.785
hybrid, z-score 0.2 / 0.6 / 0.3 (default)    0.584      0.818
===========================================  =========  =========

Plain RRF is worse than the embedding alone at rank 1 here; score-based fusion with a
light BM25 weight is what helps.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, ConfigDict, Field

__all__ = ["DEFAULT_RANKING", "Ranking", "fuse_scores"]

_Scores = npt.NDArray[np.float32]
Fusion = Literal["rrf", "minmax", "zscore", "convex"]


class Ranking(BaseModel):
    """How :class:`~satchel.meta.CatalogIndex` ranks tools for a query.

    Attributes:
        mode: ``hybrid`` (all signals), ``bm25`` only, or ``embedding`` only (the two
            cosine signals). Without an embedder every mode is ``bm25``.
        fusion: ``zscore``, ``minmax``, ``rrf`` or ``convex`` (see the module doc).
        bm25_weight: Weight of the BM25 signal.
        description_weight: Weight of the description-embedding signal.
        name_weight: Weight of the name-embedding signal.
        rrf_k: The RRF constant (``rrf`` only).
        k1: BM25 term-frequency saturation.
        b: BM25 length normalisation.
        name_repeat: How many times a tool's name words count in its BM25 document.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    mode: Literal["hybrid", "bm25", "embedding"] = "hybrid"
    fusion: Fusion = "zscore"
    bm25_weight: float = Field(default=0.2, ge=0.0)
    description_weight: float = Field(default=0.6, ge=0.0)
    name_weight: float = Field(default=0.2, ge=0.0)
    rrf_k: float = Field(default=60.0, gt=0.0)
    k1: float = Field(default=1.2, gt=0.0)
    b: float = Field(default=0.75, ge=0.0, le=1.0)
    name_repeat: int = Field(default=2, ge=1, le=10)


DEFAULT_RANKING = Ranking()
"""The ranking satchel uses unless told otherwise (see the module doc)."""


def _normalise(scores: _Scores, fusion: Fusion, *, k: float, lexical: bool) -> _Scores:
    match fusion:
        case "zscore":
            deviation = float(scores.std())
            if deviation <= 1e-9:
                return np.zeros_like(scores)
            return (scores - float(scores.mean())) / deviation
        case "minmax":
            low, high = float(scores.min()), float(scores.max())
            if high - low <= 1e-9:
                return np.zeros_like(scores)
            return (scores - low) / (high - low)
        case "rrf":
            order = np.argsort(-scores, kind="stable")
            ranks = np.empty(len(scores), dtype=np.float32)
            ranks[order] = np.arange(1, len(scores) + 1, dtype=np.float32)
            out = (1.0 / (k + ranks)).astype(np.float32)
            if lexical:
                out[scores <= 0] = 0.0
            return out
        case "convex":
            if not lexical:
                return scores
            top = float(scores.max())
            return scores / top if top > 0 else np.zeros_like(scores)


def fuse_scores(
    signals: Sequence[tuple[_Scores, float, bool]], ranking: Ranking = DEFAULT_RANKING
) -> _Scores:
    """One score per candidate from several signals.

    Args:
        signals: ``(scores, weight, lexical)`` per signal, each ``scores`` aligned with
            the candidates; ``lexical`` marks BM25 (where 0 means "no match").
        ranking: The normalisation method (and RRF constant).

    Returns:
        The weighted sum of the normalised signals; higher is better.

    Example:
        >>> bm25 = np.array([2.0, 0.0], "f4")
        >>> cosine = np.array([0.1, 0.5], "f4")
        >>> fuse_scores([(bm25, 0.5, True), (cosine, 0.5, False)]).shape
        (2,)
    """
    if not signals:
        return np.zeros(0, dtype=np.float32)
    total = np.zeros(len(signals[0][0]), dtype=np.float32)
    for scores, weight, lexical in signals:
        if weight and len(scores):
            normal = _normalise(scores, ranking.fusion, k=ranking.rrf_k, lexical=lexical)
            total += np.float32(weight) * normal.astype(np.float32, copy=False)
    return total
