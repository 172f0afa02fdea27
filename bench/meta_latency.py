"""Latency of ``discover_tools`` with a query over 1,000 tools. A script, not a test.

The catalog: every tool of the two MCP catalogs and of MetaTool (839 real tools), plus
the GitHub catalog again under a ``ghe_`` prefix (a GitHub Enterprise server beside
github.com) and enough MetaTool tools under ``alt_`` to reach 1,000. Tool embeddings are
computed first (:meth:`MetaTools.prepare`); then each of ``--n`` distinct MetaTool
queries goes through ``discover_tools`` on every path (the shipped ones interleaved
query by query, the previous one in passes of its own), each path with its own
never-seen variant of the query (its embedding included), then once more (the query
vector cached).

Printed, in one run: p50/p90 (and CPU p50) of BM25-only discovery (the baseline), of
embedding one query by a direct call with the previous embedder setting (every usable
CPU inside a model run) and the shipped one (one thread per run), of hybrid discovery
with each, and of a repeated query, with ratios to the baseline. Target (issue 15):
shipped hybrid p50 at most 5 ms on this machine.

Run:  uv run python bench/meta_latency.py [--n 200]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
from meta_common import data_dir, load_catalog, load_metatool

from satchel import ToolRegistry, prefixed
from satchel.embed import MiniLMEmbedder
from satchel.meta import MetaTools, Ranking

TARGET = 1000


def build_catalog() -> ToolRegistry:
    """1,000 real tools (see the module doc)."""
    data = data_dir()
    registry = ToolRegistry()
    for name in ("github-mcp-server.tools.json", "livemcpbench.tools.json"):
        load_catalog(registry, data / "mcp-catalogs" / name)
    metatool = ToolRegistry()
    load_metatool(metatool, data / "metatool")
    for tool in metatool:
        if tool.spec.name not in registry:
            registry.register(tool)
    github = ToolRegistry()
    load_catalog(github, data / "mcp-catalogs" / "github-mcp-server.tools.json")
    for tool in prefixed(github, "ghe"):
        registry.register(tool)
    for tool in prefixed(metatool, "alt"):
        if len(registry) >= TARGET:
            break
        registry.register(tool)
    return registry


CPU: list[float] = []
"""CPU milliseconds (all threads of the process) of each call timed last."""


async def timed(calls: list[Callable[[], Awaitable[Any]]]) -> list[float]:
    """Wall-clock milliseconds of each call, run one after another (CPU milliseconds go
    to :data:`CPU`: on a shared, busy machine they show the work itself)."""
    out: list[float] = []
    CPU.clear()
    for call in calls:
        start, cpu = time.perf_counter(), time.process_time()
        await call()
        out.append((time.perf_counter() - start) * 1000)
        CPU.append((time.process_time() - cpu) * 1000)
    return out


def line(label: str, ms: list[float], base: float | None) -> str:
    ordered = sorted(ms)
    p50 = statistics.median(ordered)
    p90 = ordered[int(0.9 * (len(ordered) - 1))]
    ratio = f"{p50 / base:6.1f}x" if base else "   1.0x"
    cpu = statistics.median(CPU)
    return f"   {label:<40} p50 {p50:6.2f} ms  p90 {p90:6.2f} ms  {ratio}  (CPU p50 {cpu:5.2f} ms)"


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=200, help="distinct queries to time")
    args = parser.parse_args()
    registry = build_catalog()
    pairs = json.loads((data_dir() / "metatool" / "queries.dev.json").read_text())
    queries = list(dict.fromkeys(" ".join(p["query"].split()) for p in pairs))
    warm, measured = queries[:20], queries[20 : 20 + args.n]
    embedder = MiniLMEmbedder()
    # The previous default: every usable CPU inside each model run (at most 4).
    cpus = min(len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1, 4)
    all_cpus = MiniLMEmbedder(intra_op_threads=cpus)
    print(f"{len(registry)} tools; {len(measured)} distinct queries; {os.cpu_count()} CPUs")
    hybrid = MetaTools(registry, embedder=embedder)
    start = time.perf_counter()
    await hybrid.prepare()
    print(f"embedded the catalog in {time.perf_counter() - start:.1f} s (once, then cached)")
    previous = MetaTools(registry, embedder=all_cpus)
    start = time.perf_counter()
    await previous.prepare()
    print(f"again with {cpus} threads per run: {time.perf_counter() - start:.1f} s")
    bm25 = MetaTools(registry, embedder=None, ranking=Ranking(mode="bm25"))

    def discover(meta: MetaTools, query: str) -> Callable[[], Awaitable[Any]]:
        return lambda: meta.registry.call("discover_tools", {"query": query})

    def embed(model: MiniLMEmbedder, query: str) -> Callable[[], Awaitable[Any]]:
        async def run() -> None:
            model.embed([query])

        return run

    for q in warm:
        await discover(hybrid, q)()
        await discover(previous, q)()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"load average now: {load:.1f} (wall times grow with it; CPU times much less)")
    # Every path interleaved, query by query, so a change in the machine's load hits
    # them alike; each path gets its own variant of the query, never seen before (not
    # in a query cache), and a later pass repeats them (cached).
    paths: dict[str, Callable[[str], Callable[[], Awaitable[Any]]]] = {
        "BM25 only (baseline)": lambda q: discover(bm25, q),
        f"embedding one query, {cpus} threads per run": lambda q: embed(all_cpus, f"{q} (v0)"),
        "embedding one query, 1 thread (shipped)": lambda q: embed(embedder, f"{q} (v3)"),
        f"hybrid, {cpus} threads per run (previous)": lambda q: discover(previous, f"{q} (v1)"),
        "hybrid, shipped": lambda q: discover(hybrid, f"{q} (v2)"),
        "repeated query, shipped": lambda q: discover(hybrid, f"{q} (v2)"),
    }
    names = list(paths)
    times: dict[str, list[float]] = {name: [] for name in names}
    cpu: dict[str, list[float]] = {name: [] for name in names}
    for chosen in (names[:-1], names[-1:]):
        for q in measured:
            for name in chosen:
                times[name] += await timed([paths[name](q)])
                cpu[name] += CPU
    base = statistics.median(times[names[0]])
    before = statistics.median(times[names[3]])
    for name in names:
        CPU[:] = cpu[name]
        print(line(name, times[name], None if name == names[0] else base))
    after = statistics.median(times["hybrid, shipped"])
    print(f"   shipped / previous hybrid p50: {after / before:.2f}")
    hybrid.close()
    previous.close()
    bm25.close()


if __name__ == "__main__":
    anyio.run(main)
