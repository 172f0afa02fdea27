"""ANN libraries that install here from PyPI, measured on this machine (issue 15, part 3).

For each library: build time (2 threads), save, load from disk (a fresh process start
would do exactly this), recall@10 against exact search and p50 of one query (1 thread),
on the same vectors. Only ``usearch`` is a satchel dependency; the others are measured
with ``uv run --with``:

    uv run --with hnswlib --with faiss-cpu --with sqlite-vec \\
        python bench/ann_libraries.py --sizes 100000
    uv run python bench/ann_libraries.py --sizes 1000000 --libraries usearch-i8

Vectors are 384-dimensional unit vectors (MiniLM's width) with a 48-dimensional
structure (2,000 topics), isotropic noise and a shared mean direction, calibrated so that
a query's nearest neighbour has cosine ~0.61, its 10th ~0.48 and a random pair ~0.08, as
with real sentence embeddings (``--random`` uses uniform random unit
vectors instead, the worst case for any graph index). Queries are new points of the
same distribution.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

DIM = 384
F32 = npt.NDArray[np.float32]


def clustered(n: int, seed: int, *, random: bool = False) -> F32:
    """``n`` unit vectors (see the module docstring)."""
    rng = np.random.default_rng(seed)
    if random:
        out = rng.standard_normal((n, DIM), dtype=np.float32)
        out /= np.linalg.norm(out, axis=1, keepdims=True)
        return out
    base = np.random.default_rng(0)
    latent = 48
    mix = base.standard_normal((latent, DIM), dtype=np.float32) / np.sqrt(latent)
    centres = base.standard_normal((2_000, latent), dtype=np.float32)
    mean = base.standard_normal(DIM).astype(np.float32)
    mean /= np.linalg.norm(mean)
    out = np.empty((n, DIM), dtype=np.float32)
    for start in range(0, n, 100_000):
        m = min(100_000, n - start)
        topic = rng.integers(0, len(centres), m)
        x = (centres[topic] + 0.8 * rng.standard_normal((m, latent), dtype=np.float32)) @ mix
        x /= np.linalg.norm(x, axis=1, keepdims=True)
        x += 0.5 * rng.standard_normal((m, DIM), dtype=np.float32) / np.sqrt(DIM)
        x /= np.linalg.norm(x, axis=1, keepdims=True)
        x += 0.3 * mean
        out[start : start + m] = x / np.linalg.norm(x, axis=1, keepdims=True)
    return out


def exact_top(data: F32, queries: F32, k: int) -> npt.NDArray[np.int64]:
    scores = queries @ data.T
    top = np.argpartition(-scores, k, axis=1)[:, :k]
    return top.astype(np.int64)


def recall(found: list[list[int]], truth: npt.NDArray[np.int64]) -> float:
    hits = sum(len(set(f[:10]) & set(t.tolist())) for f, t in zip(found, truth, strict=True))
    return hits / (10 * len(truth))


class Result:
    def __init__(self, name: str) -> None:
        self.name = name
        self.build = self.save = self.load = 0.0
        self.disk = 0
        self.rows: list[tuple[str, float, float]] = []  # (setting, recall, p50 ms)


def timed_queries(
    search: Callable[[F32], list[int]], queries: F32
) -> tuple[list[list[int]], float]:
    for q in queries[:20]:
        search(q)
    found: list[list[int]] = []
    times: list[float] = []
    for q in queries:
        started = time.perf_counter()
        found.append(search(q))
        times.append(1000 * (time.perf_counter() - started))
    return found, statistics.median(times)


def folder_bytes(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def run_usearch(data: F32, queries: F32, truth: Any, where: Path, dtype: str) -> Result:
    from usearch.index import Index

    result = Result(f"usearch {dtype}")
    keys = np.arange(len(data), dtype=np.uint64)
    started = time.perf_counter()
    index = Index(ndim=DIM, metric="cos", dtype=dtype, connectivity=16, expansion_add=128)
    for s in range(0, len(data), 100_000):
        index.add(keys[s : s + 100_000], data[s : s + 100_000], threads=2)
    result.build = time.perf_counter() - started
    path = where / f"usearch-{dtype}.usearch"
    started = time.perf_counter()
    index.save(str(path))
    result.save = time.perf_counter() - started
    result.disk = folder_bytes(path)
    del index
    started = time.perf_counter()
    loaded = Index.restore(str(path))
    result.load = time.perf_counter() - started
    assert loaded is not None
    started = time.perf_counter()
    viewed = Index.restore(str(path), view=True)
    view_s = time.perf_counter() - started
    assert viewed is not None
    for ef in (32, 64, 128):
        loaded.expansion_search = ef

        def search(q: F32) -> list[int]:
            return loaded.search(q, 10, threads=1).keys.tolist()

        found, p50 = timed_queries(search, queries)
        result.rows.append((f"ef={ef}", recall(found, truth), p50))
    result.name += f" (mmap view {view_s * 1000:.0f} ms)"
    return result


def run_hnswlib(data: F32, queries: F32, truth: Any, where: Path) -> Result:
    import hnswlib

    result = Result("hnswlib f32")
    started = time.perf_counter()
    index = hnswlib.Index(space="ip", dim=DIM)
    index.init_index(max_elements=len(data), M=16, ef_construction=128)
    index.add_items(data, np.arange(len(data)), num_threads=2)
    result.build = time.perf_counter() - started
    path = where / "hnswlib.bin"
    started = time.perf_counter()
    index.save_index(str(path))
    result.save = time.perf_counter() - started
    result.disk = folder_bytes(path)
    del index
    started = time.perf_counter()
    loaded = hnswlib.Index(space="ip", dim=DIM)
    loaded.load_index(str(path), max_elements=len(data))
    result.load = time.perf_counter() - started
    loaded.set_num_threads(1)
    for ef in (32, 64, 128):
        loaded.set_ef(ef)

        def search(q: F32) -> list[int]:
            return loaded.knn_query(q, k=10)[0][0].tolist()

        found, p50 = timed_queries(search, queries)
        result.rows.append((f"ef={ef}", recall(found, truth), p50))
    return result


def run_faiss(data: F32, queries: F32, truth: Any, where: Path) -> Result:
    import faiss

    result = Result("faiss HNSWFlat")
    faiss.omp_set_num_threads(2)
    started = time.perf_counter()
    index = faiss.IndexHNSWFlat(DIM, 16, faiss.METRIC_INNER_PRODUCT)
    index.hnsw.efConstruction = 128
    index.add(data)
    result.build = time.perf_counter() - started
    path = where / "faiss.index"
    started = time.perf_counter()
    faiss.write_index(index, str(path))
    result.save = time.perf_counter() - started
    result.disk = folder_bytes(path)
    del index
    started = time.perf_counter()
    loaded = faiss.read_index(str(path))
    result.load = time.perf_counter() - started
    faiss.omp_set_num_threads(1)
    for ef in (32, 64, 128):
        loaded.hnsw.efSearch = ef

        def search(q: F32) -> list[int]:
            return loaded.search(q[None, :], 10)[1][0].tolist()

        found, p50 = timed_queries(search, queries)
        result.rows.append((f"ef={ef}", recall(found, truth), p50))
    return result


def run_sqlite_vec(data: F32, queries: F32, truth: Any, where: Path) -> Result:
    import sqlite_vec

    result = Result("sqlite-vec vec0 (exact)")
    path = where / "vec.db"
    conn = sqlite3.connect(path)
    if not hasattr(conn, "enable_load_extension"):
        result.name += ": this Python's sqlite3 cannot load extensions"
        return result
    conn.enable_load_extension(True)
    sqlite_vec.load(conn)
    conn.execute(f"CREATE VIRTUAL TABLE v USING vec0(embedding float[{DIM}])")
    started = time.perf_counter()
    with conn:
        conn.executemany(
            "INSERT INTO v (rowid, embedding) VALUES (?, ?)",
            ((i + 1, row.tobytes()) for i, row in enumerate(data)),
        )
    result.build = time.perf_counter() - started
    result.disk = folder_bytes(path)

    def search(q: F32) -> list[int]:
        rows = conn.execute(
            "SELECT rowid FROM v WHERE embedding MATCH ? AND k = 10", (q.tobytes(),)
        ).fetchall()
        return [int(r[0]) - 1 for r in rows]

    found, p50 = timed_queries(search, queries[:50])
    result.rows.append(("k=10", recall(found, truth[:50]), p50))
    conn.close()
    return result


RUNNERS: dict[str, tuple[str, Callable[..., Result]]] = {
    "usearch-f32": ("usearch", lambda *a: run_usearch(*a, "f32")),
    "usearch-f16": ("usearch", lambda *a: run_usearch(*a, "f16")),
    "usearch-i8": ("usearch", lambda *a: run_usearch(*a, "i8")),
    "hnswlib": ("hnswlib", run_hnswlib),
    "faiss": ("faiss", run_faiss),
    "sqlite-vec": ("sqlite_vec", run_sqlite_vec),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100000")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--libraries", default=",".join(RUNNERS))
    parser.add_argument("--random", action="store_true")
    args = parser.parse_args()
    for size in (int(s) for s in args.sizes.split(",")):
        data = clustered(size, 1, random=args.random)
        queries = clustered(args.queries, 2, random=args.random)
        started = time.perf_counter()
        truth = exact_top(data, queries, 10)
        exact_ms = 1000 * (time.perf_counter() - started) / len(queries)
        print(f"\n== {size:,} vectors, {DIM} dims; exact numpy scan {exact_ms:.1f} ms/query ==")
        print("| library | build s | save s | load s | disk MB | setting | recall@10 | p50 ms |")
        print("|---|---|---|---|---|---|---|---|")
        for name in args.libraries.split(","):
            module, runner = RUNNERS[name]
            if importlib.util.find_spec(module) is None:
                print(f"| {name} | not installed |")
                continue
            with tempfile.TemporaryDirectory(dir=os.environ.get("BENCH_TMP")) as tmp:
                r = runner(data, queries, truth, Path(tmp))
            for setting, rec, p50 in r.rows or [("-", float("nan"), float("nan"))]:
                print(
                    f"| {r.name} | {r.build:.1f} | {r.save:.2f} | {r.load:.2f} | "
                    f"{r.disk / 1e6:,.0f} | {setting} | {rec:.3f} | {p50:.2f} |",
                    flush=True,
                )


if __name__ == "__main__":
    main()
