"""The connection pool of the PostgreSQL store, and where psycopg errors become
satchel's.

* One :class:`psycopg_pool.AsyncConnectionPool` per store. Connections are in
  autocommit mode: most writes are one conditional statement (the row lock, the
  permission re-check, the version and the character limit are all evaluated by that
  statement on the newest row version), so they need no explicit transaction; the few
  multi-statement writes open one with ``conn.transaction()``.
* Every new connection gets pgvector's binary adapter, ``hnsw.ef_search`` and
  pgvector 0.8's iterative index scans (``relaxed_order``), so filtered vector searches
  keep scanning until they have enough rows.
* :meth:`Database.connection` maps every :class:`psycopg.Error` (and a pool timeout)
  to :class:`~satchel.StorageError`; satchel's own errors pass through unchanged.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import Any

import psycopg
from pgvector.psycopg.vector import register_vector_info
from psycopg.types import TypeInfo
from psycopg_pool import AsyncConnectionPool

from satchel._errors import InvalidInputError, StorageError
from satchel.db.postgres._connect import Conn, describe, redact

__all__ = ["Conn", "Database", "describe", "redact"]

EF_SEARCH = 100
"""``hnsw.ef_search`` set on every connection: the candidate list of an HNSW scan (the
default, 40, is below the 50 candidates hybrid search asks for)."""


class Database:
    """The pool of connections to one PostgreSQL database.

    Args:
        url: A libpq connection string or ``postgresql://`` URL.
        min_size: Connections kept open.
        max_size: At most this many connections at once.
        timeout: Seconds to wait for a free connection (or to connect) before a
            :class:`~satchel.StorageError`.
        connect_kwargs: Extra keyword arguments for :func:`psycopg.AsyncConnection.connect`.
    """

    def __init__(
        self,
        url: str,
        *,
        min_size: int = 1,
        max_size: int = 10,
        timeout: float = 30.0,
        connect_kwargs: dict[str, Any] | None = None,
    ) -> None:
        if not 0 <= min_size <= max_size or max_size < 1:
            raise InvalidInputError("need 0 <= min_size <= max_size and max_size >= 1")
        self.url = url
        self.safe_url = redact(url)
        self.timeout = timeout
        self._kwargs: dict[str, Any] = {**(connect_kwargs or {}), "autocommit": True}
        self._min_size, self._max_size = min_size, max_size
        self._vector_info: TypeInfo | None = None
        self._pool: AsyncConnectionPool[Conn] | None = None
        self._closed = False

    @asynccontextmanager
    async def setup_connection(self) -> AsyncGenerator[Conn]:
        """One connection outside the pool, for migrations before the pool opens."""
        try:
            conn = await psycopg.AsyncConnection.connect(
                self.url, connect_timeout=max(1, round(self.timeout)), **self._kwargs
            )
        except psycopg.Error as exc:
            raise StorageError(
                f"cannot connect to PostgreSQL at {self.safe_url}: {describe(exc)}"
            ) from exc
        try:
            async with conn:
                yield conn
        except psycopg.Error as exc:
            raise StorageError(
                f"setting up the memory database at {self.safe_url} failed: {describe(exc)}"
            ) from exc

    async def open(self, vector_info: TypeInfo) -> None:
        """Open the pool (after the schema exists: connections register pgvector)."""
        self._vector_info = vector_info
        pool: AsyncConnectionPool[Conn] = AsyncConnectionPool(
            self.url,
            min_size=self._min_size,
            max_size=self._max_size,
            timeout=self.timeout,
            kwargs=self._kwargs,
            configure=self._configure,
            open=False,
            name="satchel-memory",
        )
        try:
            await pool.open(wait=True, timeout=self.timeout)
        except psycopg.Error as exc:
            await pool.close()
            raise StorageError(
                f"cannot open connections to PostgreSQL at {self.safe_url}: {describe(exc)}"
            ) from exc
        self._pool = pool

    async def _configure(self, conn: Conn) -> None:
        assert self._vector_info is not None
        register_vector_info(conn, self._vector_info)
        await conn.execute("SET hnsw.ef_search = 100; SET hnsw.iterative_scan = relaxed_order")

    @asynccontextmanager
    async def connection(self) -> AsyncGenerator[Conn]:
        """A pooled connection (autocommit) for the duration of the block.

        Raises:
            StorageError: The pool is closed or exhausted, or the database failed.
        """
        if self._pool is None or self._closed:
            raise StorageError(f"the memory database at {self.safe_url} is not open")
        try:
            async with self._pool.connection() as conn:
                yield conn
        except psycopg.Error as exc:  # PoolTimeout is an OperationalError
            raise StorageError(
                f"memory database operation failed ({self.safe_url}): {describe(exc)}",
                details={"sqlstate": getattr(exc, "sqlstate", None)},
            ) from exc

    async def close(self) -> None:
        """Close every connection. Idempotent."""
        self._closed = True
        if self._pool is not None:
            pool, self._pool = self._pool, None
            await pool.close()
