"""The host's ledger in a SQLite file, the agent's memory database.

Its two tables carry an ``up_`` prefix and their own ordered, append-only migrations,
recorded as component ``up`` in the file's ``_satchel_migrations`` table
(:mod:`satchel.db._migrations`). ``sqlite3`` errors become
:class:`~satchel.StorageError` in :class:`~satchel.db.sqlite.SQLiteFile`.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Final

from satchel.db._migrations import Migration
from satchel.db.sqlite import SQLiteFile

__all__ = ["SQLiteUpLedger"]

COMPONENT: Final = "up"
"""The ledger's name in the migrations table."""

MIGRATIONS: Final[tuple[Migration, ...]] = (
    Migration(
        name="0001_up_ledger",
        sql="""
            CREATE TABLE up_answered (
                channel TEXT NOT NULL,
                message_id TEXT NOT NULL,
                answered_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
                PRIMARY KEY (channel, message_id)
            );
            CREATE TABLE up_cursors (
                key TEXT PRIMARY KEY,
                value TEXT NOT NULL
            );
        """,
    ),
)
"""Every migration of the ledger's tables, in the order they run. Append only."""


class SQLiteUpLedger:
    """An :class:`~satchel.up.UpLedger` in a SQLite file (typically the memory
    database).

    Args:
        path: The database file; created if missing.
        busy_timeout: Seconds to wait for another process's write lock.

    Example:
        >>> ledger = SQLiteUpLedger("satchel.db")
        >>> await ledger.mark("telegram", "42")
        True
    """

    def __init__(self, path: str | Path, *, busy_timeout: float = 10.0) -> None:
        self.path = Path(path)
        self._file = SQLiteFile(
            self.path,
            what="satchel up ledger",
            component=COMPONENT,
            migrations=MIGRATIONS,
            busy_timeout=busy_timeout,
        )

    async def answered(self, channel: str, message_id: str) -> bool:
        """See :meth:`~satchel.up.UpLedger.answered`."""

        def answered(conn: sqlite3.Connection) -> bool:
            row = conn.execute(
                "SELECT 1 FROM up_answered WHERE channel = ? AND message_id = ?",
                (channel, message_id),
            ).fetchone()
            return row is not None

        return await self._file.call(answered, write=False)

    async def mark(self, channel: str, message_id: str) -> bool:
        """See :meth:`~satchel.up.UpLedger.mark`."""

        def mark(conn: sqlite3.Connection) -> bool:
            cursor = conn.execute(
                "INSERT INTO up_answered (channel, message_id) VALUES (?, ?) "
                "ON CONFLICT (channel, message_id) DO NOTHING",
                (channel, message_id),
            )
            return cursor.rowcount == 1

        return await self._file.call(mark, write=True)

    async def get_cursor(self, key: str) -> str | None:
        """See :meth:`~satchel.up.UpLedger.get_cursor`."""

        def get(conn: sqlite3.Connection) -> str | None:
            row = conn.execute("SELECT value FROM up_cursors WHERE key = ?", (key,)).fetchone()
            return None if row is None else str(row[0])

        return await self._file.call(get, write=False)

    async def set_cursor(self, key: str, value: str) -> None:
        """See :meth:`~satchel.up.UpLedger.set_cursor`."""

        def put(conn: sqlite3.Connection) -> None:
            conn.execute(
                "INSERT INTO up_cursors (key, value) VALUES (?, ?) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (key, value),
            )

        await self._file.call(put, write=True)

    async def close(self) -> None:
        """Close the file (idempotent)."""
        self._file.close()
