"""Units behind the store: query sanitising, fusion, the public API (the vector index
is tested in ``tests/retrieval``)."""

from __future__ import annotations

import importlib
import inspect

import pytest

from satchel.memory import Fusion
from satchel.memory._fts import MAX_TERMS, fts5_match, query_terms
from satchel.memory._fusion import fuse


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
