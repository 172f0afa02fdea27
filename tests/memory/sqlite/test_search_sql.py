"""SQLite search internals: bounded BM25 and the exact pre-filter fallback."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from random import Random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory.conftest import HashEmbedder
from satchel.memory import BlockKind, Permission, SearchFilters, SQLiteStore
from satchel.memory.sqlite._messages import BLOCKS
from satchel.memory.sqlite._search_sql import (
    bm25_candidates,
    bm25_query,
    filter_clause,
    first_matching,
    keep_matching,
)

pytestmark = pytest.mark.anyio


@pytest.fixture
async def crowded(tmp_path: Path) -> Path:
    """60 archival blocks: 'common' in all, 'middling' in 20, 'rare' in 2."""
    async with await SQLiteStore.open(tmp_path / "c.db", embedder=None) as store:
        for i in range(60):
            words = ["common"]
            if i % 3 == 0:
                words.append("middling")
            if i in (10, 50):
                words.append("rare")
            await store.create_block("ada", f"b{i}", " ".join(words), kind=BlockKind.ARCHIVAL)
    return tmp_path / "c.db"


async def test_bm25_keeps_rare_terms_and_drops_common_ones_over_budget(crowded: Path) -> None:
    with sqlite3.connect(crowded) as conn:
        assert bm25_query(conn, BLOCKS, ["common", "rare"], budget=100).match == (  # type: ignore[union-attr]
            '"common" OR "rare"'
        )
        plan = bm25_query(conn, BLOCKS, ["common", "middling", "rare"], budget=25)
        assert plan is not None
        assert plan.match == '"rare" OR "middling"'
        assert bm25_query(conn, BLOCKS, ["absent"], budget=25) is None


async def test_bm25_over_budget_ranks_only_the_newest_matches(crowded: Path) -> None:
    with sqlite3.connect(crowded) as conn:
        plan = bm25_query(conn, BLOCKS, ["common"], budget=10)
        assert plan is not None
        assert plan.newest_only
        where, params = filter_clause(BLOCKS, 1, SearchFilters(), archival_only=True)
        found = bm25_candidates(conn, BLOCKS, plan, where, params, 50, budget=10)
        assert 0 < len(found) <= 11
        assert min(found) >= 50  # the newest rows


async def test_a_selective_filter_falls_back_to_exact_vector_scores(tmp_path: Path) -> None:
    async with await SQLiteStore.open(tmp_path / "v.db", embedder=HashEmbedder()) as store:
        for i in range(400):
            tags = ["needle"] if i == 7 else []
            await store.create_block(
                "ada", f"b{i}", f"haystack entry {i}", kind=BlockKind.ARCHIVAL, tags=tags
            )
        hits = await store.search(
            "ada", "haystack entry", mode="vector", filters=SearchFilters(tags=("needle",))
        )
        assert [h.label for h in hits] == ["b7"]


_VOCAB = [f"w{i}" for i in range(12)]


@pytest.fixture(scope="module")
def shared_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """300 archival blocks of random words over three agents: ada owns most, bob a
    quarter, cy 5% (so BM25's best matches are mostly other agents' rows for cy); bob
    shares a few blocks with cy, and each agent has a core block."""
    import random

    import anyio

    path = tmp_path_factory.mktemp("bm25") / "s.db"
    rng = random.Random(7)

    async def build() -> None:
        async with await SQLiteStore.open(path, embedder=None) as store:
            for agent in ("ada", "bob", "cy"):
                await store.create_block(agent, "persona", " ".join(_VOCAB[:4]))
            for i in range(300):
                agent = "cy" if i % 20 == 0 else "bob" if i % 4 == 1 else "ada"
                words = rng.choices(_VOCAB, weights=range(12, 0, -1), k=rng.randint(1, 9))
                await store.create_block(agent, f"b{i}", " ".join(words), kind=BlockKind.ARCHIVAL)
                if agent == "bob" and i % 16 == 1:
                    await store.share_block("bob", f"b{i}", "cy", Permission.READ_ONLY)

    anyio.run(build)
    return path


def _joined(
    conn: sqlite3.Connection, match: str, where: str, params: list[object], n: int
) -> dict[int, float]:
    """BM25 candidates ranked with the table joined (the reference)."""
    rows = conn.execute(
        "SELECT blocks_fts.rowid, bm25(blocks_fts, 0.5, 0.5, 1.0) AS s FROM blocks_fts "
        "CROSS JOIN blocks AS b ON b.pk = blocks_fts.rowid "
        f"WHERE blocks_fts MATCH ? AND {where} ORDER BY s, blocks_fts.rowid LIMIT ?",
        (match, *params, n),
    ).fetchall()
    return {int(pk): -float(s) for pk, s in rows}


@settings(max_examples=120)
@given(
    terms=st.lists(st.sampled_from(_VOCAB), min_size=1, max_size=4, unique=True),
    agent=st.sampled_from(["ada", "bob", "cy"]),
    n=st.integers(1, 60),
)
def test_bm25_ranking_before_filtering_gives_the_joined_ranking(
    shared_file: Path, terms: list[str], agent: str, n: int
) -> None:
    with sqlite3.connect(shared_file) as conn:
        me = conn.execute("SELECT id FROM agents WHERE name = ?", (agent,)).fetchone()[0]
        plan = bm25_query(conn, BLOCKS, terms, budget=250)
        assert plan is not None
        assert plan.counts
        assert not plan.newest_only
        where, params = filter_clause(BLOCKS, me, SearchFilters(), archival_only=True)
        found = bm25_candidates(conn, BLOCKS, plan, where, params, n, budget=250)
        assert list(found.items()) == list(_joined(conn, plan.match, where, params, n).items())


@settings(max_examples=60)
@given(
    agent=st.sampled_from(["ada", "bob", "cy"]),
    n=st.integers(1, 200),
    order=st.randoms(use_true_random=False),
)
def test_first_matching_is_the_filtered_prefix(
    shared_file: Path, agent: str, n: int, order: Random
) -> None:
    with sqlite3.connect(shared_file) as conn:
        me = conn.execute("SELECT id FROM agents WHERE name = ?", (agent,)).fetchone()[0]
        ranked = [int(r[0]) for r in conn.execute("SELECT pk FROM blocks")] + [99_999]
        order.shuffle(ranked)
        where, params = filter_clause(BLOCKS, me, SearchFilters(), archival_only=True)
        keep = keep_matching(conn, BLOCKS, ranked, where, params)
        expected = [pk for pk in ranked if pk in keep][:n]
        assert first_matching(conn, BLOCKS, ranked, where, params, n) == expected
