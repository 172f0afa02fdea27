"""Finding the right tool: recall of ``discover_tools`` on MetaTool. A script, not a test.

Indexes the 199 tools of ``shared/data/metatool/tools.json`` (raw tools, names
sanitised), runs every query of ``queries.dev.json`` through ``discover_tools``
(``limit=5``) with three rankings in one run (BM25 only, embedding only, the shipped
hybrid), and prints recall@1 and recall@5 of the gold tool, with ratios to the BM25
baseline.

Then, with learning from use (issue 15):

* *warm*: a fixed half of the queries (seed 0) goes through the real path,
  ``discover_tools(query)`` then ``invoke_tool(gold)``, so each pair is learned; the
  other half is measured. The example weight is chosen inside the learning half (learn
  on one quarter, measure on the other) before the held-out half is touched;
* a few-shot curve: 1, 3 and 10 learned queries per tool (``add_learned``), measured
  on the held-out half;
* transfer: ``bench/data/github_requests.jsonl`` (126 requests written before any
  ranking was looked at) over the GitHub MCP catalog, cold, same settings.

``--sweep`` also tunes the fusion: every method (z-score, min-max, RRF with several k,
convex) over a grid of signal weights, chosen on a fixed random half of the queries
(seed 0) and reported on the other half, which is how the default :class:`Ranking` was picked.

Run:  uv run python bench/meta_retrieval.py [--sweep] [--queries N]
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
from meta_common import CachingEmbedder, data_dir, load_catalog, load_metatool

from satchel import ToolRegistry
from satchel.meta import MetaTools, Ranking
from satchel.retrieval import split_identifier
from satchel.tools import MAX_EXAMPLE_CHARS

Matrix = npt.NDArray[np.float32]


async def recall_through_discover(
    meta: MetaTools,
    queries: Sequence[str],
    gold: Sequence[str | Sequence[str]],
    misses: list[int] | None = None,
) -> tuple[float, float, float]:
    """recall@1, recall@5 and the mean milliseconds of one ``discover_tools`` call (a
    gold entry may list several right answers); the positions of the queries whose
    gold is not in the top 5 are appended to ``misses``."""
    hit1 = hit5 = 0
    start = time.perf_counter()
    for position, (query, answer) in enumerate(zip(queries, gold, strict=True)):
        right = {answer} if isinstance(answer, str) else set(answer)
        result = await meta.registry.call("discover_tools", {"query": query, "limit": 5})
        assert result.ok, result.to_text()
        names = [row[0] for row in result.output["tools"]]
        hit1 += bool(right & set(names[:1]))
        hit5 += bool(right & set(names))
        if misses is not None and not right & set(names):
            misses.append(position)
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


MODES = {
    "BM25 only": Ranking(mode="bm25"),
    "embedding only": Ranking(mode="embedding"),
    "shipped (hybrid)": Ranking(),
}


async def feed(meta: MetaTools, queries: Sequence[str], gold: Sequence[str]) -> None:
    """The real path: ``discover_tools(query)``, then a successful ``invoke_tool``."""
    for query, answer in zip(queries, gold, strict=True):
        found = await meta.registry.call("discover_tools", {"query": query, "limit": 5})
        assert found.ok, found.to_text()
        done = await meta.registry.call("invoke_tool", {"tool_name": answer, "parameters": {}})
        assert done.ok, done.to_text()


def table(rows: list[tuple[str, float, float]]) -> None:
    """Rows with ratios to the BM25-only and embedding-only rows."""
    print(f"   {'ranking':<30} {'r@1':>6} {'r@5':>6} {'vs BM25 @5':>11} {'vs emb @5':>10}")
    bm25 = next(r for r in rows if r[0].startswith("BM25"))
    emb = next(r for r in rows if r[0].startswith("embedding"))
    for label, r1, r5 in rows:
        print(f"   {label:<30} {r1:>6.3f} {r5:>6.3f} {r5 / bm25[2]:>10.2f}x {r5 / emb[2]:>9.2f}x")


def explain_misses(
    embedder: CachingEmbedder,
    learned: tuple[list[str], list[str]],
    missed: tuple[list[str], list[str]],
) -> None:
    """Whether the warm misses had a learned neighbour to go by: the tool of the learned
    query nearest to each missed query (cosine), and of its 10 nearest."""
    if not missed[0]:
        return
    near = embedder.embed(missed[0]) @ embedder.embed(learned[0]).T
    tools = np.asarray(learned[1])
    gold = np.asarray(missed[1])
    first = tools[near.argmax(1)] == gold
    ten = [g in set(tools[row]) for g, row in zip(gold, np.argsort(-near, 1)[:, :10], strict=True)]
    print(
        f"   {len(gold)} held-out misses: the nearest learned query was the gold tool's for "
        f"{first.mean():.3f}, one of the 10 nearest for {np.mean(ten):.3f} "
        f"(mean best cosine {near.max(1).mean():.3f})"
    )


async def warm(
    registry: ToolRegistry, embedder: CachingEmbedder, queries: list[str], gold: list[str]
) -> None:
    """Learn half the queries through discover -> invoke; measure the other half."""
    order = np.random.default_rng(0).permutation(len(queries))
    learn_half, test = order[: len(order) // 2], order[len(order) // 2 :]
    inner_a, inner_b = learn_half[: len(learn_half) // 2], learn_half[len(learn_half) // 2 :]

    def pick(rows: npt.NDArray[np.intp]) -> tuple[list[str], list[str]]:
        return [queries[i] for i in rows], [gold[i] for i in rows]

    print("\n## Choosing the example weight inside the learning half")
    print("   (learn on one quarter through discover -> invoke, measure on the other)")
    best = (-1.0, 0.0)
    for weight in (0.3, 0.6, 1.0, 1.5, 2.0):
        meta = MetaTools(registry, embedder=embedder, ranking=Ranking(example_weight=weight))
        await feed(meta, *pick(inner_a))
        r1, r5, _ = await recall_through_discover(meta, *pick(inner_b))
        print(f"   example_weight={weight:<4} r@1 {r1:.3f}  r@5 {r5:.3f}")
        best = max(best, (r5 + r1 / 100, weight))
    print(f"   best: {best[1]} (shipped default: {Ranking().example_weight})")
    print(
        f"\n## Warm: {len(learn_half)} queries learned through discover -> invoke, "
        f"{len(test)} held out"
    )
    rows: list[tuple[str, float, float]] = []
    for label, ranking in MODES.items():
        cold = MetaTools(registry, embedder=embedder, ranking=ranking)
        c1, c5, _ = await recall_through_discover(cold, *pick(test))
        rows.append((f"{label}, cold", c1, c5))
        meta = MetaTools(registry, embedder=embedder, ranking=ranking)
        start = time.perf_counter()
        await feed(meta, *pick(learn_half))
        fed = time.perf_counter() - start
        missed: list[int] = []
        r1, r5, ms = await recall_through_discover(meta, *pick(test), misses=missed)
        pairs = len(await meta.learned())
        rows.append((f"{label}, warm", r1, r5))
        print(f"   {label}: {pairs} pairs learned in {fed:.1f} s; warm discover {ms:.2f} ms/call")
        if ranking == Ranking():
            explain_misses(embedder, pick(learn_half), pick(test[missed]))
    table(rows)
    print("\n## Few-shot: k learned queries per tool (add_learned), held-out half")
    per_tool: dict[str, list[str]] = {}
    for i in learn_half:
        if len(queries[i]) <= MAX_EXAMPLE_CHARS:  # add_learned refuses longer ones
            per_tool.setdefault(gold[i], []).append(queries[i])
    shots: list[tuple[str, float, float]] = []
    for k in (0, 1, 3, 10):
        for label, ranking in MODES.items():
            meta = MetaTools(registry, embedder=embedder, ranking=ranking)
            for tool, asked in per_tool.items():
                for query in asked[:k]:
                    await meta.add_learned(query, tool)
            r1, r5, _ = await recall_through_discover(meta, *pick(test))
            shots.append((f"{label}, k={k}", r1, r5))
    for k in (0, 1, 3, 10):
        print(f"   k = {k}")
        table([row for row in shots if row[0].endswith(f"k={k}")])


async def transfer(embedder: CachingEmbedder) -> None:
    """The GitHub MCP catalog and the fixed request set, cold, same settings."""
    here = __import__("pathlib").Path(__file__).parent
    rows = [json.loads(line) for line in (here / "data" / "github_requests.jsonl").open()]
    registry = ToolRegistry()
    load_catalog(registry, data_dir() / "mcp-catalogs" / "github-mcp-server.tools.json")
    queries = [r["query"] for r in rows]
    gold = [r["tools"] for r in rows]
    embedder.warm(queries)
    print(
        f"\n## Transfer: {len(rows)} requests over the GitHub MCP catalog "
        f"({len(registry)} tools), cold"
    )
    out: list[tuple[str, float, float]] = []
    for label, ranking in MODES.items():
        meta = MetaTools(registry, embedder=embedder, ranking=ranking)
        await meta.prepare()
        r1, r5, _ = await recall_through_discover(meta, queries, gold)
        out.append((label, r1, r5))
    table(out)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sweep", action="store_true", help="tune the fusion as well")
    parser.add_argument("--queries", type=int, default=0, help="use only the first N queries")
    parser.add_argument("--cold-only", action="store_true", help="skip warm, few-shot, transfer")
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
    rankings = MODES
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
    if not args.cold_only:
        await warm(registry, embedder, queries, gold)
        await transfer(embedder)


if __name__ == "__main__":
    anyio.run(main)
