"""The one migration runner: every component's migrations in one table per database,
and databases made by the code before it upgrade in place, losing nothing.

``tests/memory/data/legacy_before_issue12.db`` was written by satchel as it was before
the runner (one block shared, one message, one pending approval request), with
``_satchel_migrations (name, applied_at)`` for memory and
``_satchel_consent_migrations`` for the approvals."""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from postgres_server import PostgresServer
from satchel import SatchelUsageError
from satchel.consent import (
    ConsentScope,
    PermissionBroker,
    PostgresApprovalStore,
    SQLiteApprovalStore,
)
from satchel.consent._postgres import MIGRATIONS as CONSENT_PG
from satchel.consent._sqlite import MIGRATIONS as CONSENT_SQLITE
from satchel.db._migrations import Migration, add_migration, migrate_sqlite
from satchel.memory import SQLiteStore
from satchel.memory.postgres import PostgresStore
from satchel.memory.postgres._migrations import MIGRATIONS as MEMORY_PG
from satchel.memory.sqlite._migrations import MIGRATIONS as MEMORY_SQLITE

pytestmark = pytest.mark.anyio

LEGACY = Path(__file__).parent / "memory" / "data" / "legacy_before_issue12.db"
SCOPE = ConsentScope.tool_execution("delete_file", {"path": "a.txt"}, agent="ada")


def tables(conn: sqlite3.Connection) -> set[str]:
    return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


@pytest.fixture
def legacy(tmp_path: Path) -> Path:
    path = tmp_path / "satchel.db"
    shutil.copyfile(LEGACY, path)
    return path


async def test_an_old_sqlite_file_upgrades_in_place_applying_nothing_twice(legacy: Path) -> None:
    with sqlite3.connect(legacy) as conn:
        times = dict(conn.execute("SELECT name, applied_at FROM _satchel_migrations"))
        times |= dict(conn.execute("SELECT name, applied_at FROM _satchel_consent_migrations"))
    # migrations added after the file was made (block history, issue 17) run once
    newer = [m.name for m in MEMORY_SQLITE if m.name not in times]
    async with await SQLiteStore.open(legacy, embedder=None) as store:
        assert store.applied_migrations == newer
        assert (await store.get_block("ada", "trip")).value == "Kyoto in April"
        assert (await store.get_block("bob", "ada/trip")).value == "Kyoto in April"
        assert [m.content for m in await store.list_messages("ada")] == [
            "hello from the old schema"
        ]
        assert {b.label for b in await store.list_blocks("ada")} >= {"persona", "human"}
    approvals = SQLiteApprovalStore(legacy)
    [request] = await approvals.list()
    assert approvals.applied_migrations == []
    assert (request.status, request.scope) == ("pending", SCOPE)
    await approvals.close()
    with sqlite3.connect(legacy) as conn:
        recorded = conn.execute(
            "SELECT component, name, applied_at FROM _satchel_migrations ORDER BY rowid"
        ).fetchall()
        assert "_satchel_consent_migrations" not in tables(conn)
    older = [("memory", m.name) for m in MEMORY_SQLITE if m.name in times]
    consent = [("consent", m.name) for m in CONSENT_SQLITE]
    assert [(c, n) for c, n, _ in recorded] == older + consent + [("memory", n) for n in newer]
    assert {n: t for _, n, t in recorded if n in times} == times
    async with await SQLiteStore.open(legacy, embedder=None) as store:
        assert store.applied_migrations == []  # nothing twice


async def test_an_old_file_without_approvals_gets_the_consent_tables_on_first_use(
    legacy: Path,
) -> None:
    with sqlite3.connect(legacy) as conn:
        conn.executescript("DROP TABLE consent_approvals; DROP TABLE _satchel_consent_migrations;")
    approvals = SQLiteApprovalStore(legacy)
    async with PermissionBroker(approvals) as broker:
        await broker.request(SCOPE, "delete a.txt", "cli", agent="ada", wait=False)
    assert approvals.applied_migrations == [m.name for m in CONSENT_SQLITE]
    async with await SQLiteStore.open(legacy, embedder=None) as store:
        assert "0001_blocks_messages_fts" not in store.applied_migrations  # only newer ones
        assert (await store.get_block("ada", "trip")).value == "Kyoto in April"


def test_a_component_gets_only_its_own_pending_migrations(tmp_path: Path) -> None:
    first: list[Migration] = []
    add_migration(first, "0001_a", "CREATE TABLE a (x)")
    second: list[Migration] = []
    add_migration(second, "0001_a", "CREATE TABLE b (x)")  # the same name, elsewhere
    with sqlite3.connect(tmp_path / "x.db", isolation_level=None) as conn:
        assert migrate_sqlite(conn, "one", first) == ["0001_a"]
        assert migrate_sqlite(conn, "two", second) == ["0001_a"]
        assert migrate_sqlite(conn, "one", first) == []
        add_migration(first, "0002_c", "CREATE TABLE c (x)")
        assert migrate_sqlite(conn, "one", first) == ["0002_c"]
        assert {"a", "b", "c"} <= tables(conn)
        rows = conn.execute("SELECT component, name FROM _satchel_migrations ORDER BY rowid")
        assert rows.fetchall() == [("one", "0001_a"), ("two", "0001_a"), ("one", "0002_c")]


def test_a_failing_migration_leaves_no_record_and_no_half_applied_schema(tmp_path: Path) -> None:
    steps: list[Migration] = []
    add_migration(steps, "0001_bad", "CREATE TABLE d (x); INSERT INTO nowhere VALUES (1)")
    with sqlite3.connect(tmp_path / "x.db", isolation_level=None) as conn:
        with pytest.raises(sqlite3.OperationalError, match="nowhere"):
            migrate_sqlite(conn, "one", steps)
        assert "d" not in tables(conn)
        assert conn.execute("SELECT count(*) FROM _satchel_migrations").fetchone() == (0,)


def test_a_name_used_twice_in_one_list_is_refused() -> None:
    steps: list[Migration] = []
    add_migration(steps, "0001_a", "SELECT 1")
    with pytest.raises(SatchelUsageError, match="duplicate migration name '0001_a'"):
        add_migration(steps, "0001_a", "SELECT 2")
    assert [s.name for s in steps] == ["0001_a"]


# --- PostgreSQL: the old tables recreated by SQL, as the code before the runner made
# them --------------------------------------------------------------------------------

_OLD_TABLE = """
    CREATE TABLE {} (
        position integer PRIMARY KEY,
        name text NOT NULL UNIQUE,
        applied_at timestamptz NOT NULL DEFAULT now()
    )
"""


def pg_rows(url: str, sql: str) -> list[tuple[Any, ...]]:
    with psycopg.connect(url) as conn:
        return conn.execute(sql.encode()).fetchall()


@pytest.fixture
def pg_url(postgres_server: PostgresServer) -> Iterator[str]:
    url = postgres_server.create_database()
    yield url
    postgres_server.drop_database(url)


@pytest.mark.postgres
async def test_an_old_postgres_database_upgrades_in_place_applying_nothing_twice(
    pg_url: str,
) -> None:
    async with await PostgresStore.open(pg_url, embedder=None) as store:
        await store.create_block("ada", "trip", "Kyoto in April")
    approvals = PostgresApprovalStore(pg_url)
    async with PermissionBroker(approvals) as broker:
        await broker.request(SCOPE, "delete a.txt", "cli", agent="ada", wait=False)
    with psycopg.connect(pg_url, autocommit=True) as conn, conn.transaction():
        conn.execute("DROP TABLE satchel_migrations")
        for table, steps in (
            ("satchel_migrations", MEMORY_PG),
            ("satchel_consent_migrations", CONSENT_PG),
        ):
            conn.execute(_OLD_TABLE.format(table).encode())
            for position, step in enumerate(steps, start=1):
                conn.execute(
                    f"INSERT INTO {table} (position, name) VALUES (%s, %s)".encode(),
                    (position, step.name),
                )
    async with await PostgresStore.open(pg_url, embedder=None) as again:
        assert again.applied_migrations == []
        assert (await again.get_block("ada", "trip")).value == "Kyoto in April"
    approvals = PostgresApprovalStore(pg_url)
    [request] = await approvals.list()
    assert approvals.applied_migrations == []
    assert request.scope == SCOPE
    await approvals.close()
    recorded = pg_rows(
        pg_url, "SELECT component, position, name FROM satchel_migrations ORDER BY 1 DESC, 2"
    )
    assert recorded == [("memory", i, m.name) for i, m in enumerate(MEMORY_PG, start=1)] + [
        ("consent", i, m.name) for i, m in enumerate(CONSENT_PG, start=1)
    ]
    assert pg_rows(pg_url, "SELECT to_regclass('satchel_consent_migrations')") == [(None,)]
