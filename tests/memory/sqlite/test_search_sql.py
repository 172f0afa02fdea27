"""SQLite search internals: bounded BM25 and the exact pre-filter fallback."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from memory.conftest import HashEmbedder
from satchel.memory import BlockKind, SearchFilters, SQLiteStore
from satchel.memory.sqlite._messages import BLOCKS
from satchel.memory.sqlite._search_sql import bm25_candidates, bm25_query, filter_clause

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
