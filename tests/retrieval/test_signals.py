"""Properties of tool search's weighted fusion of aligned signals (pure, no catalog)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from satchel.meta import Ranking, fuse_scores
from satchel.retrieval import Normalisation, fuse_signals

SCORES = st.lists(st.integers(0, 1000), min_size=2, max_size=12).map(
    lambda xs: np.asarray(xs, dtype=np.float32) / 100
)
METHODS: list[Normalisation] = ["zscore", "minmax", "rrf", "convex"]


@pytest.mark.parametrize("method", METHODS)
@given(lexical=SCORES, factor=st.sampled_from([0.5, 2.0, 10.0]))
def test_scaling_the_lexical_signal_does_not_change_the_ranking(
    method: Normalisation, lexical: np.ndarray, factor: float
) -> None:
    cosine = np.linspace(0.9, 0.1, len(lexical)).astype(np.float32)
    first = fuse_signals([(lexical, 0.3, True), (cosine, 0.7, False)], method)
    second = fuse_signals([(lexical * np.float32(factor), 0.3, True), (cosine, 0.7, False)], method)
    assert np.allclose(first, second, atol=1e-5)


def test_a_constant_signal_with_float32_rounding_adds_nothing() -> None:
    """0.11 three times has a float32 deviation of about 6e-8, not 0 (found by the
    property above): it must still count as constant, not be z-scored into +-1."""
    lexical = np.asarray([0.11, 0.11, 0.11], dtype=np.float32)
    assert float(lexical.std()) > 0
    cosine = np.linspace(0.9, 0.1, 3).astype(np.float32)
    alone = fuse_signals([(cosine, 0.7, False)], "zscore")
    assert np.array_equal(
        fuse_signals([(lexical, 0.3, True), (cosine, 0.7, False)], "zscore"), alone
    )


@pytest.mark.parametrize("method", ["zscore", "minmax"])
@given(cosine=SCORES)
def test_a_signal_equal_for_every_candidate_adds_nothing(
    method: Normalisation, cosine: np.ndarray
) -> None:
    flat = np.full(len(cosine), 3.0, dtype=np.float32)
    alone = fuse_signals([(cosine, 0.6, False)], method)
    assert np.array_equal(fuse_signals([(flat, 0.4, True), (cosine, 0.6, False)], method), alone)


def test_meta_fuse_scores_is_fuse_signals_with_the_rankings_settings() -> None:
    bm25 = np.asarray([2.0, 0.0, 1.0], dtype=np.float32)
    cosine = np.asarray([0.1, 0.5, 0.3], dtype=np.float32)
    signals = [(bm25, 0.5, True), (cosine, 0.5, False)]
    ranking = Ranking(fusion="rrf", rrf_k=10.0)
    assert np.array_equal(fuse_scores(signals, ranking), fuse_signals(signals, "rrf", rrf_k=10.0))
    assert fuse_signals([]).shape == (0,)
