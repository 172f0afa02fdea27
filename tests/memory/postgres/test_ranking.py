"""Full-text ranking on PostgreSQL: IDF-weighted like BM25, and capped in cost by
dropping the commonest query terms on large tables."""

from __future__ import annotations

import psycopg
import pytest

from memory.postgres.conftest import Explaining, plan_nodes
from satchel.memory import BlockKind, SearchFilters
from satchel.memory.postgres import PostgresStore
from satchel.memory.postgres._search_sql import BLOCKS, _Params, bm25_candidates, filter_clause

pytestmark = [pytest.mark.anyio, pytest.mark.postgres]


def bulk_archival(url: str, texts: list[str], *, analyze: bool = True) -> None:
    """Rows straight into the table (the store's API is tested elsewhere), then
    ``ANALYZE`` unless told not to."""
    with psycopg.connect(url) as conn:
        conn.cursor().executemany(
            "INSERT INTO satchel_blocks (id, agent, label, value, chars, kind, permission, "
            "created_at, updated_at) VALUES (%s, 'ada', %s, %s, %s, 'archival', "
            "'read_write', now(), now())",
            [(f"id{i}", f"bulk-{i}", text, len(text)) for i, text in enumerate(texts)],
        )
        if analyze:
            conn.execute("ANALYZE satchel_blocks")


async def test_a_rare_term_outweighs_a_common_one(pg_store: PostgresStore) -> None:
    for i in range(30):
        await pg_store.create_block("ada", f"c{i}", f"common filler {i}", kind=BlockKind.ARCHIVAL)
    await pg_store.create_block("ada", "rare", "platypus sighting", kind=BlockKind.ARCHIVAL)
    await pg_store.create_block("ada", "twice", "common common", kind=BlockKind.ARCHIVAL)
    hits = await pg_store.search("ada", "common platypus", mode="bm25", limit=3)
    assert hits[0].label == "rare"
    assert hits[0].bm25_score is not None
    assert hits[1].bm25_score is not None
    assert hits[0].bm25_score > hits[1].bm25_score > 0


async def test_on_a_large_table_the_commonest_terms_are_dropped_to_stay_in_budget(
    pg_store: PostgresStore, pg_url: str
) -> None:
    texts = [f"common word filler{i % 7}" for i in range(600)]
    texts += ["common platypus", "platypus alone", "another platypus"]
    bulk_archival(pg_url, texts)
    stats = pg_store.backend._stats  # pyright: ignore[reportPrivateUsage]
    stats.budget = 100
    async with pg_store.backend._db.connection() as conn:  # pyright: ignore[reportPrivateUsage]
        chosen = await stats.choose(conn, BLOCKS, ["common", "platypus"])
        assert (chosen.terms, chosen.combine, chosen.cap) == (["platypus"], "or", None)
        # Every term over budget: the AND of the rarest three, capped to the newest
        # rows as these two are in nearly every row.
        chosen = await stats.choose(conn, BLOCKS, ["common", "word"])
        assert (sorted(chosen.terms), chosen.combine, chosen.cap) == (
            ["common", "word"],
            "and",
            100,
        )
    hits = await pg_store.search("ada", "common word", mode="bm25", limit=5)
    assert len(hits) == 5
    hits = await pg_store.search("ada", "common platypus", mode="bm25", limit=10)
    assert sorted(h.text for h in hits) == ["another platypus", "common platypus", "platypus alone"]


async def test_a_small_table_keeps_every_term(pg_store: PostgresStore) -> None:
    await pg_store.create_block("ada", "a", "common platypus", kind=BlockKind.ARCHIVAL)
    async with pg_store.backend._db.connection() as conn:  # pyright: ignore[reportPrivateUsage]
        chosen = await pg_store.backend._stats.choose(conn, BLOCKS, ["common", "platypus"])  # pyright: ignore[reportPrivateUsage]
    assert (chosen.terms, chosen.combine) == (["common", "platypus"], "or")


async def test_bm25_computes_document_frequencies_once_per_query(
    pg_store: PostgresStore, pg_url: str
) -> None:
    """The aggregate over the matching rows runs once, not once per matching row: on a
    table not yet analysed (a new store) the planner guessed one match and had put it
    inside a nested loop, quadratic in the matches."""
    texts = [f"common filler {i} platypus" * (1 + i % 3) for i in range(300)]
    bulk_archival(pg_url, texts, analyze=False)
    backend = pg_store.backend
    async with backend._db.connection() as conn:  # pyright: ignore[reportPrivateUsage]
        params = _Params(me="ada", q=None, model=None)
        where = filter_clause(BLOCKS, SearchFilters(), params)
        choice = await backend._stats.choose(conn, BLOCKS, ["common", "platypus"])  # pyright: ignore[reportPrivateUsage]
        explaining = Explaining(conn)
        found = await bm25_candidates(explaining, BLOCKS, choice, where, params, 50, fill_in=False)  # type: ignore[arg-type]
    assert len(found) == 50
    aggregates = [n for n in plan_nodes(explaining.plans[0]) if n["Node Type"] == "Aggregate"]
    assert aggregates
    assert all(n["Actual Loops"] == 1 for n in aggregates), [
        (n["Node Type"], n["Actual Loops"]) for n in aggregates
    ]
