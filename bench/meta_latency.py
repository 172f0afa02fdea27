"""Latency of ``discover_tools`` with a query over 1,000 tools. A script, not a test.

The catalog: every tool of the two MCP catalogs and of MetaTool (839 real tools), plus
the GitHub catalog again under a ``ghe_`` prefix (a GitHub Enterprise server beside
github.com) and enough MetaTool tools under ``alt_`` to reach 1,000. Tool embeddings are
computed first (:meth:`MetaTools.prepare`); then each of ``--n`` distinct MetaTool
queries goes through ``discover_tools`` once, its embedding included (nothing cached).

Printed, in one run: p50/p90 of BM25-only discovery (the baseline), of embedding one
query alone, of the shipped hybrid ranking, and of a repeated query (query vector
cached), with ratios to the baseline. Target: hybrid p50 at most 10 ms on this machine.

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
    print(f"{len(registry)} tools; {len(measured)} distinct queries; {os.cpu_count()} CPUs")
    hybrid = MetaTools(registry, embedder=embedder)
    start = time.perf_counter()
    await hybrid.prepare()
    print(f"embedded the catalog in {time.perf_counter() - start:.1f} s (once, then cached)")
    bm25 = MetaTools(registry, embedder=None, ranking=Ranking(mode="bm25"))

    def discover(meta: MetaTools, query: str) -> Callable[[], Awaitable[Any]]:
        return lambda: meta.registry.call("discover_tools", {"query": query})

    await timed([discover(hybrid, q) for q in warm])
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"load average now: {load:.1f} (wall times grow with it; CPU times much less)")
    base_ms = await timed([discover(bm25, q) for q in measured])
    base = statistics.median(base_ms)
    print(line("BM25 only (baseline)", base_ms, None))
    embed_ms = await timed(
        [lambda q=q: anyio.to_thread.run_sync(embedder.embed, [q]) for q in measured]
    )
    print(line("embedding one query (thread hop incl.)", embed_ms, base))
    fresh = [f"{q} (again)" for q in measured]  # not in the query cache
    hybrid_ms = await timed([discover(hybrid, q) for q in fresh])
    print(line("hybrid, query embedded (shipped)", hybrid_ms, base))
    cached_ms = await timed([discover(hybrid, q) for q in fresh])
    print(line("hybrid, repeated query (cached)", cached_ms, base))
    hybrid.close()
    bm25.close()


if __name__ == "__main__":
    anyio.run(main)
