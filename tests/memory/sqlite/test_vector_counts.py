"""The per-domain vector counts kept by triggers (migration ``0005_vector_counts``),
which the vector index checks its size against on open instead of a ``count(*)``."""

from __future__ import annotations

import logging
import sqlite3
import sys
from pathlib import Path

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from satchel.memory import BlockKind, Permission, SQLiteStore
from satchel.memory.sqlite._messages import BLOCKS, MESSAGES

sys.path.insert(0, str(Path(__file__).parent))
from index_crash_writer import SeededEmbedder
from test_vector_index import _assert_index_agrees, _fill


def _counts(conn: sqlite3.Connection) -> tuple[dict[int, int], dict[int, int]]:
    """(the triggers' counts, a count(*) of the rows), by domain, zeros included."""
    kept = {BLOCKS: 0, MESSAGES: 0}
    kept.update(conn.execute("SELECT domain, n FROM vector_counts").fetchall())
    real = {BLOCKS: 0, MESSAGES: 0}
    real.update(conn.execute("SELECT domain, count(*) FROM embeddings GROUP BY domain"))
    return kept, real


def test_the_counts_follow_inserts_rewrites_deletes_and_a_model_change(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    anyio.run(_fill, path, 12)

    async def change() -> None:
        async with await SQLiteStore.open(path, embedder=SeededEmbedder()) as store:
            await store.delete_block("ada", "entry-3")
            await store.update_block_text("ada", "entry-4", "entry text rewritten")
            await store.create_block("ada", "late", "entry text late", kind=BlockKind.ARCHIVAL)
            await store.reembed()  # drops every vector and writes them again

    anyio.run(change)
    with sqlite3.connect(path) as conn:
        kept, real = _counts(conn)
    assert kept == real
    assert real[BLOCKS] >= 12
    assert real[MESSAGES] == 12


_OPERATIONS = st.lists(
    st.tuples(
        st.sampled_from(["insert", "replace", "delete", "delete_domain", "bad_insert"]),
        st.sampled_from([BLOCKS, MESSAGES]),
        st.integers(min_value=1, max_value=8),
    ),
    max_size=40,
)


@settings(max_examples=40, deadline=None)
@given(operations=_OPERATIONS)
def test_the_counts_equal_the_rows_after_any_sequence_of_writes(
    tmp_path_factory: pytest.TempPathFactory, operations: list[tuple[str, int, int]]
) -> None:
    path = tmp_path_factory.mktemp("counts") / "m.db"
    anyio.run(_open_and_close, path)
    vec = b"\0" * 64
    with sqlite3.connect(path, isolation_level=None) as conn:
        for operation, domain, item in operations:
            if operation in ("insert", "replace"):
                conn.execute(
                    "INSERT OR REPLACE INTO embeddings (domain, item, agent_id, vec) "
                    "VALUES (?, ?, 1, ?)",
                    (domain, item, vec),
                )
            elif operation == "delete":
                conn.execute("DELETE FROM embeddings WHERE domain = ? AND item = ?", (domain, item))
            elif operation == "delete_domain":
                conn.execute("DELETE FROM embeddings WHERE domain = ?", (domain,))
            else:  # a statement that fails leaves no count behind
                with pytest.raises(sqlite3.IntegrityError):
                    conn.execute(
                        "INSERT INTO embeddings (domain, item, agent_id, vec) "
                        "VALUES (?, ?, 1, NULL)",
                        (domain, item + 100),
                    )
            kept, real = _counts(conn)
            assert kept == real


async def _open_and_close(path: Path) -> None:
    await (await SQLiteStore.open(path, embedder=None)).close()


def test_an_upgraded_file_counts_the_vectors_it_already_holds(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    anyio.run(_fill, path, 9)
    with sqlite3.connect(path) as conn:  # the file as it was before the migration
        conn.executescript(
            "DROP TRIGGER embeddings_count_insert; DROP TRIGGER embeddings_count_delete;"
            "DROP TRIGGER embeddings_count_move; DROP TABLE vector_counts;"
            "DELETE FROM _satchel_migrations WHERE name = '0005_vector_counts';"
        )

    async def check() -> None:
        async with await SQLiteStore.open(path, embedder=SeededEmbedder()) as store:
            assert store.applied_migrations == ["0005_vector_counts"]
            await _assert_index_agrees(store)

    anyio.run(check)
    with sqlite3.connect(path) as conn:
        kept, real = _counts(conn)
    assert kept == real == {BLOCKS: 9, MESSAGES: 9}


def test_a_wrong_count_leaves_the_index_right_and_quiet(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "m.db"
    anyio.run(_fill, path, 10)
    with sqlite3.connect(path) as conn:  # the count is off, the rows and the index agree
        conn.execute("UPDATE vector_counts SET n = n + 5")

    async def check() -> None:
        async with await SQLiteStore.open(path, embedder=SeededEmbedder()) as store:
            await _assert_index_agrees(store)
            await store.create_block(
                "ada",
                "late",
                "entry text late",
                kind=BlockKind.ARCHIVAL,
                permission=Permission.ADMIN,
            )
            hits = await store.search("ada", "entry text late", mode="vector", limit=1)
            assert [h.label for h in hits] == ["late"]

    with caplog.at_level(logging.WARNING, logger="satchel.memory"):
        anyio.run(check)
    assert "disagreed" not in caplog.text
