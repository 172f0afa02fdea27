"""Learned (query, tool) pairs in PostgreSQL, in the same database as memory, so every
``satchel serve`` on that database learns from every other one.

It mirrors :class:`~satchel.meta.SQLiteUsageStore`: its own append-only migrations
(component ``meta`` in ``satchel_migrations``), a ``satchel_meta_learned`` table, and
:class:`~satchel.db.postgres.PostgresPool` for connections and errors. A pair is
learned in one statement; the least recently used pairs beyond ``max_pairs`` per
catalog are then deleted in one more, so two processes learning at once may briefly
leave one extra pair until the next write.
"""

from __future__ import annotations

from typing import Any, Final

from satchel._errors import InvalidInputError
from satchel.db._migrations import Migration
from satchel.db.postgres import PostgresPool
from satchel.meta._usage import DEFAULT_MAX_PAIRS, LearnedPair, check_pair

__all__ = ["PostgresUsageStore"]

COMPONENT: Final = "meta"
"""The learned pairs' name in the migrations table."""

MIGRATIONS: Final[tuple[Migration, ...]] = (
    Migration(
        name="0001_meta_learned",
        sql="""
            CREATE TABLE satchel_meta_learned (
                catalog text NOT NULL,
                query text NOT NULL,
                tool text NOT NULL,
                uses integer NOT NULL DEFAULT 1,
                last_used double precision NOT NULL,
                seq bigint GENERATED ALWAYS AS IDENTITY,
                PRIMARY KEY (catalog, query, tool)
            );
            CREATE INDEX satchel_meta_learned_recent ON satchel_meta_learned (catalog, seq);
        """,
    ),
)
"""Every migration of the learned-pairs table, in the order they run. Append only."""

_COLUMNS: Final = "query, tool, uses, last_used"


def _pair(row: tuple[Any, ...]) -> LearnedPair:
    return LearnedPair(query=row[0], tool=row[1], uses=row[2], last_used=row[3])


class PostgresUsageStore:
    """A :class:`~satchel.meta.UsageStore` in a PostgreSQL database (typically the
    memory database), shared by every process that connects to it.

    Args:
        url: A libpq connection string or ``postgresql://`` URL.
        max_pairs: The most pairs one catalog keeps (the least recently used go).
        max_connections: At most this many connections at once.

    Raises:
        InvalidInputError: ``max_pairs`` or ``max_connections`` is below 1.

    Example:
        >>> meta = MetaTools(registry, usage=PostgresUsageStore("postgresql://db/satchel"))
    """

    def __init__(
        self, url: str, *, max_pairs: int = DEFAULT_MAX_PAIRS, max_connections: int = 2
    ) -> None:
        if max_pairs < 1:
            raise InvalidInputError(f"max_pairs must be at least 1, not {max_pairs}")
        self._db = PostgresPool(
            url,
            what="learned-pairs store",
            component=COMPONENT,
            migrations=MIGRATIONS,
            min_connections=0,
            max_connections=max_connections,
        )
        self.url = url
        self.safe_url = self._db.safe_url
        self.max_pairs = max_pairs

    @property
    def applied_migrations(self) -> list[str]:
        """The migrations this store applied when it opened."""
        return self._db.applied_migrations

    async def learn(self, catalog: str, query: str, tool: str) -> LearnedPair:
        """See :meth:`~satchel.meta.UsageStore.learn`."""
        query, tool = check_pair(query, tool)
        async with self._db.connection() as conn:
            cursor = await conn.execute(
                "INSERT INTO satchel_meta_learned (catalog, query, tool, uses, last_used)"
                " VALUES (%s, %s, %s, 1, extract(epoch FROM clock_timestamp()))"
                " ON CONFLICT (catalog, query, tool) DO UPDATE SET"
                " uses = satchel_meta_learned.uses + 1, last_used = excluded.last_used,"
                " seq = DEFAULT"
                f" RETURNING {_COLUMNS}",
                (catalog, query, tool),
            )
            row = await cursor.fetchone()
            await conn.execute(
                "DELETE FROM satchel_meta_learned WHERE catalog = %s AND seq IN"
                " (SELECT seq FROM satchel_meta_learned WHERE catalog = %s"
                " ORDER BY seq DESC OFFSET %s)",
                (catalog, catalog, self.max_pairs),
            )
        assert row is not None  # RETURNING always gives the row
        return _pair(row)

    async def pairs(self, catalog: str, *, tool: str | None = None) -> list[LearnedPair]:
        """See :meth:`~satchel.meta.UsageStore.pairs`."""
        sql = f"SELECT {_COLUMNS} FROM satchel_meta_learned WHERE catalog = %s"
        args: tuple[str, ...] = (catalog,)
        if tool is not None:
            sql, args = sql + " AND tool = %s", (catalog, tool)
        async with self._db.connection() as conn:
            cursor = await conn.execute((sql + " ORDER BY seq DESC").encode(), args)
            return [_pair(row) for row in await cursor.fetchall()]

    async def forget(
        self, catalog: str, *, query: str | None = None, tool: str | None = None
    ) -> int:
        """See :meth:`~satchel.meta.UsageStore.forget`."""
        sql, args = "DELETE FROM satchel_meta_learned WHERE catalog = %s", [catalog]
        if query is not None:
            sql += " AND query = %s"
            args.append(" ".join(query.split()))
        if tool is not None:
            sql += " AND tool = %s"
            args.append(tool)
        async with self._db.connection() as conn:
            cursor = await conn.execute(sql.encode(), args)
            return cursor.rowcount

    async def close(self) -> None:
        """Close every connection (idempotent); later calls raise
        :class:`~satchel.StorageError`."""
        await self._db.close()
