"""Named fusion signals (issue 29, item 7) rank exactly as the three fixed ones did:
on a real conversation (LoCoMo's first dev conversation, or the personal facts where
the benchmark data is absent) searched through a real SQLite store with the local
embedder, every method's hits are in the order, and with the scores, that the fusion
before named signals gives for the same candidates."""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping
from pathlib import Path
from typing import TypeVar

import pytest

from satchel.embed import default_embedder
from satchel.memory import Domain, SearchHit, SQLiteStore
from satchel.retrieval import HybridFusion, fuse_hybrid, fuse_named

from .test_search_context_lazy import conversation

pytestmark = pytest.mark.anyio

_K = TypeVar("_K", bound=Hashable)


def fuse_before(
    bm25: Mapping[_K, float],
    vector: Mapping[_K, float],
    fusion: HybridFusion,
    coverage: Mapping[_K, float] | None = None,
) -> list[tuple[_K, float]]:
    """``fuse_hybrid`` as it was before named signals (commit cf1a98a), kept verbatim
    as the reference."""
    keys = list(dict.fromkeys([*bm25, *vector]))
    w = fusion.vector_weight
    fused: dict[_K, float] = {}

    def ranks(scores: Mapping[_K, float]) -> dict[_K, int]:
        ordered = sorted(scores.items(), key=lambda item: -item[1])
        return {key: position for position, (key, _) in enumerate(ordered, start=1)}

    def minmax(scores: Mapping[_K, float]) -> dict[_K, float]:
        if not scores:
            return {}
        low, high = min(scores.values()), max(scores.values())
        span = high - low
        if span <= 0:
            return dict.fromkeys(scores, 1.0)
        return {key: (value - low) / span for key, value in scores.items()}

    def zscore(scores: Mapping[_K, float]) -> tuple[dict[_K, float], float]:
        if not scores:
            return {}, 0.0
        values = list(scores.values())
        mean = sum(values) / len(values)
        deviation = math.sqrt(sum((v - mean) ** 2 for v in values) / len(values)) or 1.0
        standard = {key: (value - mean) / deviation for key, value in scores.items()}
        return standard, min(standard.values())

    match fusion.method:
        case "coverage":
            if coverage is None:
                top = max(bm25.values(), default=0.0)
                coverage = {k: s / top if top > 0 else 0.0 for k, s in bm25.items()}
            for key in keys:
                fused[key] = (1 - w) * coverage.get(key, 0.0) + w * vector.get(key, 0.0)
        case "rrf":
            rank_b, rank_v = ranks(bm25), ranks(vector)
            for key in keys:
                score = 0.0
                if key in rank_b:
                    score += (1 - w) / (fusion.k + rank_b[key])
                if key in rank_v:
                    score += w / (fusion.k + rank_v[key])
                fused[key] = score
        case "minmax":
            norm_b, norm_v = minmax(bm25), minmax(vector)
            for key in keys:
                fused[key] = (1 - w) * norm_b.get(key, 0.0) + w * norm_v.get(key, 0.0)
        case "zscore":
            (z_b, floor_b), (z_v, floor_v) = zscore(bm25), zscore(vector)
            for key in keys:
                fused[key] = (1 - w) * z_b.get(key, floor_b) + w * z_v.get(key, floor_v)
        case "convex":
            top = max(bm25.values(), default=0.0) or 1.0
            for key in keys:
                fused[key] = (1 - w) * bm25.get(key, 0.0) / top + w * vector.get(key, 0.0)
    return sorted(fused.items(), key=lambda item: -item[1])


METHODS = ["coverage", "rrf", "minmax", "zscore", "convex"]


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
async def searched(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[list[SearchHit]]]:
    """Every question's hits (all candidates: limit 1000) under each method."""
    turns, questions = conversation()
    questions = questions[:80]  # enough candidates to see ties, in a minute
    path: Path = tmp_path_factory.mktemp("fusion") / "m.db"
    store = await SQLiteStore.open(path, embedder=default_embedder())
    try:
        for text, when in turns:
            await store.add_message("ada", "user", text, created_at=when)
        out: dict[str, list[list[SearchHit]]] = {}
        for method in METHODS:
            store.fusion = HybridFusion(method=method)  # type: ignore[arg-type]
            out[method] = [
                await store.search("ada", q, domains=Domain.CONVERSATIONS, limit=1000)
                for q in questions
            ]
        return out
    finally:
        await store.close()


def signals_of(hits: list[SearchHit]) -> dict[str, dict[str, float]]:
    return {
        "bm25": {h.id: h.bm25_score for h in hits if h.bm25_score is not None},
        "vector": {h.id: h.vector_score for h in hits if h.vector_score is not None},
        "coverage": {h.id: h.coverage for h in hits if h.coverage is not None},
    }


def score_before(hit: SearchHit, hits: list[SearchHit], fusion: HybridFusion) -> float:
    """The hit's score by the fusion before named signals, from its own diagnostics (the
    ranks the store gave it, and the best BM25 score among the candidates)."""
    w = fusion.vector_weight
    match fusion.method:
        case "coverage":
            return (1 - w) * (hit.coverage or 0.0) + w * (hit.vector_score or 0.0)
        case "rrf":
            score = 0.0
            if hit.bm25_rank is not None:
                score += (1 - w) / (fusion.k + hit.bm25_rank)
            if hit.vector_rank is not None:
                score += w / (fusion.k + hit.vector_rank)
            return score
        case _:  # convex
            top = max((h.bm25_score for h in hits if h.bm25_score is not None), default=0.0)
            top = top or 1.0
            return (1 - w) * (hit.bm25_score or 0.0) / top + w * (hit.vector_score or 0.0)


@pytest.mark.parametrize("method", ["coverage", "rrf", "convex"])
async def test_the_store_scores_every_candidate_as_before(
    method: str, searched: dict[str, list[list[SearchHit]]]
) -> None:
    fusion = HybridFusion(method=method)  # type: ignore[arg-type]
    compared = 0
    for hits in searched[method]:
        assert [h.score for h in hits] == [score_before(h, hits, fusion) for h in hits]
        compared += len(hits)
    assert compared > 800  # the questions found many candidates


@pytest.mark.parametrize("method", METHODS)
async def test_each_method_orders_a_real_conversations_candidates_as_before(
    method: str, searched: dict[str, list[list[SearchHit]]]
) -> None:
    # The same candidate maps, ties included, ranked by the fusion before and after.
    fusion = HybridFusion(method=method)  # type: ignore[arg-type]
    for hits in searched[method]:
        signals = signals_of(hits)
        coverage = signals["coverage"] if method == "coverage" else None
        before = fuse_before(signals["bm25"], signals["vector"], fusion, coverage)
        assert fuse_hybrid(signals["bm25"], signals["vector"], fusion, coverage) == before
        named: dict[str, Mapping[str, float]] = {
            "bm25": signals["bm25"],
            "vector": signals["vector"],
        }
        if coverage is not None:
            named["coverage"] = coverage
        candidates = [*signals["bm25"], *signals["vector"]]
        assert fuse_named(named, fusion, candidates=candidates) == before


@pytest.mark.parametrize("weight", [0.0, 0.3, 0.7, 1.0])
@pytest.mark.parametrize("method", METHODS)
async def test_every_vector_weight_ranks_as_before(
    method: str, weight: float, searched: dict[str, list[list[SearchHit]]]
) -> None:
    fusion = HybridFusion(method=method, vector_weight=weight)  # type: ignore[arg-type]
    for hits in searched["coverage"]:
        signals = signals_of(hits)
        for coverage in (signals["coverage"], None):
            assert fuse_hybrid(signals["bm25"], signals["vector"], fusion, coverage) == (
                fuse_before(signals["bm25"], signals["vector"], fusion, coverage)
            )


async def test_a_fourth_signal_is_one_name_and_one_weight(
    searched: dict[str, list[list[SearchHit]]],
) -> None:
    hits = next(h for h in searched["coverage"] if len(h) > 20)
    signals: dict[str, Mapping[str, float]] = dict(signals_of(hits))
    # Later turns first: a recency signal on the same candidates.
    order = sorted(hits, key=lambda h: h.created_at)
    signals["recency"] = {h.id: i / len(order) for i, h in enumerate(order)}
    plain = fuse_named(signals, HybridFusion())
    assert [key for key, _ in plain] == [h.id for h in hits]  # unweighted: ignored
    recent = fuse_named(signals, HybridFusion(weights={"recency": 1000.0}))
    assert recent[0][0] == order[-1].id
