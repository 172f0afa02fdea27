"""Approval requests in SQLite, in the same database file as the memory store.

The consent tables have their own ordered, named, append-only migrations, run by
:mod:`satchel.db._migrations` and recorded as component ``consent`` in the file's one
``_satchel_migrations`` table (next to the memory store's); their tables carry a
``consent_`` prefix, so the two never step on each other.

Concurrency: the file is in WAL mode; writes run in ``BEGIN IMMEDIATE`` transactions (so
two processes wait for each other's lock instead of deadlocking), the status
compare-and-set is one ``UPDATE ... WHERE status = ?``, and every call runs in a worker
thread so the event loop never blocks on SQLite. ``sqlite3`` errors are mapped to
:class:`~satchel.StorageError` here.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Final

from satchel.consent._models import ApprovalRequest, ApprovalStatus
from satchel.db._migrations import Migration
from satchel.db.sqlite import SQLiteFile

__all__ = ["SQLiteApprovalStore"]

_Requests = list[ApprovalRequest]
COMPONENT: Final = "consent"
"""The approval store's name in the migrations table."""

MIGRATIONS: Final[tuple[Migration, ...]] = (
    Migration(
        name="0001_consent_approvals",
        sql="""
            CREATE TABLE consent_approvals (
                id TEXT PRIMARY KEY,
                scope_key TEXT NOT NULL,
                status TEXT NOT NULL,
                created_at REAL NOT NULL,
                record TEXT NOT NULL
            );
            CREATE INDEX consent_approvals_status ON consent_approvals (status, created_at);
            CREATE INDEX consent_approvals_scope
                ON consent_approvals (scope_key, status, created_at);
        """,
    ),
)
"""Every migration of the consent tables, in the order they run. Append only."""


def _row(request: ApprovalRequest) -> tuple[str, str, str, float, str]:
    return (
        request.id,
        request.scope.key,
        request.status,
        request.created_at.timestamp(),
        request.model_dump_json(),
    )


def _load(rows: list[tuple[str]]) -> _Requests:
    return [ApprovalRequest.model_validate_json(row[0]) for row in rows]


class SQLiteApprovalStore:
    """An :class:`~satchel.consent.ApprovalStore` in a SQLite file, shareable between
    processes (the ``satchel approvals`` CLI and a running server use the same file).

    The file is opened, switched to WAL and migrated on first use, in a worker thread.

    Args:
        path: The database file (typically the memory store's); created if missing.
        busy_timeout: Seconds to wait for another process's write lock.

    Example:
        >>> broker = PermissionBroker(SQLiteApprovalStore(Path("satchel.db")))
    """

    def __init__(self, path: str | Path, *, busy_timeout: float = 10.0) -> None:
        self.path = Path(path)
        self.busy_timeout = busy_timeout
        self._file = SQLiteFile(
            self.path,
            what="approval store",
            component=COMPONENT,
            migrations=MIGRATIONS,
            busy_timeout=busy_timeout,
        )

    async def insert(self, request: ApprovalRequest) -> None:
        """Store a new request."""

        def insert(conn: sqlite3.Connection) -> None:
            conn.execute(
                "INSERT INTO consent_approvals (id, scope_key, status, created_at, record)"
                " VALUES (?, ?, ?, ?, ?)",
                _row(request),
            )

        await self._file.call(insert, write=True)

    async def get(self, request_id: str) -> ApprovalRequest | None:
        """The request with this id, or ``None``."""

        def get(conn: sqlite3.Connection) -> _Requests:
            rows = conn.execute(
                "SELECT record FROM consent_approvals WHERE id = ?", (request_id,)
            ).fetchall()
            return _load(rows)

        found = await self._file.call(get, write=False)
        return found[0] if found else None

    async def list(self, status: ApprovalStatus | None = None) -> _Requests:
        """Requests with this status (all when ``None``), oldest first."""

        def select(conn: sqlite3.Connection) -> _Requests:
            if status is None:
                rows = conn.execute(
                    "SELECT record FROM consent_approvals ORDER BY created_at, rowid"
                ).fetchall()
            else:
                rows = conn.execute(
                    "SELECT record FROM consent_approvals WHERE status = ?"
                    " ORDER BY created_at, rowid",
                    (status,),
                ).fetchall()
            return _load(rows)

        return await self._file.call(select, write=False)

    async def by_scope(self, scope_key: str, status: ApprovalStatus) -> _Requests:
        """Requests with this scope key and status, oldest first."""

        def select(conn: sqlite3.Connection) -> _Requests:
            rows = conn.execute(
                "SELECT record FROM consent_approvals WHERE scope_key = ? AND status = ?"
                " ORDER BY created_at, rowid",
                (scope_key, status),
            ).fetchall()
            return _load(rows)

        return await self._file.call(select, write=False)

    async def swap(self, request: ApprovalRequest, *, expect: ApprovalStatus) -> bool:
        """Replace the record if its stored status is still ``expect`` (one ``UPDATE``)."""

        def update(conn: sqlite3.Connection) -> bool:
            cursor = conn.execute(
                "UPDATE consent_approvals SET status = ?, record = ? WHERE id = ? AND status = ?",
                (request.status, request.model_dump_json(), request.id, expect),
            )
            return cursor.rowcount == 1

        return await self._file.call(update, write=True)

    async def close(self) -> None:
        """Close the connection (idempotent)."""
        self._file.close()

    @property
    def applied_migrations(self) -> list[str]:
        """The migrations this process applied when it opened the file."""
        return self._file.applied_migrations
