"""Old against new vector index on one store built by ``memory_scale.py``: the same
database file and queries, with whichever satchel is first on ``PYTHONPATH``.

It prints inserts through ``create_block`` (8 tasks, a scratch store), the time from
opening the store to its first vector search (the old IVF was rebuilt here; the HNSW
index is loaded from ``<db>.vectors/``), BM25/vector/hybrid p50 and p95, and vector
recall@10 against exact search. Run old and new alternately, on a copy for the old one:

    uv run python bench/memory_scale.py --sizes 100000 --dir /tmp/scale
    git archive 0de3065 src | tar -x -C /tmp/old        # the commit before issue 15
    cp /tmp/scale/scale-clustered-100000.db /tmp/old100k.db
    PYTHONPATH=/tmp/old/src uv run python bench/memory_scale_compare.py /tmp/old100k.db 100000
    uv run python bench/memory_scale_compare.py /tmp/scale/scale-clustered-100000.db 100000
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
import types
from pathlib import Path

import anyio
import numpy as np

try:
    import satchel.memory.sqlite._indexes
except ImportError:  # an older satchel: memory_scale only needs index_folder's name
    sys.modules["satchel.memory.sqlite._indexes"] = types.SimpleNamespace(index_folder=lambda p: p)

import memory_scale as ms

import satchel
from satchel.memory import Domain, SQLiteStore


async def main(path: Path, size: int) -> None:
    print("satchel from", satchel.__file__)
    with tempfile.TemporaryDirectory() as tmp:
        scratch = await SQLiteStore.open(Path(tmp) / "i.db", embedder=ms.ClusteredEmbedder())
        rate = await ms.insert_api(scratch, ms.TextMaker(seed=5).texts(3000), 0)
        await scratch.close()
    print(f"insert via create_block (8 tasks): {rate:,.0f} entries/s")
    started = time.perf_counter()
    store = await SQLiteStore.open(path, embedder=ms.ClusteredEmbedder())
    await store.search(ms.AGENT, "warm up", mode="vector")
    print(f"open -> first vector search {time.perf_counter() - started:.2f} s")
    rng = np.random.default_rng(1)
    queries = [
        " ".join(rng.choice(text.split(), size=3, replace=False))
        for text in ms.TextMaker(seed=size).texts(200)
    ]
    for mode in ("bm25", "vector", "hybrid"):
        await ms.measure(store, queries[:50], mode)
    for mode in ("bm25", "vector", "hybrid"):
        times = await ms.measure(store, queries, mode)
        p50, p95 = statistics.median(times), ms.percentile(times, 0.95)
        print(f"{mode:>7}: p50 {p50:7.2f} ms  p95 {p95:7.2f} ms")
    found = [
        [
            hit.id
            for hit in await store.search(
                ms.AGENT, q, domains=Domain.ARCHIVAL_MEMORY, limit=10, mode="vector"
            )
        ]
        for q in queries
    ]
    recall, exact = ms.exact_recall(store, path, queries, found)
    print(f"recall@10 {recall:.3f}; exact p50 {exact:.2f} ms")
    await store.close()


if __name__ == "__main__":
    anyio.run(main, Path(sys.argv[1]), int(sys.argv[2]))
