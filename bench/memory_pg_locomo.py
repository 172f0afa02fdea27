"""PostgreSQL search on LoCoMo, next to SQLite in the same run.

Every LoCoMo dev turn is loaded as conversation messages and, in a second pair of
stores, as archival entries, into the test suite's embedded PostgreSQL 18 + pgvector
server (``tests/postgres_server.py``, a fresh temporary cluster) and into a SQLite file,
through the stores' API as ``bench/memory_quality.py`` loads them. Each of the 302
questions is then asked of both backends, BM25-only and hybrid, the four searches
interleaved question by question. Printed: p50 per search and PostgreSQL's ratio to
SQLite (the baseline; below 1 is faster).

``--statistics`` sets the planner's statistics: ``autovacuum`` (the server's default:
autovacuum analyses the tables whenever its thresholds say, here during the load, and
searching starts right after loading, as a user does after an import) or, with
autovacuum off, ``stale`` (``ANALYZE`` after the first conversation only, as when
autovacuum analysed a young store that has grown since: its next pass waits for 10% of
the rows to change and a free worker), ``none`` (never analysed) or ``fresh``
(``ANALYZE`` after loading).

``--hits OUT.json`` also writes PostgreSQL's hits (text and score), to compare two
versions of satchel: run this checkout, then an older one with its ``src`` first on
``PYTHONPATH`` (``git archive COMMIT src``), and ``--compare A.json B.json``.

Run:
    uv run python bench/memory_pg_locomo.py [--statistics autovacuum|stale|none|fresh]
        [--hits new.json]
    uv run python bench/memory_pg_locomo.py --compare old.json new.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
import memory_quality as mq
import psycopg

from satchel.memory import Domain, MemoryStore, SearchMode, SQLiteStore
from satchel.memory.postgres import PostgresStore

sys.path.insert(0, str(Path(__file__).parents[1] / "tests"))
from postgres_server import PostgresServer  # the tests' server helper

MODES: tuple[SearchMode, ...] = ("bm25", "hybrid")


def analyze(url: str) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("ANALYZE")


async def run(statistics_: str) -> dict[str, list[list[tuple[str, float]]]]:
    """Load, search and print; returns PostgreSQL's hits per domain and mode."""
    samples = json.loads(mq.DATA.read_text())
    embedder = mq.CachingEmbedder()
    asks = [(s["sample_id"], q) for s in samples for q, _ in mq.questions_of(s)]
    embedder.embed([q for _, q in asks])
    settings = "" if statistics_ == "autovacuum" else "-c autovacuum=off"
    server = PostgresServer(settings=settings).start()
    folder = Path(tempfile.mkdtemp(prefix="pg-locomo-"))
    hits: dict[str, list[list[tuple[str, float]]]] = {}
    try:
        for domain, loader in (
            (Domain.CONVERSATIONS, mq.load),
            (Domain.ARCHIVAL_MEMORY, mq.load_archival),
        ):
            url = server.create_database()
            pg = await PostgresStore.open(url, embedder=embedder, max_connections=8)
            lite = await SQLiteStore.open(folder / f"{domain.value}.db", embedder=embedder)
            stores: dict[str, MemoryStore] = {"sqlite": lite, "pg": pg}
            for store in stores.values():
                await loader(store, samples[:1])  # type: ignore[arg-type]
            if statistics_ == "stale":
                await anyio.to_thread.run_sync(analyze, url)
            for store in stores.values():
                await loader(store, samples[1:])  # type: ignore[arg-type]
            if statistics_ == "fresh":
                await anyio.to_thread.run_sync(analyze, url)
            for store in stores.values():
                for agent, question in asks[:30]:  # warm caches and prepared plans
                    await store.search(agent, question, domains=domain, mode="hybrid")
            times: dict[tuple[str, str], list[float]] = {
                (name, mode): [] for name in stores for mode in MODES
            }
            found: dict[str, list[list[tuple[str, float]]]] = {mode: [] for mode in MODES}
            for agent, question in asks:
                for (name, mode), spent in times.items():
                    started = time.perf_counter()
                    result = await stores[name].search(
                        agent, question, domains=domain, limit=10, mode=mode
                    )
                    spent.append((time.perf_counter() - started) * 1000)
                    if name == "pg":
                        found[mode].append([(h.text, h.score) for h in result])
            print(
                f"\n== {domain.value}: {len(asks)} questions, statistics {statistics_} ==",
                flush=True,
            )
            for mode in MODES:
                base = statistics.median(times[("sqlite", mode)])
                pg_p50 = statistics.median(times[("pg", mode)])
                print(
                    f"  {mode:>6} p50: sqlite {base:6.2f} ms  pg {pg_p50:6.2f} ms  "
                    f"pg/sqlite {pg_p50 / base:5.2f}"
                )
                hits[f"{domain.value} {mode}"] = found[mode]
            await pg.close()
            await lite.close()
    finally:
        server.stop()
    return hits


def compare(old: Path, new: Path) -> None:
    before: dict[str, Any] = json.loads(old.read_text())
    after: dict[str, Any] = json.loads(new.read_text())
    for key, rows in before.items():
        same = sum(a == b for a, b in zip(rows, after[key], strict=True))
        order = sum(
            [h[0] for h in a] == [h[0] for h in b] for a, b in zip(rows, after[key], strict=True)
        )
        print(f"{key}: same hits and scores {same}, same order {order}, of {len(rows)}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--hits", type=Path, help="write PostgreSQL's hits here")
    parser.add_argument("--compare", type=Path, nargs=2, help="compare two --hits files")
    parser.add_argument(
        "--statistics", choices=["autovacuum", "stale", "none", "fresh"], default="autovacuum"
    )
    args = parser.parse_args()
    if args.compare:
        compare(*args.compare)
    else:
        found = anyio.run(run, args.statistics)
        if args.hits is not None:
            args.hits.write_text(json.dumps(found))
