"""The host's ledger in PostgreSQL, the agent's memory database, so several ``satchel
up`` processes on one database never answer a message twice.

It mirrors :class:`~satchel.up.SQLiteUpLedger`: its own append-only migrations
(component ``up`` in ``satchel_migrations``), ``satchel_up_answered`` and
``satchel_up_cursors``, and :class:`~satchel.db.postgres.PostgresPool` for connections
and errors.
"""

from __future__ import annotations

from typing import Final

from satchel.db._migrations import Migration
from satchel.db.postgres import PostgresPool

__all__ = ["PostgresUpLedger"]

COMPONENT: Final = "up"
"""The ledger's name in the migrations table."""

MIGRATIONS: Final[tuple[Migration, ...]] = (
    Migration(
        name="0001_up_ledger",
        sql="""
            CREATE TABLE satchel_up_answered (
                channel text NOT NULL,
                message_id text NOT NULL,
                answered_at timestamptz NOT NULL DEFAULT now(),
                PRIMARY KEY (channel, message_id)
            );
            CREATE TABLE satchel_up_cursors (
                key text PRIMARY KEY,
                value text NOT NULL
            );
        """,
    ),
)
"""Every migration of the ledger's tables, in the order they run. Append only."""


class PostgresUpLedger:
    """An :class:`~satchel.up.UpLedger` in a PostgreSQL database.

    Args:
        url: A libpq connection string or ``postgresql://`` URL.
        max_connections: At most this many connections at once.

    Example:
        >>> ledger = PostgresUpLedger("postgresql://db/satchel")
    """

    def __init__(self, url: str, *, max_connections: int = 2) -> None:
        self._db = PostgresPool(
            url,
            what="satchel up ledger",
            component=COMPONENT,
            migrations=MIGRATIONS,
            min_connections=0,
            max_connections=max_connections,
        )
        self.url = url
        self.safe_url = self._db.safe_url

    async def answered(self, channel: str, message_id: str) -> bool:
        """See :meth:`~satchel.up.UpLedger.answered`."""
        async with self._db.connection() as conn:
            cursor = await conn.execute(
                "SELECT 1 FROM satchel_up_answered WHERE channel = %s AND message_id = %s",
                (channel, message_id),
            )
            return await cursor.fetchone() is not None

    async def mark(self, channel: str, message_id: str) -> bool:
        """See :meth:`~satchel.up.UpLedger.mark`."""
        async with self._db.connection() as conn:
            cursor = await conn.execute(
                "INSERT INTO satchel_up_answered (channel, message_id) VALUES (%s, %s) "
                "ON CONFLICT (channel, message_id) DO NOTHING",
                (channel, message_id),
            )
            return cursor.rowcount == 1

    async def get_cursor(self, key: str) -> str | None:
        """See :meth:`~satchel.up.UpLedger.get_cursor`."""
        async with self._db.connection() as conn:
            cursor = await conn.execute(
                "SELECT value FROM satchel_up_cursors WHERE key = %s", (key,)
            )
            row = await cursor.fetchone()
        return None if row is None else str(row[0])

    async def set_cursor(self, key: str, value: str) -> None:
        """See :meth:`~satchel.up.UpLedger.set_cursor`."""
        async with self._db.connection() as conn:
            await conn.execute(
                "INSERT INTO satchel_up_cursors (key, value) VALUES (%s, %s) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (key, value),
            )

    async def close(self) -> None:
        """Close every connection (idempotent)."""
        await self._db.close()
