"""The one schema-migration runner, for SQLite and for PostgreSQL.

Two components keep tables in a database: the memory store and the approval store
(:mod:`satchel.consent`). Each declares its migrations as an ordered, append-only list
of named SQL scripts (:class:`Migration`); this module applies the pending ones, in
order, each in one transaction together with its record, and records every component's
migrations in ONE table per database: ``_satchel_migrations`` in a SQLite file,
``satchel_migrations`` in PostgreSQL, keyed by ``(component, name)``. Several processes
may open a new database at once; every migration still runs exactly once.

Why hand-written rather than Alembic or yoyo: the schemas are plain SQL scripts (FTS5
virtual tables and triggers, pgvector and text-search configurations), the runner must
work on the store's own connection (SQLite's single writer, psycopg's async
connection) inside the store's open, and it is some 150 lines; a migration framework
would bring its own connections, configuration files and an ORM's dependencies.

Databases made before this runner kept one table per component
(``_satchel_migrations (name, applied_at)`` for memory and
``_satchel_consent_migrations`` in SQLite; ``satchel_migrations (position, name,
applied_at)`` and ``satchel_consent_migrations`` in PostgreSQL). The first open moves
their records into the one table, keeping the order and the times, and drops the old
consent table; nothing is applied twice and no data is touched.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from satchel._errors import SatchelUsageError

if TYPE_CHECKING:  # psycopg loads only when a PostgreSQL database is opened
    import psycopg

__all__ = [
    "LOCK_KEY",
    "POSTGRES_TABLE",
    "SQLITE_TABLE",
    "Migration",
    "add_migration",
    "migrate_postgres",
    "migrate_sqlite",
    "postgres_applied",
    "sqlite_applied",
]

SQLITE_TABLE: Final = "_satchel_migrations"
"""The migrations table of a SQLite file."""

POSTGRES_TABLE: Final = "satchel_migrations"
"""The migrations table of a PostgreSQL database."""

LOCK_KEY: Final = 0x5A7C4E1
"""The PostgreSQL advisory lock key that serialises schema changes (every component's
migrations, the memory store's embedding-model claim) across processes."""

_LEGACY_SQLITE: Final = {"consent": "_satchel_consent_migrations"}
_LEGACY_POSTGRES: Final = {"consent": "satchel_consent_migrations"}
_LEGACY_OWNER: Final = "memory"
"""The component whose records the old one-component table held."""


@dataclass(kw_only=True, frozen=True)
class Migration:
    """One named SQL script. Never edit or reorder a migration that has shipped:
    append a new one."""

    name: str
    sql: str


def add_migration(steps: list[Migration], name: str, sql: str) -> None:
    """Append a migration called ``name`` that runs the SQL script ``sql`` to a
    component's list ``steps``.

    Raises:
        SatchelUsageError: ``steps`` has a migration of that name already.
    """
    if any(step.name == name for step in steps):
        raise SatchelUsageError(f"duplicate migration name {name!r}")
    steps.append(Migration(name=name, sql=sql))


# --- SQLite ------------------------------------------------------------------------

_SQLITE_CREATE = f"""
    CREATE TABLE {SQLITE_TABLE} (
        component TEXT NOT NULL,
        name TEXT NOT NULL,
        applied_at TEXT NOT NULL DEFAULT (datetime('now')),
        PRIMARY KEY (component, name)
    )
"""


def _sqlite_columns(conn: sqlite3.Connection, table: str) -> list[str]:
    return [str(row[1]) for row in conn.execute(f"PRAGMA table_info({table})").fetchall()]


def _sqlite_needs_setup(conn: sqlite3.Connection) -> bool:
    if "component" not in _sqlite_columns(conn, SQLITE_TABLE):
        return True
    return any(_sqlite_columns(conn, legacy) for legacy in _LEGACY_SQLITE.values())


def _sqlite_setup(conn: sqlite3.Connection) -> None:
    """Create the migrations table, or move old per-component tables into it."""
    if not _sqlite_needs_setup(conn):
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        columns = _sqlite_columns(conn, SQLITE_TABLE)
        if not columns:
            conn.execute(_SQLITE_CREATE)
        elif "component" not in columns:
            conn.execute(f"ALTER TABLE {SQLITE_TABLE} RENAME TO {SQLITE_TABLE}_old")
            conn.execute(_SQLITE_CREATE)
            conn.execute(
                f"INSERT INTO {SQLITE_TABLE} (component, name, applied_at) "
                f"SELECT ?, name, applied_at FROM {SQLITE_TABLE}_old ORDER BY rowid",
                (_LEGACY_OWNER,),
            )
            conn.execute(f"DROP TABLE {SQLITE_TABLE}_old")
        for component, legacy in _LEGACY_SQLITE.items():
            if _sqlite_columns(conn, legacy):
                conn.execute(
                    f"INSERT OR IGNORE INTO {SQLITE_TABLE} (component, name, applied_at) "
                    f"SELECT ?, name, applied_at FROM {legacy} ORDER BY rowid",
                    (component,),
                )
                conn.execute(f"DROP TABLE {legacy}")
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


def sqlite_applied(conn: sqlite3.Connection, component: str) -> list[str]:
    """The names of ``component``'s migrations recorded in the file, in the order
    applied (upgrading an old file's migrations tables first)."""
    _sqlite_setup(conn)
    rows = conn.execute(
        f"SELECT name FROM {SQLITE_TABLE} WHERE component = ? ORDER BY rowid", (component,)
    ).fetchall()
    return [str(row[0]) for row in rows]


def _quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def migrate_sqlite(
    conn: sqlite3.Connection, component: str, steps: Sequence[Migration]
) -> list[str]:
    """Apply ``component``'s pending migrations, each atomically with its record.

    ``conn`` must be in autocommit mode (``isolation_level=None``). Returns the names
    applied now (empty when the file was up to date). Safe to run from several
    processes at once: a migration another process applied first is skipped (its
    record's key makes the loser's transaction fail and roll back).
    """
    applied: list[str] = []
    for step in steps:
        if step.name in sqlite_applied(conn, component):
            continue
        record = (
            f"INSERT INTO {SQLITE_TABLE} (component, name) "
            f"VALUES ({_quote(component)}, {_quote(step.name)})"
        )
        try:
            conn.executescript(f"BEGIN IMMEDIATE;\n{step.sql};\n{record};\nCOMMIT;")
        except sqlite3.Error:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            if step.name in sqlite_applied(conn, component):
                continue  # another process won the race
            raise
        applied.append(step.name)
    return applied


# --- PostgreSQL --------------------------------------------------------------------

_POSTGRES_CREATE = f"""
    CREATE TABLE {POSTGRES_TABLE} (
        component text NOT NULL,
        position integer NOT NULL,
        name text NOT NULL,
        applied_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT {POSTGRES_TABLE}_pk PRIMARY KEY (component, position),
        CONSTRAINT {POSTGRES_TABLE}_name UNIQUE (component, name)
    )
"""


async def _pg_columns(conn: psycopg.AsyncConnection[Any], table: str) -> list[str]:
    cursor = await conn.execute(
        "SELECT attname FROM pg_attribute WHERE attrelid = to_regclass(%s) "
        "AND attnum > 0 AND NOT attisdropped",
        (table,),
    )
    return [str(row[0]) for row in await cursor.fetchall()]


async def _pg_setup(conn: psycopg.AsyncConnection[Any]) -> None:
    """Create the migrations table, or move old per-component tables into it. Runs in
    a transaction holding :data:`LOCK_KEY`."""
    columns = await _pg_columns(conn, POSTGRES_TABLE)
    if not columns:
        await conn.execute(_POSTGRES_CREATE.encode())
    elif "component" not in columns:
        await conn.execute(f"ALTER TABLE {POSTGRES_TABLE} RENAME TO {POSTGRES_TABLE}_old".encode())
        await conn.execute(_POSTGRES_CREATE.encode())
        await conn.execute(
            f"INSERT INTO {POSTGRES_TABLE} (component, position, name, applied_at) "
            f"SELECT %s, position, name, applied_at FROM {POSTGRES_TABLE}_old".encode(),
            (_LEGACY_OWNER,),
        )
        await conn.execute(f"DROP TABLE {POSTGRES_TABLE}_old".encode())
    for component, legacy in _LEGACY_POSTGRES.items():
        if await _pg_columns(conn, legacy):
            await conn.execute(
                f"INSERT INTO {POSTGRES_TABLE} (component, position, name, applied_at) "
                f"SELECT %s, position, name, applied_at FROM {legacy} "
                "ON CONFLICT DO NOTHING".encode(),
                (component,),
            )
            await conn.execute(f"DROP TABLE {legacy}".encode())


async def postgres_applied(conn: psycopg.AsyncConnection[Any], component: str) -> list[str]:
    """The names of ``component``'s migrations recorded in the database, in order."""
    cursor = await conn.execute(
        f"SELECT name FROM {POSTGRES_TABLE} WHERE component = %s ORDER BY position".encode(),
        (component,),
    )
    return [str(row[0]) for row in await cursor.fetchall()]


async def migrate_postgres(
    conn: psycopg.AsyncConnection[Any], component: str, steps: Sequence[Migration]
) -> list[str]:
    """Apply ``component``'s pending migrations, each atomically with its record,
    under the transaction-level advisory lock :data:`LOCK_KEY`.

    ``conn`` must be in autocommit mode. Returns the names applied now (empty when the
    database was up to date).
    """
    async with conn.transaction():
        # The lock first: two first-ever openers would otherwise race on CREATE TABLE.
        await conn.execute("SELECT pg_advisory_xact_lock(%s)", (LOCK_KEY,))
        await _pg_setup(conn)
        done = await postgres_applied(conn, component)
    applied: list[str] = []
    for position, step in enumerate(steps, start=1):
        if step.name in done:
            continue
        async with conn.transaction():
            await conn.execute("SELECT pg_advisory_xact_lock(%s)", (LOCK_KEY,))
            if step.name in await postgres_applied(conn, component):
                continue  # another process applied it while we waited for the lock
            await conn.execute(step.sql.encode())
            await conn.execute(
                f"INSERT INTO {POSTGRES_TABLE} (component, position, name) "
                "VALUES (%s, %s, %s)".encode(),
                (component, position, step.name),
            )
        applied.append(step.name)
    return applied
