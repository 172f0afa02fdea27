"""Weighted fusion of several score signals over the same candidates (tool search).

A tool catalog is small, so every signal is computed for every candidate (no top-N
cut-off before fusion), and the signals are aligned arrays. Each is normalised over
the candidates, then summed with its weight; :data:`Normalisation` names how:

* ``zscore``: standardised (mean 0, deviation 1);
* ``minmax``: scaled to [0, 1];
* ``rrf``: reciprocal rank ``1 / (k + rank)`` (a candidate with no lexical match gets no
  lexical term);
* ``convex``: raw values (the lexical signal divided by its maximum).

Why z-score for tool search: on MetaTool a light BM25 weight on normalised scores is
what helps; plain RRF is worse than the embedding alone, and the best min-max, convex
and z-score settings tie within the noise, z-score not hinging on one extreme score as
min-max does (``bench/README.md``, "Meta-tools"). Memory search fuses differently
(:mod:`satchel.retrieval._hybrid`): there the candidate lists are cut, and a store may
hold five entries, where normalising over the candidates turns noise into signal.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np
import numpy.typing as npt

from satchel.retrieval._settings import RRF_K, TOOL_NORMALISATION

__all__ = ["Normalisation", "fuse_signals"]

_Scores = npt.NDArray[np.float32]

Normalisation = Literal["rrf", "minmax", "zscore", "convex"]
"""How :func:`fuse_signals` puts each signal on a common scale (see the module doc)."""


def _normalise(scores: _Scores, method: Normalisation, *, k: float, lexical: bool) -> _Scores:
    match method:
        case "zscore":
            deviation, mean = float(scores.std()), float(scores.mean())
            # Relative: float32 rounding gives a constant signal such as 0.11 three
            # times a deviation of 6e-8, which z-scoring would blow up to +-1.
            if deviation <= 1e-6 * max(1.0, abs(mean)):
                return np.zeros_like(scores)
            return (scores - mean) / deviation
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


def fuse_signals(
    signals: Sequence[tuple[_Scores, float, bool]],
    method: Normalisation = TOOL_NORMALISATION,
    *,
    rrf_k: float = RRF_K,
) -> _Scores:
    """One score per candidate from several signals.

    Args:
        signals: ``(scores, weight, lexical)`` per signal, each ``scores`` aligned with
            the candidates; ``lexical`` marks BM25 (where 0 means "no match").
        method: The normalisation (see the module doc).
        rrf_k: The RRF constant (``rrf`` only).

    Returns:
        The weighted sum of the normalised signals; higher is better.

    Example:
        >>> bm25 = np.array([2.0, 0.0], "f4")
        >>> cosine = np.array([0.1, 0.5], "f4")
        >>> fuse_signals([(bm25, 0.5, True), (cosine, 0.5, False)]).shape
        (2,)
    """
    if not signals:
        return np.zeros(0, dtype=np.float32)
    total = np.zeros(len(signals[0][0]), dtype=np.float32)
    for scores, weight, lexical in signals:
        if weight and len(scores):
            normal = _normalise(scores, method, k=rrf_k, lexical=lexical)
            total += np.float32(weight) * normal.astype(np.float32, copy=False)
    return total
