"""Where the time goes on a store built by ``bench/memory_scale.py`` (issue 15 part 3).

Three measurements, each printing one line per run so two versions of satchel can be
alternated on copies of the same file (the previous one from ``git archive <commit> src``
put first on ``PYTHONPATH``):

* ``start DB [--evict]``: in this fresh process, open the store and answer one vector
  search, with the steps of the vector index's first sync (load of the mapped files,
  replay of the log, size check). ``--evict`` first drops the store's own files from
  the page cache (``posix_fadvise(DONTNEED)``, nothing else), as after a reboot.
* ``inserts DB N``: ``create_block`` throughput with 8 tasks (``memory_scale.insert_api``),
  N new entries (the store grows by N).
* ``hybrid DB SIZE``: one hybrid query split into steps: timers around the searcher's
  helpers, p50 over memory_scale's 200 queries for that SIZE after 50 warm-ups.
* ``written DB``: another process adds one entry (no search, so it never loads the
  index), then this one opens the store, answers one vector search and closes; prints
  the time of each and whether the index was copied out of its mapped files.

Run (after ``uv run python bench/memory_scale.py --sizes 1000000 --dir /tmp/scale1m``):
    uv run python bench/memory_scale_steps.py start /tmp/scale1m/scale-clustered-1000000.db --evict
    uv run python bench/memory_scale_steps.py inserts /tmp/scale1m/scale-clustered-1000000.db 2000
    uv run python bench/memory_scale_steps.py hybrid /tmp/scale1m/scale-clustered-1000000.db 1000000
    uv run python bench/memory_scale_steps.py written /tmp/scale1m/scale-clustered-1000000.db
"""

from __future__ import annotations

import argparse
import collections
import glob
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import numpy as np
from memory_scale import AGENT, ClusteredEmbedder, TextMaker, insert_api

from satchel.memory import Domain, SQLiteStore
from satchel.memory.sqlite import _backend, _context_sql, _search_sql, _searcher
from satchel.memory.sqlite._indexes import StoredIndexes
from satchel.retrieval import AnnIndex

spent: collections.Counter[str] = collections.Counter()


def timed(owner: Any, name: str, label: str) -> None:
    """Replace ``owner.name`` by a wrapper adding its time to ``spent[label]``."""
    original: Callable[..., Any] = getattr(owner, name)

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            spent[label] += time.perf_counter() - started

    setattr(owner, name, wrapper)


def evict(path: Path) -> None:
    for name in [str(path), f"{path}-wal", f"{path}-shm", *glob.glob(f"{path}.vectors/*")]:
        if os.path.exists(name):
            fd = os.open(name, os.O_RDONLY)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            os.close(fd)


async def start(path: Path) -> None:
    for step in ("_load", "_catch_up", "_verify"):
        timed(StoredIndexes, step, step)
    started = time.perf_counter()
    store = await SQLiteStore.open(path, embedder=ClusteredEmbedder())
    opened = time.perf_counter() - started
    started = time.perf_counter()
    await store.search(AGENT, "warm up", mode="vector", domains=Domain.ARCHIVAL_MEMORY)
    first = time.perf_counter() - started
    await store.close()
    steps = ", ".join(f"{k} {1000 * v:.0f} ms" for k, v in spent.items())
    total = opened + first
    print(f"open {opened:.3f} s + first vector search {first:.3f} s ({steps}) = {total:.3f} s")


async def inserts(path: Path, n: int) -> None:
    store = await SQLiteStore.open(path, embedder=ClusteredEmbedder())
    first = 10**9 + (time.time_ns() // 1000) % 10**12 * 10**4  # labels no earlier run used
    rate = await insert_api(store, TextMaker(seed=first % 1000).texts(n), first)
    await store.close()
    print(f"create_block, 8 tasks: {rate:,.0f} entries/s")


async def written(path: Path) -> None:
    started = time.perf_counter()
    store = await SQLiteStore.open(path, embedder=ClusteredEmbedder())
    await store.search(AGENT, "warm up", mode="vector", domains=Domain.ARCHIVAL_MEMORY)
    first = time.perf_counter() - started
    indexes = store.backend._indexes  # pyright: ignore[reportPrivateUsage]
    copied = indexes is not None and not all(i.viewed for i in indexes.indexes.values())
    started = time.perf_counter()
    await store.close()
    closed = time.perf_counter() - started
    print(
        f"after another process's write: open + first vector search {first:.3f} s, "
        f"close {closed:.3f} s, index copied into memory: {copied}"
    )


async def hybrid(path: Path, size: int) -> None:
    for name in (
        "bm25_query",
        "bm25_candidates",
        "_vector_candidates",
        "context_shares",
        "lexical_coverage",
        "keep_matching",
        "rank",
        "_hydrate",
    ):
        timed(_searcher, name, name)
    for name in ("neighbour_pks", "closeness", "could_gain", "term_statistics"):
        timed(_context_sql, name, f"  context: {name}")
    timed(_context_sql, "matched_terms", "  context: matched_terms")
    timed(_search_sql, "matched_terms", "  coverage: matched_terms")
    timed(AnnIndex, "search", "  index.search (graph walk)")
    timed(AnnIndex, "vectors", "  index.vectors (f16 rows)")
    timed(_backend, "run_search", "run_search (all)")
    store = await SQLiteStore.open(path, embedder=ClusteredEmbedder())
    rng = np.random.default_rng(1)
    queries = [
        " ".join(rng.choice(text.split(), size=3, replace=False))
        for text in TextMaker(seed=size).texts(200)
    ]
    for query in queries[:50]:
        await store.search(AGENT, query, domains=Domain.ARCHIVAL_MEMORY, mode="hybrid")
    per_step: dict[str, list[float]] = collections.defaultdict(list)
    totals: list[float] = []
    for query in queries:
        spent.clear()
        started = time.perf_counter()
        await store.search(AGENT, query, domains=Domain.ARCHIVAL_MEMORY, mode="hybrid")
        totals.append(time.perf_counter() - started)
        for label in {*spent, *per_step}:
            per_step[label].append(spent.get(label, 0.0))
    await store.close()
    print(f"store.search (hybrid): p50 {1000 * statistics.median(totals):.2f} ms")
    for label, values in sorted(per_step.items(), key=lambda kv: -statistics.median(kv[1])):
        print(f"  {label:30s} p50 {1000 * statistics.median(values):6.2f} ms")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=["start", "inserts", "hybrid", "written"])
    parser.add_argument("db", type=Path)
    parser.add_argument("n", type=int, nargs="?", default=2_000)
    parser.add_argument("--evict", action="store_true")
    args = parser.parse_args()
    if args.what == "start":
        if args.evict:
            evict(args.db)
        anyio.run(start, args.db)
    elif args.what == "inserts":
        anyio.run(inserts, args.db, args.n)
    elif args.what == "written":
        subprocess.run([sys.executable, __file__, "inserts", str(args.db), "1"], check=True)
        anyio.run(written, args.db)
    else:
        anyio.run(hybrid, args.db, args.n)
