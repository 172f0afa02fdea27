"""How ``discover_tools`` ranks tools for a query: BM25 and embeddings, fused.

Three signals are computed for every candidate tool (a catalog is small, so there is
no top-N cut-off before fusion):

* ``bm25``: BM25 over the tool's name words, summary, description and parameter names;
* ``description``: cosine similarity of the query to the tool's description;
* ``name``: cosine similarity of the query to the words of the tool's name;
* ``example``: only when some tool has example requests (written or learned): the best
  cosine of the query to one of a tool's examples (see :mod:`satchel.meta._examples`).

Each signal is normalised over the candidates, then combined with its weight:

* ``zscore``: standardised (mean 0, deviation 1);
* ``minmax``: scaled to [0, 1];
* ``rrf``: reciprocal rank ``1 / (k + rank)`` (a tool with no BM25 match gets no BM25
  term);
* ``convex``: raw values (BM25 divided by its maximum).

:data:`DEFAULT_RANKING` was chosen on the MetaTool benchmark (199 tools, 4,074 dev
queries) by ``bench/meta_retrieval.py --sweep``: each method over a grid of weights
(steps of 0.1, summing to 1; RRF with k = 10, 30, 60), tuned on a fixed random half of
the queries (seed 0) and reported on the other half:

=============================================  ===============  ===============
ranking                                        tuning r@1 / @5  held-out r@1/@5
=============================================  ===============  ===============
BM25 only                                      0.420 / 0.621    0.425 / 0.633
embedding, one vector (name: description)      0.551 / 0.765    0.552 / 0.768
embedding, description + name vectors          0.571 / 0.784    0.562 / 0.790
plain RRF, k=60, BM25 + description, equal     0.523 / 0.724    0.516 / 0.736
best RRF (k=10, 0.3 / 0.5 / 0.2)               0.547 / 0.803    0.536 / 0.811
best min-max (0.2 / 0.6 / 0.2)                 0.596 / 0.810    0.585 / 0.816
best convex (0.1 / 0.6 / 0.3)                  0.597 / 0.809    0.584 / 0.816
z-score 0.2 / 0.6 / 0.2 (the default)          0.595 / 0.809    0.584 / 0.819
=============================================  ===============  ===============

Plain RRF is worse than the embedding alone here; a light BM25 weight on normalised
scores is what helps. The best min-max, convex and z-score settings are within 0.001 on
the tuning half (well inside the noise of 2,000 queries); z-score was taken because it
does not hinge on a single extreme score as min-max does. All 4,074 queries through
``discover_tools``: BM25 0.422 / 0.626, embedding 0.567 / 0.787, default 0.589 / 0.814.
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
        example_weight: Weight of the example signal (the best cosine to one of a
            tool's example requests, written or learned; used only when some tool has
            one, so it leaves a catalog without examples ranked as before).
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
    example_weight: float = Field(default=0.6, ge=0.0)
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
