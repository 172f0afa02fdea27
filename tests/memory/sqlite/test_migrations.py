"""The SQLite store's schema migrations are named, recorded and applied once."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import anyio
import pytest

from satchel.memory import SQLiteStore
from satchel.memory.sqlite._migrations import MIGRATIONS, applied_migrations

pytestmark = pytest.mark.anyio


async def test_a_new_database_records_every_migration_in_order(tmp_path: Path) -> None:
    store = await SQLiteStore.open(tmp_path / "m.db", embedder=None)
    await store.close()
    assert store.applied_migrations == [m.name for m in MIGRATIONS]
    with sqlite3.connect(tmp_path / "m.db") as conn:
        assert applied_migrations(conn) == [m.name for m in MIGRATIONS]
        assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)


async def test_reopening_applies_nothing_and_keeps_the_data(tmp_path: Path) -> None:
    async with await SQLiteStore.open(tmp_path / "m.db", embedder=None) as store:
        await store.create_block("ada", "persona", "kept")
    async with await SQLiteStore.open(tmp_path / "m.db", embedder=None) as again:
        assert again.applied_migrations == []
        assert (await again.get_block("ada", "persona")).value == "kept"
    with sqlite3.connect(tmp_path / "m.db") as conn:
        count = conn.execute("SELECT count(*) FROM _satchel_migrations").fetchone()[0]
    assert count == len(MIGRATIONS)


async def test_migration_names_are_unique_and_ordered() -> None:
    names = [m.name for m in MIGRATIONS]
    assert len(names) == len(set(names))
    assert names == sorted(names)


async def test_stores_opened_at_once_on_one_new_file_migrate_it_once(tmp_path: Path) -> None:
    stores: list[SQLiteStore] = []

    async def open_one() -> None:
        stores.append(await SQLiteStore.open(tmp_path / "m.db", embedder=None))

    with anyio.fail_after(30):
        async with anyio.create_task_group() as group:
            for _ in range(4):
                group.start_soon(open_one)
    applied = [s.applied_migrations for s in stores]
    assert sorted(name for names in applied for name in names) == [m.name for m in MIGRATIONS]
    for store in stores:
        await store.close()


async def test_the_default_path_is_under_the_user_data_dir() -> None:
    from satchel.memory import default_path

    assert default_path().name == "satchel.db"
    assert default_path().parent.name == "satchel"


async def test_upgrading_marks_agents_that_own_records_as_set_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from satchel.memory.sqlite import _migrations

    before = [m for m in MIGRATIONS if m.name != "0003_agents_initialised"]
    monkeypatch.setattr(_migrations, "MIGRATIONS", before)
    await (await SQLiteStore.open(tmp_path / "m.db", embedder=None)).close()
    with sqlite3.connect(tmp_path / "m.db") as conn:  # rows as the old schema wrote them
        conn.executescript(
            "INSERT INTO agents (id, name) VALUES (1, 'ada'), (2, 'bob'), (3, 'cyd');"
            "INSERT INTO blocks (id, agent_id, label, value, chars, kind, permission,"
            " created_at, updated_at) VALUES ('b1', 1, 'notes', 'x', 1, 'core', 'read_write',"
            " 1700000000000000, 1700000000000000);"
            "INSERT INTO shares (block_pk, agent_id, permission) VALUES (1, 3, 'read_only');"
            "INSERT INTO messages (id, agent_id, conversation_id, role, content, created_at)"
            " VALUES ('m1', 2, 'default', 'user', 'hi', 1700000000000000);"
        )
    monkeypatch.setattr(_migrations, "MIGRATIONS", MIGRATIONS)

    async with await SQLiteStore.open(tmp_path / "m.db", embedder=None) as store:
        assert store.applied_migrations == ["0003_agents_initialised"]
        summaries = await store.describe_agents()
        used = [await store.ensure_agent(name) for name in ("ada", "bob")]
        fresh = await store.ensure_agent("cyd")  # only received a share: never used

    assert [(s.name, s.initialised, s.template) for s in summaries] == [
        ("ada", True, None),
        ("bob", True, None),
    ]
    assert all(s.created_at is not None and s.created_at.year == 2023 for s in summaries)
    assert used == [[], []]
    assert [b.label for b in fresh] == ["persona", "human"]
