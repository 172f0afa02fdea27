"""One SQLite file shared by a small store: the connection, its settings, its
migrations, and the write transaction, written once for the approval store and the
learned-pairs store.

The connection opens on first use (creating the file and its folder), in WAL mode with
a busy timeout, and runs the store's migrations through :mod:`satchel.db._migrations`.
Every call holds one lock; a write runs in ``BEGIN IMMEDIATE`` (so two processes wait
for each other's lock instead of deadlocking) and is rolled back on any error.
``sqlite3`` and OS errors become :class:`~satchel.StorageError` here, naming the store.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

import anyio.to_thread
import platformdirs

from satchel._errors import StorageError
from satchel.db._migrations import Migration, migrate_sqlite

__all__ = ["SQLiteFile", "default_path"]

_T = TypeVar("_T")


def default_path() -> Path:
    """``<user data dir>/satchel/satchel.db``, e.g. ``~/.local/share/satchel/satchel.db``:
    the database every store uses unless told otherwise."""
    return Path(platformdirs.user_data_dir("satchel")) / "satchel.db"


class SQLiteFile:
    """A lazily opened SQLite connection for one store (see the module doc).

    Args:
        path: The database file; created if missing.
        what: The store's name in error messages (``"approval store"``).
        component: The store's name in the migrations table.
        migrations: The store's migrations, in order.
        busy_timeout: Seconds to wait for another process's write lock.
    """

    def __init__(
        self,
        path: Path,
        *,
        what: str,
        component: str,
        migrations: Sequence[Migration],
        busy_timeout: float,
    ) -> None:
        self.path = path
        self.what = what
        self.component = component
        self.migrations = migrations
        self.busy_timeout = busy_timeout
        self.applied_migrations: list[str] = []
        """The migrations this process applied when it opened the file."""
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        self._closed = False

    def _connection(self) -> sqlite3.Connection:
        if self._closed:
            raise StorageError(f"the {self.what} {str(self.path)!r} is closed")
        if self._conn is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(
                self.path, timeout=self.busy_timeout, isolation_level=None, check_same_thread=False
            )
            try:
                conn.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout * 1000)}")
                conn.execute("PRAGMA journal_mode = WAL")
                conn.execute("PRAGMA synchronous = NORMAL")
                self.applied_migrations = migrate_sqlite(conn, self.component, self.migrations)
            except BaseException:
                conn.close()
                raise
            self._conn = conn
        return self._conn

    def run(self, function: Callable[[sqlite3.Connection], _T], *, write: bool) -> _T:
        """Run ``function`` on the connection, in a write transaction when ``write``.

        Raises:
            StorageError: SQLite or the file system failed, or the file is closed.
        """
        with self._lock:
            try:
                conn = self._connection()
                if not write:
                    return function(conn)
                conn.execute("BEGIN IMMEDIATE")
                try:
                    result = function(conn)
                    conn.execute("COMMIT")
                except BaseException:
                    if conn.in_transaction:
                        conn.execute("ROLLBACK")
                    raise
                return result
            except (sqlite3.Error, OSError) as exc:
                raise StorageError(f"{self.what} {str(self.path)!r} failed: {exc}") from exc

    async def call(self, function: Callable[[sqlite3.Connection], _T], *, write: bool) -> _T:
        """:meth:`run` in a worker thread, so the event loop never blocks on SQLite."""
        return await anyio.to_thread.run_sync(lambda: self.run(function, write=write))

    def close(self) -> None:
        """Close the connection (idempotent); later calls raise
        :class:`~satchel.StorageError`."""
        with self._lock:
            self._closed = True
            conn, self._conn = self._conn, None
            if conn is not None:
                conn.close()
