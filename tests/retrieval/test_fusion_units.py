"""Every hybrid fusion method on small hand-made candidate lists."""

from __future__ import annotations

import pytest

from satchel.retrieval import HybridFusion, fuse_hybrid


@pytest.mark.parametrize("method", ["rrf", "minmax", "zscore", "convex"])
def test_every_fusion_method_prefers_a_candidate_both_lists_like(method: str) -> None:
    bm25 = {"both": 5.0, "lexical": 6.0, "weak": 0.5}
    vector = {"both": 0.8, "semantic": 0.82, "weak": 0.1}
    ranked = fuse_hybrid(bm25, vector, HybridFusion(method=method, vector_weight=0.5))  # type: ignore[arg-type]
    assert ranked[0][0] == "both"
    assert {key for key, _ in ranked} == {"both", "lexical", "semantic", "weak"}


def test_fusion_weight_zero_or_one_follows_one_list() -> None:
    bm25 = {"a": 3.0, "b": 2.0}
    vector = {"a": 0.1, "b": 0.9}
    assert fuse_hybrid(bm25, vector, HybridFusion(method="minmax", vector_weight=0.0))[0][0] == "a"
    assert fuse_hybrid(bm25, vector, HybridFusion(method="minmax", vector_weight=1.0))[0][0] == "b"
