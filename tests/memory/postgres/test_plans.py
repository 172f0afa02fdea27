"""Query plans of PostgreSQL search on tables whose statistics are missing or stale (a
new store, or one that grew since autovacuum last analysed it): the planner had picked
plans whose cost grew with the table for every candidate."""

from __future__ import annotations

import random

import numpy as np
import psycopg
import pytest

from memory.postgres.conftest import Explaining, WordEmbedder, plan_nodes
from satchel.memory import BlockKind
from satchel.memory.postgres import PostgresStore
from satchel.memory.postgres._context_sql import neighbour_pks

pytestmark = [pytest.mark.anyio, pytest.mark.postgres]


def bulk_with_vectors(
    url: str, count: int, dim: int = WordEmbedder.dim, prefix: str = "bulk"
) -> None:
    """``count`` archival blocks of ada's (ids ``prefix0``, ...) and their vectors,
    copied straight into the tables (as a bulk load does; no ``ANALYZE``)."""
    rng = np.random.default_rng(3)
    with psycopg.connect(url) as conn:
        with conn.cursor().copy(
            "COPY satchel_blocks (id, agent, label, value, chars, kind, permission, "
            "created_at, updated_at) FROM STDIN"
        ) as copy:
            for i in range(count):
                text = f"entry {i} of many"
                row = (
                    f"{prefix}{i}",
                    "ada",
                    f"{prefix}-{i}",
                    text,
                    len(text),
                    "archival",
                    "read_write",
                )
                copy.write_row((*row, "2024-01-01 00:00:00+00", "2024-01-01 00:00:00+00"))
        pks = [
            row[0]
            for row in conn.execute(
                "SELECT pk FROM satchel_blocks WHERE id LIKE %s", (f"{prefix}%",)
            )
        ]
        with conn.cursor().copy("COPY satchel_block_vectors (pk, embedding) FROM STDIN") as copy:
            for pk in pks:
                vector = rng.standard_normal(dim)
                vector /= np.linalg.norm(vector)
                copy.write_row((pk, "[" + ",".join(f"{x:.6f}" for x in vector) + "]"))


async def test_neighbour_lookup_reads_a_few_rows_per_candidate(
    pg_store: PostgresStore, pg_url: str
) -> None:
    """Each candidate's previous and next archival block is one step down an index:
    the rows the plan's per-candidate nodes produce stay a small multiple of the
    candidates, whatever the table's size (the earlier plans walked half the vector
    table, or sorted all of the agent's blocks, for every candidate)."""
    await pg_store.create_block("ada", "first", "the first entry", kind=BlockKind.ARCHIVAL)
    bulk_with_vectors(pg_url, 300, prefix="early")
    with psycopg.connect(pg_url) as conn:
        conn.execute("ANALYZE")  # statistics of a small table, stale once it grows
    bulk_with_vectors(pg_url, 3_000)
    backend = pg_store.backend
    async with backend._db.connection() as conn:  # pyright: ignore[reportPrivateUsage]
        cursor = await conn.execute(
            "SELECT pk FROM satchel_blocks WHERE agent = 'ada' AND kind = 'archival'"
        )
        pks = [int(row[0]) for row in await cursor.fetchall()]
        chosen = random.Random(5).sample(pks, 40)
        explaining = Explaining(conn)
        found = await neighbour_pks(explaining, "b", "ada", chosen)  # type: ignore[arg-type]
    assert len(found) == 40
    assert sum(len(pairs) for pairs in found.values()) >= 78  # two apiece but at the ends
    per_candidate = [n for n in plan_nodes(explaining.plans[0]) if n["Actual Loops"] > 1]
    assert per_candidate
    produced = sum(n["Actual Rows"] * n["Actual Loops"] for n in per_candidate)
    assert produced <= 10 * len(chosen), [
        (n["Node Type"], n["Actual Rows"], n["Actual Loops"]) for n in per_candidate
    ]
