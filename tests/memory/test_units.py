"""Units behind the store: query sanitising, fusion, the vector index, the public API."""

from __future__ import annotations

import importlib
import inspect

import numpy as np
import pytest

from satchel.memory import Fusion
from satchel.memory._fts import MAX_TERMS, fts5_match, query_terms
from satchel.memory._fusion import fuse
from satchel.memory._vectors import VectorIndex


def test_query_terms_keeps_words_and_drops_syntax_and_stop_words() -> None:
    assert query_terms('What did "Caroline" research? NEAR/3 AND (x*') == [
        "caroline",
        "research",
        "near",
        "3",
        "x",
    ]
    assert query_terms("🙂 \x00 *** ---") == []
    assert query_terms("the and of") == ["the", "and", "of"]
    assert query_terms("Été CAFÉ café") == ["été", "café"]


def test_query_terms_are_capped_in_number_and_length() -> None:
    many = " ".join(f"w{i}" for i in range(1000))
    assert len(query_terms(many)) == MAX_TERMS
    assert query_terms("a" * 100_000) == ["a" * 64]


def test_fts5_match_quotes_every_term() -> None:
    assert fts5_match(["near", "and"]) == '"near" OR "and"'
    assert fts5_match([]) is None


@pytest.mark.parametrize("method", ["rrf", "minmax", "zscore", "convex"])
def test_every_fusion_method_prefers_a_candidate_both_lists_like(method: str) -> None:
    bm25 = {"both": 5.0, "lexical": 6.0, "weak": 0.5}
    vector = {"both": 0.8, "semantic": 0.82, "weak": 0.1}
    ranked = fuse(bm25, vector, Fusion(method=method, vector_weight=0.5))  # type: ignore[arg-type]
    assert ranked[0][0] == "both"
    assert {key for key, _ in ranked} == {"both", "lexical", "semantic", "weak"}


def test_fusion_weight_zero_or_one_follows_one_list() -> None:
    bm25 = {"a": 3.0, "b": 2.0}
    vector = {"a": 0.1, "b": 0.9}
    assert fuse(bm25, vector, Fusion(method="minmax", vector_weight=0.0))[0][0] == "a"
    assert fuse(bm25, vector, Fusion(method="minmax", vector_weight=1.0))[0][0] == "b"


def _unit(rows: np.ndarray) -> np.ndarray:  # type: ignore[type-arg]
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


def test_vector_index_exact_search_replace_and_remove() -> None:
    rng = np.random.default_rng(0)
    vectors = _unit(rng.standard_normal((100, 16)))
    index = VectorIndex(16)
    index.add(np.arange(100), vectors, np.zeros(100, np.int32))
    ids, scores = index.search(vectors[7], 3)
    assert ids[0] == 7
    assert scores[0] == pytest.approx(1.0, abs=1e-5)
    index.add(np.array([7]), vectors[8:9], np.zeros(1, np.int32))  # 7 now looks like 8
    ids, _ = index.search(vectors[8], 2)
    assert set(ids.tolist()) == {7, 8}
    index.remove(np.array([7, 8, 9999]))
    ids, _ = index.search(vectors[8], 5)
    assert 7 not in ids
    assert 8 not in ids
    assert len(index) == 98


def test_vector_index_filters_by_owner() -> None:
    rng = np.random.default_rng(1)
    vectors = _unit(rng.standard_normal((50, 8)))
    owners = np.array([i % 2 for i in range(50)], dtype=np.int32)
    index = VectorIndex(8)
    index.add(np.arange(50), vectors, owners)
    ids, _ = index.search(vectors[3], 50, owner=0)
    assert len(ids) == 25
    assert all(i % 2 == 0 for i in ids.tolist())


def test_vector_index_switches_to_ivf_when_large_and_keeps_recall() -> None:
    rng = np.random.default_rng(2)
    centers = _unit(rng.standard_normal((200, 32)))
    picks = rng.integers(0, 200, 6_000)
    vectors = _unit(centers[picks] + 0.15 * rng.standard_normal((6_000, 32)))
    index = VectorIndex(32, exact_below=2_000, reduced_dim=16)
    index.add(np.arange(6_000), vectors, np.zeros(6_000, np.int32))
    queries = _unit(centers[:50] + 0.1 * rng.standard_normal((50, 32)))
    recall = []
    for query in queries:
        exact = set(np.argsort(-(vectors @ query))[:10].tolist())
        found, scores = index.search(query, 10)
        assert np.all(np.diff(scores) <= 1e-6)
        recall.append(len(exact & set(found.tolist())) / 10)
    assert index._clusters is not None  # pyright: ignore[reportPrivateUsage]
    assert float(np.mean(recall)) >= 0.9
    extra = _unit(rng.standard_normal((10, 32)))  # rows added after clustering are found too
    index.add(np.arange(6_000, 6_010), extra, np.zeros(10, np.int32))
    assert index.search(extra[4], 1)[0][0] == 6_004


def test_memory_all_is_sorted_complete_and_documented() -> None:
    module = importlib.import_module("satchel.memory")
    exported = list(module.__all__)
    # ruff's order (RUF022): constants, then classes, then functions, each alphabetical
    assert exported == sorted(exported, key=lambda n: (not n.isupper(), not n[0].isupper(), n))
    public = {
        name
        for name, value in vars(module).items()
        if not name.startswith("_") and not inspect.ismodule(value)
    }
    assert public <= set(exported), public - set(exported)
    for name in exported:
        value = getattr(module, name)
        if inspect.isclass(value) or inspect.isfunction(value):
            assert inspect.getdoc(value), name
