"""Learned (query, tool) pairs in SQLite, in the same database file as memory.

The table has its own ordered, named, append-only migrations, run by
:mod:`satchel.db._migrations` and recorded as component ``meta`` in the file's one
``_satchel_migrations`` table; it carries a ``meta_`` prefix so it never steps on the
memory or consent tables. Writes run in ``BEGIN IMMEDIATE`` transactions in a worker
thread; ``sqlite3`` errors are mapped to :class:`~satchel.StorageError` here.
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from typing import Final

from satchel._errors import InvalidInputError
from satchel.db._migrations import Migration
from satchel.db.sqlite import SQLiteFile
from satchel.meta._usage import DEFAULT_MAX_PAIRS, LearnedPair, check_pair

__all__ = ["SQLiteUsageStore"]

COMPONENT: Final = "meta"
"""The learned pairs' name in the migrations table."""

MIGRATIONS: Final[tuple[Migration, ...]] = (
    Migration(
        name="0001_meta_learned",
        sql="""
            CREATE TABLE meta_learned (
                catalog TEXT NOT NULL,
                query TEXT NOT NULL,
                tool TEXT NOT NULL,
                uses INTEGER NOT NULL DEFAULT 1,
                last_used REAL NOT NULL,
                seq INTEGER NOT NULL,
                PRIMARY KEY (catalog, query, tool)
            );
            CREATE INDEX meta_learned_recent ON meta_learned (catalog, seq);
        """,
    ),
)
"""Every migration of the learned-pairs table, in the order they run. Append only."""

_COLUMNS: Final = "query, tool, uses, last_used"


def _pair(row: tuple[str, str, int, float]) -> LearnedPair:
    return LearnedPair(query=row[0], tool=row[1], uses=row[2], last_used=row[3])


class SQLiteUsageStore:
    """A :class:`~satchel.meta.UsageStore` in a SQLite file (typically the memory
    database), shared by every process that opens the file.

    Args:
        path: The database file; created if missing.
        max_pairs: The most pairs one catalog keeps (the least recently used go).
        busy_timeout: Seconds to wait for another process's write lock.

    Example:
        >>> meta = MetaTools(registry, usage=SQLiteUsageStore("satchel.db"))
    """

    def __init__(
        self,
        path: str | Path,
        *,
        max_pairs: int = DEFAULT_MAX_PAIRS,
        busy_timeout: float = 10.0,
    ) -> None:
        if max_pairs < 1:
            raise InvalidInputError(f"max_pairs must be at least 1, not {max_pairs}")
        self.path = Path(path)
        self.max_pairs = max_pairs
        self.busy_timeout = busy_timeout
        self._file = SQLiteFile(
            self.path,
            what="learned-pairs store",
            component=COMPONENT,
            migrations=MIGRATIONS,
            busy_timeout=busy_timeout,
        )

    async def learn(self, catalog: str, query: str, tool: str) -> LearnedPair:
        """See :meth:`~satchel.meta.UsageStore.learn`."""
        query, tool = check_pair(query, tool)
        limit = self.max_pairs

        def learn(conn: sqlite3.Connection) -> LearnedPair:
            (seq,) = conn.execute(
                "SELECT coalesce(max(seq), 0) + 1 FROM meta_learned WHERE catalog = ?",
                (catalog,),
            ).fetchone()
            conn.execute(
                "INSERT INTO meta_learned (catalog, query, tool, uses, last_used, seq) "
                "VALUES (?, ?, ?, 1, ?, ?) ON CONFLICT (catalog, query, tool) DO UPDATE "
                "SET uses = uses + 1, last_used = excluded.last_used, seq = excluded.seq",
                (catalog, query, tool, time.time(), seq),
            )
            conn.execute(
                "DELETE FROM meta_learned WHERE catalog = ? AND seq IN (SELECT seq FROM "
                "meta_learned WHERE catalog = ? ORDER BY seq DESC LIMIT -1 OFFSET ?)",
                (catalog, catalog, limit),
            )
            row = conn.execute(
                f"SELECT {_COLUMNS} FROM meta_learned WHERE catalog = ? AND query = ? AND tool = ?",
                (catalog, query, tool),
            ).fetchone()
            return _pair(row)

        return await self._file.call(learn, write=True)

    async def pairs(self, catalog: str, *, tool: str | None = None) -> list[LearnedPair]:
        """See :meth:`~satchel.meta.UsageStore.pairs`."""

        def pairs(conn: sqlite3.Connection) -> list[LearnedPair]:
            sql = f"SELECT {_COLUMNS} FROM meta_learned WHERE catalog = ?"
            args: tuple[str, ...] = (catalog,)
            if tool is not None:
                sql, args = sql + " AND tool = ?", (catalog, tool)
            return [_pair(row) for row in conn.execute(sql + " ORDER BY seq DESC", args)]

        return await self._file.call(pairs, write=False)

    async def forget(
        self, catalog: str, *, query: str | None = None, tool: str | None = None
    ) -> int:
        """See :meth:`~satchel.meta.UsageStore.forget`."""
        sql, args = "DELETE FROM meta_learned WHERE catalog = ?", [catalog]
        if query is not None:
            sql += " AND query = ?"
            args.append(" ".join(query.split()))
        if tool is not None:
            sql += " AND tool = ?"
            args.append(tool)

        def forget(conn: sqlite3.Connection) -> int:
            return conn.execute(sql, args).rowcount

        return await self._file.call(forget, write=True)

    def close(self) -> None:
        """Close the file (idempotent); later calls raise :class:`~satchel.StorageError`."""
        self._file.close()
