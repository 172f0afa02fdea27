"""PostgreSQL memory store at scale, next to SQLite in the same run.

For each size (archival entries of synthetic text, random 384-d unit vectors, the same
data and queries for both backends) it reports:

* insert throughput through ``create_block`` (8 concurrent tasks, first 5,000 entries,
  vector index live), then the bulk load used to reach the size;
* p50/p95 latency of BM25-only, vector-only and hybrid ``search``;
* database bytes per entry;

before that, what a vector costs one write (``--costs``: p50 of ``append_to_block`` and
``create_block`` with and without an embedder, ratio to without), and write throughput
with 1, 4 and 16 concurrent writer tasks (``create_block``
of archival entries, and ``append_to_block``, each task on its own block).
Every PostgreSQL figure is printed with its ratio to SQLite's (for latency, PG/SQLite:
below 1 is faster; for throughput, PG/SQLite: above 1 is faster).

The server is the test suite's embedded PostgreSQL 18 + pgvector 0.8 (``tests/
postgres_server.py``), on a fresh temporary cluster, loopback TCP, with ``fsync`` on and
``synchronous_commit = off`` (a committed write survives a crash of the client, like
SQLite's WAL ``synchronous = NORMAL``; pass ``--sync-commit`` for ``on``).

Run:
    uv run python bench/memory_pg.py --sizes 10000,100000
    uv run python bench/memory_pg.py --sizes "" --writes 0 --costs 400   # vector cost only
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import anyio
import psycopg
from memory_scale import AGENT, RandomEmbedder, TextMaker, bulk_insert, percentile

from satchel.memory import BlockKind, Domain, MemoryStore, SearchMode, SQLiteStore
from satchel.memory.postgres import PostgresStore

sys.path.insert(0, str(Path(__file__).parents[1] / "tests"))
from postgres_server import PostgresServer  # the tests' server helper

MODES: tuple[SearchMode, ...] = ("bm25", "vector", "hybrid")


def row(label: str, sqlite: float, pg: float, unit: str, *, higher_is_better: bool) -> None:
    ratio = pg / sqlite if sqlite else float("nan")
    better = "faster" if (ratio > 1) == higher_is_better else "slower"
    print(
        f"  {label:<34} sqlite {sqlite:10,.2f} {unit:<10} pg {pg:10,.2f} {unit:<10} "
        f"pg/sqlite {ratio:5.2f} ({better})"
    )


async def insert_api(store: MemoryStore, texts: list[str], first: int, tasks: int = 8) -> float:
    """Insert through ``create_block`` with concurrent tasks; returns entries/s."""
    queue = list(enumerate(texts, start=first))
    started = time.perf_counter()

    async def worker() -> None:
        while queue:
            i, text = queue.pop()
            await store.create_block(AGENT, f"entry-{i}", text, kind=BlockKind.ARCHIVAL)

    async with anyio.create_task_group() as group:
        for _ in range(tasks):
            group.start_soon(worker)
    return len(texts) / (time.perf_counter() - started)


def pg_bulk_load(url: str, texts: list[str], first: int) -> None:
    """COPY rows in, with the HNSW indexes dropped during the load and rebuilt after
    (the usual way to load pgvector tables; index build time is printed)."""
    vectors = RandomEmbedder().embed(texts)
    with psycopg.connect(url, autocommit=True) as conn:
        names = [
            name
            for (name,) in conn.execute(
                "SELECT indexname FROM pg_indexes WHERE indexname LIKE '%hnsw'"
            ).fetchall()
        ]
        for name in names:
            conn.execute(f"DROP INDEX {name}".encode())
        started = time.perf_counter()
        with conn.cursor().copy(
            "COPY satchel_blocks (id, agent, label, value, chars, kind, permission, "
            "created_at, updated_at) FROM STDIN"
        ) as copy:
            now = "2024-01-01 00:00:00+00"
            for i, text in enumerate(texts, start=first):
                fields = (f"bulk{i}", AGENT, f"entry-{i}", text, len(text), "archival")
                copy.write_row((*fields, "read_write", now, now))
        # Each record's vector goes to its side row (see memory/postgres/_vector_rows.py).
        pks = [
            pk
            for (pk,) in conn.execute(
                "SELECT pk FROM satchel_blocks WHERE id LIKE 'bulk%%' ORDER BY pk DESC LIMIT %s",
                (len(texts),),
            ).fetchall()
        ][::-1]
        with conn.cursor().copy("COPY satchel_block_vectors (pk, embedding) FROM STDIN") as copy:
            for pk, vector in zip(pks, vectors, strict=True):
                embedding = "[" + ",".join(f"{x:.6f}" for x in vector.tolist()) + "]"
                copy.write_row((pk, embedding))
        loaded = time.perf_counter() - started
        conn.execute("SET maintenance_work_mem = '1GB'")
        conn.execute("SET max_parallel_maintenance_workers = 1")
        started = time.perf_counter()
        for name in names:
            table = "satchel_block_vectors" if "block" in name else "satchel_message_vectors"
            conn.execute(
                f"CREATE INDEX {name} ON {table} USING hnsw ((embedding::vector(384)) "
                "vector_cosine_ops) WITH (m = 16, ef_construction = 64)".encode()
            )
        built = time.perf_counter() - started
        conn.execute("VACUUM ANALYZE satchel_blocks, satchel_block_vectors")
    print(
        f"  pg bulk load: COPY {len(texts) / loaded:,.0f} rows/s, "
        f"HNSW build {built:.1f} s for {first + len(texts):,} rows"
    )


async def latencies(store: MemoryStore, queries: list[str], mode: SearchMode) -> list[float]:
    times: list[float] = []
    for query in queries:
        started = time.perf_counter()
        await store.search(AGENT, query, domains=Domain.ARCHIVAL_MEMORY, limit=10, mode=mode)
        times.append(1000 * (time.perf_counter() - started))
    return times


def pg_bytes(url: str) -> int:
    with psycopg.connect(url) as conn:
        found = conn.execute(
            "SELECT pg_total_relation_size('satchel_blocks') "
            "+ pg_total_relation_size('satchel_messages') "
            "+ coalesce(pg_total_relation_size(to_regclass('satchel_block_vectors')), 0) "
            "+ coalesce(pg_total_relation_size(to_regclass('satchel_message_vectors')), 0)"
        ).fetchone()
    return int(found[0]) if found else 0


async def run_size(size: int, server: PostgresServer, folder: Path, n_queries: int) -> None:
    print(f"\n== {size:,} archival entries ==", flush=True)
    path = folder / f"sqlite-{size}.db"
    path.unlink(missing_ok=True)
    url = server.create_database(name=f"scale_{size}")
    sqlite = await SQLiteStore.open(path, embedder=RandomEmbedder())
    pg = await PostgresStore.open(url, embedder=RandomEmbedder(), max_connections=20)
    maker = TextMaker(seed=size)
    first = maker.texts(min(5_000, size))
    rates = {}
    for name, store in (("sqlite", sqlite), ("pg", pg)):
        rates[name] = await insert_api(store, first, 0)
    row(
        "insert via create_block (8 tasks)",
        rates["sqlite"],
        rates["pg"],
        "entries/s",
        higher_is_better=True,
    )
    have = len(first)
    while have < size:
        batch = maker.texts(min(50_000, size - have))
        started = time.perf_counter()
        await anyio.to_thread.run_sync(bulk_insert, sqlite, batch, have)
        sqlite_rate = len(batch) / (time.perf_counter() - started)
        print(f"  sqlite bulk load: {sqlite_rate:,.0f} rows/s", flush=True)
        await anyio.to_thread.run_sync(pg_bulk_load, url, batch, have)
        have += len(batch)
    queries = [
        " ".join(words[:3])
        for words in (text.split() for text in TextMaker(seed=size).texts(n_queries))
    ]
    for store in (sqlite, pg):  # warm up: caches, the in-memory index, prepared plans
        await latencies(store, queries[:20], "hybrid")
    for mode in MODES:
        s = await latencies(sqlite, queries, mode)
        p = await latencies(pg, queries, mode)
        row(
            f"{mode} search p50",
            statistics.median(s),
            statistics.median(p),
            "ms",
            higher_is_better=False,
        )
        row(
            f"{mode} search p95",
            percentile(s, 0.95),
            percentile(p, 0.95),
            "ms",
            higher_is_better=False,
        )
    await sqlite.close()
    sqlite_size = sum(p.stat().st_size for p in folder.glob(f"sqlite-{size}.db*"))  # noqa: ASYNC240
    row(
        "database bytes per entry",
        sqlite_size / size,
        pg_bytes(url) / size,
        "bytes",
        higher_is_better=False,
    )
    await pg.close()


async def write_throughput(server: PostgresServer, folder: Path, ops: int) -> None:
    print(f"\n== write throughput: {ops:,} writes per run ==", flush=True)

    async def run(store: MemoryStore, tasks: int, kind: str, tag: str) -> float:
        per_task = ops // tasks
        for t in range(tasks):
            await store.create_block(AGENT, f"{tag}-log-{t}", "")

        async def worker(t: int) -> None:
            for i in range(per_task):
                if kind == "create":
                    await store.create_block(
                        AGENT,
                        f"{tag}-{t}-{i}",
                        f"archival note {t} {i} about things",
                        kind=BlockKind.ARCHIVAL,
                    )
                else:
                    await store.append_to_block(AGENT, f"{tag}-log-{t}", f"line {i}")

        started = time.perf_counter()
        async with anyio.create_task_group() as group:
            for t in range(tasks):
                group.start_soon(worker, t)
        return per_task * tasks / (time.perf_counter() - started)

    (folder / "writes.db").unlink(missing_ok=True)
    sqlite = await SQLiteStore.open(folder / "writes.db", embedder=RandomEmbedder())
    pg = await PostgresStore.open(
        server.create_database(name="writes"), embedder=RandomEmbedder(), max_connections=20
    )
    for kind in ("create", "append"):
        for tasks in (1, 4, 16):
            tag = f"{kind}{tasks}"
            results: dict[str, float] = {}
            for name, store in (("sqlite", sqlite), ("pg", pg)):
                results[name] = await run(store, tasks, kind, tag)
            row(
                f"{kind}, {tasks} writer task(s)",
                results["sqlite"],
                results["pg"],
                "writes/s",
                higher_is_better=True,
            )
    await sqlite.close()
    await pg.close()


async def write_cost(server: PostgresServer, writes: int) -> None:
    """What a vector costs a write on PG: p50 of one ``append_to_block`` (to a growing
    log block) and of one archival ``create_block``, with and without an embedder, one
    writer, interleaved write by write so the machine's load hits both alike."""
    print(f"\n== cost of a vector on a PG write: {writes:,} writes each, one writer ==")
    plain = await PostgresStore.open(server.create_database(name="cost_plain"), embedder=None)
    with_vectors = await PostgresStore.open(
        server.create_database(name="cost_vectors"), embedder=RandomEmbedder()
    )
    stores = {"no embedder": plain, "with embedder": with_vectors}
    for store in stores.values():
        await store.create_block(AGENT, "cost-log", "")
    for kind in ("append", "create"):
        times: dict[str, list[float]] = {name: [] for name in stores}
        for i in range(writes):
            for name, store in stores.items():
                started = time.perf_counter()
                if kind == "append":
                    await store.append_to_block(AGENT, "cost-log", f"line {i} of the log")
                else:
                    await store.create_block(
                        AGENT,
                        f"cost-{i}",
                        f"archival note {i} about things",
                        kind=BlockKind.ARCHIVAL,
                    )
                times[name].append(1000 * (time.perf_counter() - started))
        base = statistics.median(times["no embedder"])
        for name, ms in times.items():
            p50 = statistics.median(ms)
            print(
                f"  {kind:<6} {name:<14} p50 {p50:6.2f} ms  p90 {percentile(ms, 0.9):6.2f} ms  "
                f"x{p50 / base:4.2f} of no embedder",
                flush=True,
            )
    await plain.close()
    await with_vectors.close()


async def main(
    sizes: list[int], n_queries: int, ops: int, sync_commit: bool, costs: int = 0
) -> None:
    folder = Path(tempfile.mkdtemp(prefix="satchel-bench-"))
    settings = "-c fsync=on -c full_page_writes=on -c synchronous_commit=" + (
        "on" if sync_commit else "off"
    )
    server = PostgresServer(settings=settings).start()
    try:
        if costs:
            await write_cost(server, costs)
        if ops:
            await write_throughput(server, folder, ops)
        for size in sizes:
            await run_size(size, server, folder, n_queries)
    finally:
        server.stop()
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--writes", type=int, default=1_600)
    parser.add_argument("--sync-commit", action="store_true")
    parser.add_argument(
        "--costs", type=int, default=400, help="writes per store for the vector-cost table"
    )
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",") if s]

    async def run() -> None:
        await main(sizes, args.queries, args.writes, args.sync_commit, args.costs)

    anyio.run(run)
