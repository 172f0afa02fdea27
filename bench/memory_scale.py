"""Scale of the SQLite memory store: archival entries at 10k, 100k and 1M.

For each size it reports insert throughput through the public API, the p50/p95 latency
of BM25-only, vector-only and hybrid ``search`` (hybrid also with the min-max fusion
used before coverage fusion; ratios against BM25-only of the same run), exact vector
search over the same rows (numpy, one matrix-vector product) with the recall@10 of the
store's vector search against it, the one-time build of the vector index, the start of
a fresh process that opens the store and answers one vector search (the index loaded
from ``<db>.vectors/``), and database bytes per entry.

Text is synthetic (Zipf-distributed pseudo-words, 12 to 40 per entry). Vectors are 384
dimensions like MiniLM: by default drawn per text from ``ann_libraries.clustered``'s
distribution (topic structure, nearest-neighbour cosines like real sentence vectors);
``--vectors random`` uses uniform random unit vectors, the worst case for a graph index.
Entries past the first few thousand are bulk-loaded with the store's own insert SQL in
large transactions, so building 1M takes minutes, not hours; databases are kept under
``--dir`` and reused on the next run (resumable), so a size is built once.

Run:
    uv run python bench/memory_scale.py --sizes 10000,100000
    uv run python bench/memory_scale.py --sizes 1000000      # builds ~2.5 GB once
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sqlite3
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import anyio
import numpy as np
import numpy.typing as npt

from satchel.memory import BlockKind, Domain, Fusion, Permission, SearchMode, SQLiteStore
from satchel.memory.sqlite import _blocks
from satchel.memory.sqlite._indexes import index_folder
from satchel.memory.sqlite._messages import BLOCKS, store_vectors

AGENT = "bench"
DIM = 384


def _seed(text: str) -> int:
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "little")


class RandomEmbedder:
    """Random unit vectors, the same for the same text (for latency, not quality)."""

    name = "bench-random"
    dim = DIM

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        out = np.empty((len(texts), DIM), dtype=np.float32)
        for i, text in enumerate(texts):
            row = np.random.default_rng(_seed(text)).standard_normal(DIM)
            out[i] = row / np.linalg.norm(row)
        return out


class ClusteredEmbedder:
    """Unit vectors with topic structure (``ann_libraries.clustered``'s distribution),
    the same for the same text."""

    name = "bench-clustered"
    dim = DIM
    _latent = 48

    def __init__(self) -> None:
        base = np.random.default_rng(0)
        self.mix = base.standard_normal((self._latent, DIM)) / np.sqrt(self._latent)
        self.centres = base.standard_normal((2_000, self._latent))
        mean = base.standard_normal(DIM)
        self.mean = mean / np.linalg.norm(mean)

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        out = np.empty((len(texts), DIM), dtype=np.float32)
        for i, text in enumerate(texts):
            rng = np.random.default_rng(_seed(text))
            z = self.centres[rng.integers(0, 2_000)] + 0.8 * rng.standard_normal(self._latent)
            x = z @ self.mix
            x /= np.linalg.norm(x)
            x += 0.5 * rng.standard_normal(DIM) / np.sqrt(DIM)
            x /= np.linalg.norm(x)
            x += 0.3 * self.mean
            out[i] = x / np.linalg.norm(x)
        return out


EMBEDDERS = {"clustered": ClusteredEmbedder, "random": RandomEmbedder}


def vocabulary(size: int = 30_000) -> list[str]:
    rng = np.random.default_rng(7)
    syllables = [c + v for c in "bcdfghjklmnprstvwz" for v in "aeiou"] + ["th", "ch", "qu"]
    return ["".join(rng.choice(syllables, size=rng.integers(2, 4))) for _ in range(size)]


class TextMaker:
    def __init__(self, seed: int) -> None:
        self.words = vocabulary()
        ranks = np.arange(1, len(self.words) + 1)
        weights = 1.0 / ranks**1.07
        self.p = weights / weights.sum()
        self.rng = np.random.default_rng(seed)

    def texts(self, n: int) -> list[str]:
        lengths = self.rng.integers(12, 41, n)
        picks = self.rng.choice(len(self.words), size=int(lengths.sum()), p=self.p)
        out: list[str] = []
        start = 0
        for length in lengths:
            out.append(" ".join(self.words[i] for i in picks[start : start + length]))
            start += length
        return out


def count_entries(path: Path) -> int:
    if not path.exists():
        return 0
    with sqlite3.connect(path) as conn:
        try:
            return int(conn.execute("SELECT count(*) FROM blocks").fetchone()[0])
        except sqlite3.OperationalError:
            return 0


async def insert_api(store: SQLiteStore, texts: list[str], first: int) -> float:
    """Insert through the public API with 8 concurrent tasks; returns entries/s."""
    started = time.perf_counter()
    queue = list(enumerate(texts, start=first))

    async def worker() -> None:
        while queue:
            i, text = queue.pop()
            await store.create_block(AGENT, f"entry-{i}", text, kind=BlockKind.ARCHIVAL)

    async with anyio.create_task_group() as group:
        for _ in range(8):
            group.start_soon(worker)
    return len(texts) / (time.perf_counter() - started)


def bulk_insert(store: SQLiteStore, texts: list[str], first: int) -> None:
    """The store's own insert SQL, many rows per transaction (bench-only shortcut)."""
    assert store.embedder is not None
    vectors = store.embedder.embed(texts)

    def write(conn: sqlite3.Connection) -> None:
        items: list[tuple[int, str]] = []
        for i, text in enumerate(texts, start=first):
            pk, _ = _blocks.insert(
                conn,
                agent=AGENT,
                label=f"entry-{i}",
                value=text,
                description="",
                kind=BlockKind.ARCHIVAL,
                permission=Permission.READ_WRITE,
                char_limit=None,
                pinned=False,
                tags=(),
                metadata=None,
                hard_limit=True,
            )
            items.append((pk, text))
        store_vectors(conn, BLOCKS, items, vectors)

    store.backend._db.write(write)  # pyright: ignore[reportPrivateUsage]


def database_bytes(path: Path) -> int:
    """The file's size after a checkpoint (WAL folded in)."""
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return sum(os.path.getsize(p) for p in (path, Path(f"{path}-wal")) if os.path.exists(p))


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def measure(store: SQLiteStore, queries: list[str], mode: SearchMode) -> list[float]:
    times: list[float] = []
    for query in queries:
        started = time.perf_counter()
        await store.search(AGENT, query, domains=Domain.ARCHIVAL_MEMORY, limit=10, mode=mode)
        times.append(1000 * (time.perf_counter() - started))
    return times


def exact_recall(
    store: SQLiteStore, path: Path, queries: list[str], found: list[list[str]]
) -> tuple[float, float]:
    """Recall@10 of ``found`` (hit ids per query) against exact cosine search over every
    archival vector, and the p50 of that exact search (one matrix-vector product)."""
    with sqlite3.connect(path) as conn:
        rows = conn.execute(
            "SELECT b.id, e.vec FROM embeddings AS e JOIN blocks AS b ON b.pk = e.item "
            "WHERE e.domain = 0 AND b.kind = 'archival'"
        ).fetchall()
    ids = [row[0] for row in rows]
    matrix = np.frombuffer(b"".join(row[1] for row in rows), dtype=np.float32).reshape(-1, DIM)
    assert store.embedder is not None
    vectors = store.embedder.embed(queries)
    hits, times = 0, []
    for vector, got in zip(vectors, found, strict=True):
        started = time.perf_counter()
        scores = matrix @ vector
        top = np.argpartition(-scores, 10)[:10]
        times.append(1000 * (time.perf_counter() - started))
        hits += len({ids[i] for i in top} & set(got))
    return hits / (10 * len(queries)), statistics.median(times)


def cold_start(path: Path, vectors: str) -> tuple[float, float]:
    """A fresh process opens the store and answers one vector search. Returns (whole
    process wall time, open + first search inside it) in seconds."""
    started = time.perf_counter()
    out = subprocess.run(
        [sys.executable, __file__, "--cold-start", str(path), "--vectors", vectors],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return time.perf_counter() - started, float(out.strip().splitlines()[-1])


async def cold_start_child(path: Path, vectors: str) -> None:
    started = time.perf_counter()
    store = await SQLiteStore.open(path, embedder=EMBEDDERS[vectors]())
    await store.search(AGENT, "warm up", mode="vector", domains=Domain.ARCHIVAL_MEMORY)
    print(time.perf_counter() - started)
    await store.close()


async def run_size(size: int, folder: Path, n_queries: int, vectors: str) -> None:
    path = folder / f"scale-{vectors}-{size}.db"
    have = count_entries(path)
    store = await SQLiteStore.open(path, embedder=EMBEDDERS[vectors]())
    maker = TextMaker(seed=size)
    api_rate = None
    if have < size:
        api_count = min(5_000, size - have) if have == 0 else 0
        if api_count:
            api_rate = await insert_api(store, maker.texts(api_count), have)
            have += api_count
        started, built = time.perf_counter(), 0
        while have < size:
            batch = min(20_000, size - have)
            await anyio.to_thread.run_sync(bulk_insert, store, maker.texts(batch), have)
            have += batch
            built += batch
            print(f"  {size}: {have} entries", flush=True)
        if built:
            print(f"  bulk load: {built / (time.perf_counter() - started):,.0f} entries/s")
    query_maker = TextMaker(seed=size)  # same stream: query words come from real entries
    rng = np.random.default_rng(1)
    queries = [
        " ".join(rng.choice(text.split(), size=3, replace=False))
        for text in query_maker.texts(n_queries)
    ]
    started = time.perf_counter()
    await store.search(AGENT, "warm up", mode="vector")
    first = time.perf_counter() - started  # builds or loads the index, then catches up
    await store.close()  # saves the index beside the file
    process_s, open_s = cold_start(path, vectors)
    store = await SQLiteStore.open(path, embedder=EMBEDDERS[vectors]())
    for mode in ("bm25", "vector", "hybrid"):  # warm caches first; report the steady state
        await measure(store, queries[:50], mode)
    results = {mode: await measure(store, queries, mode) for mode in ("bm25", "vector", "hybrid")}
    found = [
        [
            hit.id
            for hit in await store.search(
                AGENT, q, domains=Domain.ARCHIVAL_MEMORY, limit=10, mode="vector"
            )
        ]
        for q in queries
    ]
    recall, exact_p50 = exact_recall(store, path, queries, found)
    # The fusion before coverage (issue 10), same queries, for the cost of coverage.
    default, store.fusion = store.fusion, Fusion(method="minmax", vector_weight=0.4)
    await measure(store, queries[:50], "hybrid")
    results["minmax"] = await measure(store, queries, "hybrid")
    store.fusion = default
    await store.close()
    size_bytes = database_bytes(path)
    index_bytes = sum(p.stat().st_size for p in index_folder(path).glob("*.usearch"))
    print(f"\n== {size:,} archival entries, {vectors} vectors ==")
    if api_rate is not None:
        print(f"insert via create_block (8 tasks): {api_rate:,.0f} entries/s")
    print(f"first vector search after opening in this process (build or load): {first:.2f} s")
    print(
        f"fresh process: open + first vector search {open_s:.2f} s, whole process {process_s:.2f} s"
    )
    print(f"database: {size_bytes / size:,.0f} bytes/entry ({size_bytes / 1e6:,.0f} MB)")
    print(
        f"vector index files: {index_bytes / size:,.0f} bytes/entry ({index_bytes / 1e6:,.0f} MB)"
    )
    print(f"vector recall@10 against exact search: {recall:.3f}")
    base = statistics.median(results["bm25"])
    vector_p50 = statistics.median(results["vector"])
    print(
        f"  exact: p50 {exact_p50:7.2f} ms (numpy scan alone; the store's vector search "
        f"is x{vector_p50 / exact_p50:5.2f} of it)"
    )
    for mode, times in results.items():
        p50, p95 = statistics.median(times), percentile(times, 0.95)
        print(f"{mode:>7}: p50 {p50:7.2f} ms  p95 {p95:7.2f} ms  (p50 x bm25 {p50 / base:5.2f})")


async def main(sizes: list[int], folder: Path, n_queries: int, vectors: str) -> None:
    for size in sizes:
        await run_size(size, folder, n_queries, vectors)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--dir", type=Path, default=Path("bench/results/memory_scale"))
    parser.add_argument("--vectors", choices=sorted(EMBEDDERS), default="clustered")
    parser.add_argument("--cold-start", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.cold_start:
        anyio.run(cold_start_child, args.cold_start, args.vectors)
        sys.exit(0)
    args.dir.mkdir(parents=True, exist_ok=True)
    anyio.run(main, [int(s) for s in args.sizes.split(",")], args.dir, args.queries, args.vectors)
