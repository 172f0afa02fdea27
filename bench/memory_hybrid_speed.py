"""Hybrid search latency of this checkout against an earlier commit, interleaved.

Two worker processes answer the same searches on the same store files: one imports
this checkout's ``src/``, the other the ``src/`` of ``--before`` (extracted with ``git
archive``). The parent asks them in turn, query by query, for a hybrid and a BM25-only
search (BM25-only is the baseline of the ratios; the order of the four rotates), so
machine load hits every column alike. It prints each column's p50 and p95 and the
ratios, and checks that both commits return the same hits with the same scores (and,
apart, the same hits in the same order, with the largest score difference). Both
workers run with ``PYTHONHASHSEED=0``: before commit f8d32f8 (sums in the query's term
order), coverage summed a set of terms, whose order, and so the last bit of a score,
followed the string hash.

Stores:

* ``--locomo``: every LoCoMo dev turn as conversation messages and, in a second file,
  as archival entries, loaded as ``bench/memory_quality.py`` loads them; its questions.
* ``--scale PATH``: a store ``bench/memory_scale.py`` built (for example
  ``/tmp/h2scale/scale-clustered-100000.db``), with that script's queries.

Run:
    uv run python bench/memory_hybrid_speed.py --before COMMIT --locomo
    uv run python bench/memory_hybrid_speed.py --before COMMIT --scale PATH [--queries 200]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from io import BytesIO
from pathlib import Path
from typing import Any

import anyio
import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import memory_quality as mq  # noqa: E402
import memory_scale as ms  # noqa: E402

from satchel.memory import Domain, SQLiteStore  # noqa: E402

Ask = tuple[str, str]  # (agent, query)


def scale_queries(path: Path, n: int) -> list[Ask]:
    """``bench/memory_scale.py``'s queries for the store at ``path``."""
    size = ms.count_entries(path)
    maker = ms.TextMaker(seed=size)
    rng = np.random.default_rng(1)
    texts = maker.texts(n)
    return [(ms.AGENT, " ".join(rng.choice(t.split(), size=3, replace=False))) for t in texts]


def locomo_queries() -> list[Ask]:
    samples = json.loads(mq.DATA.read_text())
    return [(s["sample_id"], q) for s in samples for q, _ in mq.questions_of(s)]


async def child(kind: str, path: Path, n: int) -> None:
    """Answer ``mode index`` lines from stdin with one JSON line each."""
    if kind == "scale":
        embedder: Any = ms.EMBEDDERS["random" if "random" in path.name else "clustered"]()
        asks, domain = scale_queries(path, n), Domain.ARCHIVAL_MEMORY
    else:
        embedder = mq.CachingEmbedder()
        asks = locomo_queries()
        domain = Domain.CONVERSATIONS if kind == "conversations" else Domain.ARCHIVAL_MEMORY
    embedder.embed([q.strip() for _, q in asks])
    store = await SQLiteStore.open(path, embedder=embedder)
    for agent, query in asks[:50]:  # warm caches
        await store.search(agent, query, domains=domain, limit=10, mode="hybrid")
    print(json.dumps({"ready": len(asks)}), flush=True)
    for line in sys.stdin:
        mode, index = line.split()
        agent, query = asks[int(index)]
        started = time.perf_counter()
        hits = await store.search(agent, query, domains=domain, limit=10, mode=mode)  # type: ignore[arg-type]
        elapsed = 1000 * (time.perf_counter() - started)
        print(
            json.dumps({"ms": elapsed, "hits": [[h.id, repr(h.score)] for h in hits]}), flush=True
        )
    await store.close()


class Worker:
    def __init__(self, src: Path, kind: str, path: Path, n: int) -> None:
        env = dict(os.environ, PYTHONPATH=str(src), PYTHONHASHSEED="0")
        self.process = subprocess.Popen(
            [sys.executable, __file__, "--child", kind, str(path), "--queries", str(n)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
        self.count = int(json.loads(self.read())["ready"])

    def read(self) -> str:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            raise SystemExit("a worker stopped")
        return line

    def ask(self, mode: str, index: int) -> dict[str, Any]:
        assert self.process.stdin is not None
        self.process.stdin.write(f"{mode} {index}\n")
        self.process.stdin.flush()
        return json.loads(self.read())

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait()


def compare(label: str, kind: str, path: Path, before: Path, n: int, rounds: int) -> None:
    workers = {
        "before": Worker(before, kind, path, n),
        "now": Worker(HERE.parent / "src", kind, path, n),
    }
    columns = [(w, m) for m in ("bm25", "hybrid") for w in ("before", "now")]
    times: dict[tuple[str, str], list[float]] = {c: [] for c in columns}
    same = differ = same_order = 0
    largest = 0.0
    for round_ in range(rounds):
        for index in range(workers["now"].count):
            shift = (index + round_) % len(columns)
            answers: dict[tuple[str, str], Any] = {}
            for who, mode in columns[shift:] + columns[:shift]:
                answers[(who, mode)] = workers[who].ask(mode, index)
                times[(who, mode)].append(answers[(who, mode)]["ms"])
            if round_ == 0:
                for mode in ("bm25", "hybrid"):
                    old, new = answers[("before", mode)]["hits"], answers[("now", mode)]["hits"]
                    if old == new:
                        same += 1
                    else:
                        differ += 1
                    if [h[0] for h in old] == [h[0] for h in new]:
                        same_order += 1
                        gaps = [
                            abs(float(a[1]) - float(b[1])) for a, b in zip(old, new, strict=True)
                        ]
                        largest = max([largest, *gaps])
    for worker in workers.values():
        worker.close()
    base = statistics.median(times[("now", "bm25")])
    print(f"\n== {label}: {workers['now'].count} queries x {rounds} rounds ==")
    for (who, mode), values in times.items():
        p50 = statistics.median(values)
        print(
            f"{who:>6} {mode:>6}: p50 {p50:6.2f} ms  p95 {ms.percentile(values, 0.95):6.2f} ms"
            f"  (p50 x bm25 now {p50 / base:5.2f})"
        )
    ratio = statistics.median(times[("now", "hybrid")]) / statistics.median(
        times[("before", "hybrid")]
    )
    print(f"hybrid p50 now / before: x{ratio:.2f}")
    print(f"same hits and scores as before: {same} of {same + differ} searches")
    print(
        f"same hits in the same order: {same_order} of {same + differ} searches "
        f"(largest score difference among them: {largest:.1e})"
    )


def extract(commit: str, into: Path) -> Path:
    archive = subprocess.run(
        ["git", "archive", commit, "src"], cwd=HERE.parent, check=True, capture_output=True
    ).stdout
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into / "src"


async def load_locomo(folder: Path) -> None:
    samples = json.loads(mq.DATA.read_text())
    embedder = mq.CachingEmbedder()
    store = await SQLiteStore.open(folder / "conversations.db", embedder=embedder)
    await mq.load(store, samples)
    await store.close()
    store = await SQLiteStore.open(folder / "archival.db", embedder=embedder)
    await mq.load_archival(store, samples)
    await store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", help="the commit to compare against")
    parser.add_argument("--locomo", action="store_true")
    parser.add_argument("--scale", type=Path)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        anyio.run(child, args.child[0], Path(args.child[1]), args.queries)
        return
    with tempfile.TemporaryDirectory() as tmp:
        before = extract(args.before, Path(tmp))
        if args.locomo:
            anyio.run(load_locomo, Path(tmp))
            for kind in ("conversations", "archival"):
                path = Path(tmp) / f"{kind}.db"
                compare(f"LoCoMo, {kind}", kind, path, before, args.queries, args.rounds)
        if args.scale:
            compare(str(args.scale), "scale", args.scale, before, args.queries, args.rounds)


if __name__ == "__main__":
    main()
