"""How ``discover_tools`` ranks tools for a query: BM25 and embeddings, fused.

Up to four signals are computed for every candidate tool (a catalog is small, so there
is no top-N cut-off before fusion):

* ``bm25``: BM25 over the tool's name words, summary, description and parameter names;
* ``description``: cosine similarity of the query to the tool's description;
* ``name``: cosine similarity of the query to the words of the tool's name;
* ``example``: only when some tool has example requests (written or learned): the best
  cosine of the query to one of a tool's examples (see :mod:`satchel.meta._examples`).

Each signal is normalised over the candidates and summed with its weight
(:func:`satchel.retrieval.fuse_signals`). :data:`DEFAULT_RANKING` was chosen on the
MetaTool benchmark by ``bench/meta_retrieval.py --sweep``, tuned on a fixed half of the
queries and reported on the other half: a light BM25 weight on z-scored signals beats
either signal alone, where plain reciprocal-rank fusion is worse than the embedding
alone. The settings are in :mod:`satchel.retrieval._settings`; the figures in
``bench/README.md`` ("Meta-tools").
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, ConfigDict, Field

from satchel.retrieval import (
    BM25_B,
    BM25_K1,
    RRF_K,
    TOOL_BM25_WEIGHT,
    TOOL_DESCRIPTION_WEIGHT,
    TOOL_EXAMPLE_WEIGHT,
    TOOL_NAME_REPEAT,
    TOOL_NAME_WEIGHT,
    TOOL_NORMALISATION,
    Normalisation,
    fuse_signals,
)

__all__ = ["DEFAULT_RANKING", "Ranking", "fuse_scores"]

_Scores = npt.NDArray[np.float32]


class Ranking(BaseModel):
    """How :class:`~satchel.meta.CatalogIndex` ranks tools for a query.

    Attributes:
        mode: ``hybrid`` (all signals), ``bm25`` only, or ``embedding`` only (the two
            cosine signals). Without an embedder every mode is ``bm25``.
        fusion: How each signal is normalised: ``zscore``, ``minmax``, ``rrf`` or
            ``convex`` (:data:`satchel.retrieval.Normalisation`).
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
    fusion: Normalisation = TOOL_NORMALISATION
    bm25_weight: float = Field(default=TOOL_BM25_WEIGHT, ge=0.0)
    description_weight: float = Field(default=TOOL_DESCRIPTION_WEIGHT, ge=0.0)
    name_weight: float = Field(default=TOOL_NAME_WEIGHT, ge=0.0)
    example_weight: float = Field(default=TOOL_EXAMPLE_WEIGHT, ge=0.0)
    rrf_k: float = Field(default=RRF_K, gt=0.0)
    k1: float = Field(default=BM25_K1, gt=0.0)
    b: float = Field(default=BM25_B, ge=0.0, le=1.0)
    name_repeat: int = Field(default=TOOL_NAME_REPEAT, ge=1, le=10)


DEFAULT_RANKING = Ranking()
"""The ranking satchel uses unless told otherwise (see the module doc)."""


def fuse_scores(
    signals: Sequence[tuple[_Scores, float, bool]], ranking: Ranking = DEFAULT_RANKING
) -> _Scores:
    """One score per candidate from several signals, normalised as ``ranking`` says
    (:func:`satchel.retrieval.fuse_signals`).

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
    return fuse_signals(signals, ranking.fusion, rrf_k=ranking.rrf_k)
