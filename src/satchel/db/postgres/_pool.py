"""One pooled PostgreSQL database for a small store of satchel's own tables: the
approval store and the learned-pairs store share it (the memory backend has its own,
with the vector extension and the search functions, in :mod:`satchel.memory.postgres`).

* **Schema**: the store's ordered, named, append-only migrations, run by
  :mod:`satchel.db._migrations` under its component name in the database's one
  ``satchel_migrations`` table, each in one transaction with its record under a
  transaction-level advisory lock, so any number of processes may open a new database
  at once.
* **Connections**: one ``psycopg_pool.AsyncConnectionPool``, autocommit, READ
  COMMITTED, opened on first use after the migrations ran on a connection of their own
  (so an unreachable database fails at once, with the server's reason, not after a
  pool timeout).
* **Errors**: every :class:`psycopg.Error` (a pool timeout included) becomes a
  :class:`~satchel.StorageError` naming the store, with the password left out.

This module imports psycopg: import it only where PostgreSQL is used.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Sequence
from contextlib import asynccontextmanager
from typing import Final

import anyio
import psycopg
from psycopg_pool import AsyncConnectionPool

from satchel._errors import InvalidInputError, StorageError
from satchel.db._migrations import Migration, migrate_postgres
from satchel.db.postgres._connect import Conn, describe, redact

__all__ = ["PostgresPool"]

_TIMEOUT: Final = 30.0
"""Seconds to wait for a connection (or a free pooled one) before a StorageError."""


class PostgresPool:
    """A store's PostgreSQL database: migrated and pooled on first use.

    Args:
        url: A libpq connection string or ``postgresql://`` URL.
        what: The store's name in error messages (``"approval store"``).
        component: The store's name in the migrations table.
        migrations: The store's migrations, in order.
        min_connections: Connections kept open.
        max_connections: At most this many connections at once.

    Raises:
        InvalidInputError: The connection counts are inconsistent.
    """

    def __init__(
        self,
        url: str,
        *,
        what: str,
        component: str,
        migrations: Sequence[Migration],
        min_connections: int = 1,
        max_connections: int = 4,
    ) -> None:
        if not 0 <= min_connections <= max_connections or max_connections < 1:
            raise InvalidInputError("need 0 <= min_connections <= max_connections and >= 1 maximum")
        self.url = url
        self.safe_url = redact(url)
        self.what = what
        self.component = component
        self.migrations = tuple(migrations)
        self.min_connections = min_connections
        self.max_connections = max_connections
        self.applied_migrations: list[str] = []
        """The migrations this pool applied when it opened (``[]`` when none were due)."""
        self._opening = anyio.Lock()
        self._pool: AsyncConnectionPool[Conn] | None = None
        self._closed = False

    def _refuse_if_closed(self) -> None:
        if self._closed:
            raise StorageError(f"the {self.what} at {self.safe_url} is closed")

    async def _open(self) -> AsyncConnectionPool[Conn]:
        self._refuse_if_closed()
        if self._pool is not None:
            return self._pool
        async with self._opening:
            self._refuse_if_closed()
            if self._pool is None:
                pool: AsyncConnectionPool[Conn] = AsyncConnectionPool(
                    self.url,
                    min_size=self.min_connections,
                    max_size=self.max_connections,
                    timeout=_TIMEOUT,
                    kwargs={"autocommit": True},
                    open=False,
                    name=f"satchel-{self.component}",
                )
                try:
                    async with await psycopg.AsyncConnection.connect(
                        self.url, autocommit=True, connect_timeout=round(_TIMEOUT)
                    ) as conn:
                        self.applied_migrations = await migrate_postgres(
                            conn, self.component, self.migrations
                        )
                    await pool.open(wait=True, timeout=_TIMEOUT)
                except BaseException as exc:
                    await pool.close()
                    if isinstance(exc, psycopg.Error):
                        raise StorageError(
                            f"cannot open the {self.what} at {self.safe_url}: {describe(exc)}",
                            details={"sqlstate": getattr(exc, "sqlstate", None)},
                        ) from exc
                    raise
                if self._closed:  # closed while opening
                    await pool.close()
                    self._refuse_if_closed()
                self._pool = pool
            return self._pool

    @asynccontextmanager
    async def connection(self) -> AsyncGenerator[Conn]:
        """A pooled connection (autocommit) for one piece of work.

        Raises:
            StorageError: The database failed, or the pool is closed or exhausted.
        """
        pool = await self._open()
        try:
            async with pool.connection() as conn:
                yield conn
        except psycopg.Error as exc:  # PoolTimeout and PoolClosed are OperationalErrors
            raise StorageError(
                f"{self.what} at {self.safe_url} failed: {describe(exc)}",
                details={"sqlstate": getattr(exc, "sqlstate", None)},
            ) from exc

    async def close(self) -> None:
        """Close every connection (idempotent); later work raises
        :class:`~satchel.StorageError`."""
        self._closed = True
        if self._pool is not None:
            pool, self._pool = self._pool, None
            await pool.close()
