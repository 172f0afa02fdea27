"""Approval requests in PostgreSQL, for many satchel processes on many machines.

It mirrors :class:`~satchel.consent.SQLiteApprovalStore`:

* **Schema**: ordered, named, append-only migrations of their own, run by
  :mod:`satchel.db._migrations` and recorded as component ``consent`` in the database's
  one ``satchel_migrations`` table, each applied in one transaction together with its
  record under a transaction-level advisory lock, so any number of processes may open
  a new database at once. The table
  is ``satchel_consent_approvals``: the request as JSON (``json``, not ``jsonb``, so the
  text, including ``\\u0000`` escapes, round-trips exactly) plus the columns lookups
  need.
* **Connections and errors**: :class:`~satchel.db.postgres.PostgresPool` (one
  pool per store, opened on first use; every driver error a
  :class:`~satchel.StorageError` without the password).
* **Concurrency**: every write is one statement; the status compare-and-set is one
  ``UPDATE ... WHERE id = %s AND status = %s``, which PostgreSQL re-evaluates on the
  newest row version after waiting for a concurrent writer's row lock, so exactly one
  of two racing decisions wins.
"""

from __future__ import annotations

from typing import Any, Final

from satchel.consent._models import ApprovalRequest, ApprovalStatus
from satchel.db._migrations import Migration
from satchel.db.postgres import PostgresPool

__all__ = ["PostgresApprovalStore"]

_Requests = list[ApprovalRequest]
COMPONENT: Final = "consent"
"""The approval store's name in the migrations table."""

MIGRATIONS: Final[tuple[Migration, ...]] = (
    Migration(
        name="0001_consent_approvals",
        sql="""
            CREATE TABLE satchel_consent_approvals (
                id text PRIMARY KEY,
                seq bigint GENERATED ALWAYS AS IDENTITY,
                scope_key text NOT NULL,
                status text NOT NULL,
                created_at timestamptz NOT NULL,
                record json NOT NULL
            );
            CREATE INDEX satchel_consent_approvals_status
                ON satchel_consent_approvals (status, created_at, seq);
            CREATE INDEX satchel_consent_approvals_scope
                ON satchel_consent_approvals (scope_key, status, created_at, seq);
        """,
    ),
)
"""Every migration of the consent tables, in the order they run. Append only."""


def _load(rows: list[tuple[Any, ...]]) -> _Requests:
    return [ApprovalRequest.model_validate_json(str(row[0])) for row in rows]


class PostgresApprovalStore:
    """An :class:`~satchel.consent.ApprovalStore` in a PostgreSQL database, shared by
    every process that connects to it (a request made by one server can be listed and
    decided by the ``satchel approvals`` CLI on another machine).

    The pool is opened, and the consent tables migrated, on first use.

    Args:
        url: A libpq connection string or ``postgresql://`` URL.
        min_connections: Connections kept open.
        max_connections: At most this many connections at once.

    Raises:
        InvalidInputError: The connection counts are inconsistent.

    Example:
        >>> broker = PermissionBroker(PostgresApprovalStore("postgresql://db/satchel"))
    """

    def __init__(self, url: str, *, min_connections: int = 1, max_connections: int = 4) -> None:
        self._db = PostgresPool(
            url,
            what="approval store",
            component=COMPONENT,
            migrations=MIGRATIONS,
            min_connections=min_connections,
            max_connections=max_connections,
        )
        self.url = url
        self.safe_url = self._db.safe_url
        self.min_connections = min_connections
        self.max_connections = max_connections

    @property
    def applied_migrations(self) -> list[str]:
        """The migrations this store applied when it opened."""
        return self._db.applied_migrations

    async def _select(self, query: str, params: tuple[Any, ...]) -> _Requests:
        async with self._db.connection() as conn:
            cursor = await conn.execute(query.encode(), params)
            return _load(await cursor.fetchall())

    async def insert(self, request: ApprovalRequest) -> None:
        """Store a new request (a :class:`~satchel.StorageError` if its id exists)."""
        async with self._db.connection() as conn:
            await conn.execute(
                "INSERT INTO satchel_consent_approvals"
                " (id, scope_key, status, created_at, record) VALUES (%s, %s, %s, %s, %s)",
                (
                    request.id,
                    request.scope.key,
                    request.status,
                    request.created_at,
                    request.model_dump_json(),
                ),
            )

    async def get(self, request_id: str) -> ApprovalRequest | None:
        """The request with this id, or ``None``."""
        found = await self._select(
            "SELECT record::text FROM satchel_consent_approvals WHERE id = %s", (request_id,)
        )
        return found[0] if found else None

    async def list(self, status: ApprovalStatus | None = None) -> _Requests:
        """Requests with this status (all when ``None``), oldest first."""
        if status is None:
            return await self._select(
                "SELECT record::text FROM satchel_consent_approvals ORDER BY created_at, seq",
                (),
            )
        return await self._select(
            "SELECT record::text FROM satchel_consent_approvals WHERE status = %s"
            " ORDER BY created_at, seq",
            (status,),
        )

    async def by_scope(self, scope_key: str, status: ApprovalStatus) -> _Requests:
        """Requests with this scope key and status, oldest first."""
        return await self._select(
            "SELECT record::text FROM satchel_consent_approvals"
            " WHERE scope_key = %s AND status = %s ORDER BY created_at, seq",
            (scope_key, status),
        )

    async def swap(self, request: ApprovalRequest, *, expect: ApprovalStatus) -> bool:
        """Replace the record if its stored status is still ``expect`` (one ``UPDATE``)."""
        async with self._db.connection() as conn:
            cursor = await conn.execute(
                "UPDATE satchel_consent_approvals SET status = %s, record = %s"
                " WHERE id = %s AND status = %s",
                (request.status, request.model_dump_json(), request.id, expect),
            )
            return cursor.rowcount == 1

    async def close(self) -> None:
        """Close every connection (idempotent); the store then refuses work."""
        await self._db.close()
