"""Finding the right tool: recall of ``discover_tools`` on MetaTool. A script, not a test.

Indexes the 199 tools of ``shared/data/metatool/tools.json`` (raw tools, names
sanitised), runs every query of ``queries.dev.json`` through ``discover_tools``
(``limit=5``) with three rankings in one run (BM25 only, embedding only, the shipped
hybrid), and prints recall@1 and recall@5 of the gold tool, with ratios to the BM25
baseline.

``--sweep`` also tunes the fusion: every method (z-score, min-max, RRF with several k,
convex) over a grid of signal weights, chosen on a fixed random half of the queries
(seed 0) and reported on the other half, which is how the default :class:`Ranking` was picked.

Run:  uv run python bench/meta_retrieval.py [--sweep]
"""

from __future__ import annotations

import argparse
import itertools
import json
import time
from collections.abc import Sequence
from typing import Any

import anyio
import numpy as np
import numpy.typing as npt
from meta_common import CachingEmbedder, data_dir, load_metatool

from satchel import ToolRegistry
from satchel.meta import MetaTools, Ranking
from satchel.meta._text import split_identifier

Matrix = npt.NDArray[np.float32]


async def recall_through_discover(
    meta: MetaTools, queries: Sequence[str], gold: Sequence[str]
) -> tuple[float, float, float]:
    """recall@1, recall@5 and the mean milliseconds of one ``discover_tools`` call."""
    hit1 = hit5 = 0
    start = time.perf_counter()
    for query, answer in zip(queries, gold, strict=True):
        result = await meta.registry.call("discover_tools", {"query": query, "limit": 5})
        assert result.ok, result.to_text()
        names = [row[0] for row in result.output["tools"]]
        hit1 += names[:1] == [answer]
        hit5 += answer in names
    ms = (time.perf_counter() - start) * 1000 / len(queries)
    return hit1 / len(queries), hit5 / len(queries), ms


def row_normalise(scores: Matrix, fusion: str, k: float, lexical: bool) -> Matrix:
    """The per-query normalisation of :func:`satchel.meta.fuse_scores`, for a whole
    matrix (one row per query) at once."""
    if fusion == "zscore":
        std = scores.std(1, keepdims=True)
        out = (scores - scores.mean(1, keepdims=True)) / np.where(std > 1e-9, std, 1.0)
        return np.where(std > 1e-9, out, 0.0).astype(np.float32)
    if fusion == "minmax":
        low, high = scores.min(1, keepdims=True), scores.max(1, keepdims=True)
        span = high - low
        out = (scores - low) / np.where(span > 1e-9, span, 1.0)
        return np.where(span > 1e-9, out, 0.0).astype(np.float32)
    if fusion == "rrf":
        order = np.argsort(-scores, axis=1, kind="stable")
        ranks = np.empty_like(scores)
        np.put_along_axis(ranks, order, np.arange(1, scores.shape[1] + 1, dtype=np.float32), 1)
        out = 1.0 / (k + ranks)
        if lexical:
            out[scores <= 0] = 0.0
        return out.astype(np.float32)
    if not lexical:  # convex: raw cosine
        return scores
    top = scores.max(1, keepdims=True)
    return np.where(top > 0, scores / np.where(top > 0, top, 1.0), 0.0).astype(np.float32)


def recall_of(scores: Matrix, gold: npt.NDArray[np.intp], rows: npt.NDArray[np.intp]):
    """recall@1 and @5 with ties broken by registration order (as the index does)."""
    m, g = scores[rows], gold[rows]
    mine = m[np.arange(len(g)), g][:, None]
    cols = np.arange(m.shape[1])[None, :]
    rank = (m > mine).sum(1) + ((m == mine) & (cols < g[:, None])).sum(1)
    return float((rank < 1).mean()), float((rank < 5).mean())


def sweep(meta: MetaTools, embedder: CachingEmbedder, queries: list[str], gold: list[str]) -> None:
    print("\n## Fusion sweep: tuned on half the queries (seed 0), reported on the other half")
    signals = [meta.index.score(q) for q in queries]
    names = signals[0].names
    g = np.array([names.index(x) for x in gold])
    bm25 = np.stack([s.bm25 for s in signals])
    desc = np.stack([s.description for s in signals if s.description is not None])
    name = np.stack([s.name for s in signals if s.name is not None])
    one_text = [
        f"{' '.join(split_identifier(n))}: {meta.source.get(n).spec.description}"  # type: ignore[union-attr]
        for n in names
    ]
    qvec = embedder.embed(queries)
    single = qvec @ embedder.embed(one_text).T
    order = np.random.default_rng(0).permutation(len(queries))
    tune, test = order[: len(order) // 2], order[len(order) // 2 :]

    def show(label: str, matrix: Matrix) -> None:
        t1, t5 = recall_of(matrix, g, tune)
        h1, h5 = recall_of(matrix, g, test)
        print(f"   {label:<48} tune {t1:.3f} {t5:.3f}   held-out {h1:.3f} {h5:.3f}")

    print(f"   {'ranking':<48} {'r@1':>9} {'r@5':>5}   {'':>8} {'r@1':>5} {'r@5':>5}")
    show("BM25 only", bm25)
    show("embedding, one vector (name: description)", single)
    show("embedding, description vector only", desc)
    results: list[tuple[tuple[float, float], str, Matrix]] = []
    grid = [round(x * 0.1, 1) for x in range(11)]
    for fusion in ("zscore", "minmax", "rrf", "convex"):
        for k in (10.0, 30.0, 60.0) if fusion == "rrf" else (60.0,):
            norm = [
                row_normalise(m, fusion, k, lex)
                for m, lex in ((bm25, True), (desc, False), (name, False))
            ]
            for wb, wd, wn in itertools.product(grid, grid, grid):
                if wd + wn == 0 or abs(wb + wd + wn - 1.0) > 1e-6:
                    continue
                fused = wb * norm[0] + wd * norm[1] + wn * norm[2]
                method = f"rrf k={k:g}" if fusion == "rrf" else fusion
                label = f"{method} bm25={wb} desc={wd} name={wn}"
                results.append((recall_of(fused, g, tune)[::-1], label, fused))
    results.sort(key=lambda r: r[0], reverse=True)
    emb_only = [r for r in results if " bm25=0.0 " in r[1]]
    show(f"embedding, 2 vectors: {emb_only[0][1]}", emb_only[0][2])
    rrf_plain = row_normalise(bm25, "rrf", 60, True) + row_normalise(desc, "rrf", 60, False)
    show("plain RRF k=60, BM25 + description, equal", rrf_plain)
    for fusion in ("rrf", "minmax", "convex", "zscore"):
        best = next(r for r in results if r[1].startswith(fusion))
        show(f"best {best[1]}", best[2])
    print("   top 5 on the tuning half:")
    for _, label, fused in results[:5]:
        show(f"  {label}", fused)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sweep", action="store_true", help="tune the fusion as well")
    parser.add_argument("--queries", type=int, default=0, help="use only the first N queries")
    args = parser.parse_args()
    folder = data_dir() / "metatool"
    registry = ToolRegistry()
    names = load_metatool(registry, folder)
    renamed = {k: v for k, v in names.items() if k != v}
    print(f"MetaTool: {len(registry)} tools (renamed: {renamed or 'none'})")
    pairs: list[dict[str, Any]] = json.loads((folder / "queries.dev.json").read_text())
    if args.queries:
        pairs = pairs[: args.queries]
    queries = [" ".join(p["query"].split()) for p in pairs]
    gold = [names[p["tool"]] for p in pairs]
    embedder = CachingEmbedder()
    start = time.perf_counter()
    embedder.warm(queries)
    print(f"embedded {len(set(queries))} queries in {time.perf_counter() - start:.1f} s (batched)")
    rankings = {
        "BM25 only": Ranking(mode="bm25"),
        "embedding only": Ranking(mode="embedding"),
        "shipped (hybrid)": Ranking(),
    }
    print(f"\n## {len(queries)} queries through discover_tools (limit=5)")
    head = f"{'ranking':<18} {'recall@1':>9} {'recall@5':>9} {'vs BM25 @1':>11} {'@5':>6}"
    print(f"   {head} {'ms/call':>8}")
    base: tuple[float, float] | None = None
    meta: MetaTools | None = None
    for label, ranking in rankings.items():
        meta = MetaTools(registry, embedder=embedder, ranking=ranking)
        await meta.prepare()
        r1, r5, ms = await recall_through_discover(meta, queries, gold)
        base = base or (r1, r5)
        ratios = f"{r1 / base[0]:>10.2f}x {r5 / base[1]:>5.2f}x"
        print(f"   {label:<18} {r1:>9.3f} {r5:>9.3f} {ratios} {ms:>8.2f}")
    print(f"   shipped ranking: {Ranking()!r}")
    if args.sweep and meta is not None:
        sweep(meta, embedder, queries, gold)


if __name__ == "__main__":
    anyio.run(main)
