"""Connections to the SQLite file: one writer under a lock, a pool of readers.

The connection strategy, chosen for correctness under concurrency:

* **One writer connection** guarded by a :class:`threading.Lock`. Every write is a
  function run inside ``BEGIN IMMEDIATE ... COMMIT`` while holding the lock, so writes
  from many tasks and threads of this process are serialised, and the ``IMMEDIATE``
  start takes SQLite's write lock up front, so two processes never deadlock on a lock
  upgrade (they wait up to ``busy_timeout`` instead).
* **A pool of reader connections**, each used by one thread at a time, each read
  function run inside one read transaction, so it sees one consistent snapshot. WAL
  lets readers run while the writer writes.
* Every call runs in a worker thread (the async store uses ``anyio.to_thread``), so
  the event loop never blocks on SQLite.
* ``sqlite3`` exceptions are mapped to :class:`~satchel.StorageError` here, at the
  boundary; satchel's own errors raised inside a function pass through unchanged (and
  roll the write back).
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal, TypeVar

from satchel._errors import StorageError

__all__ = ["Database"]

_T = TypeVar("_T")

Durability = Literal["normal", "full"]

_MMAP_BYTES = 1 << 30
"""Readers map up to 1 GiB of the file: pages come from the OS cache without copies,
shared by every connection."""


class Database:
    """The SQLite file, its writer and its readers.

    Args:
        path: The database file (created if missing, with its parent folder).
        busy_timeout: Seconds to wait for another process's lock before failing.
        durability: ``normal`` (WAL ``synchronous=NORMAL``: a committed write survives
            the process being killed; a power cut may lose the last commits but never
            corrupts) or ``full`` (fsync on every commit: survives power loss too).
    """

    def __init__(
        self, path: Path, *, busy_timeout: float = 10.0, durability: Durability = "normal"
    ) -> None:
        self.path = path
        self._busy_timeout = busy_timeout
        self._synchronous = "FULL" if durability == "full" else "NORMAL"
        self._write_lock = threading.Lock()
        self._pool_lock = threading.Lock()
        self._idle: list[sqlite3.Connection] = []
        self._all: list[sqlite3.Connection] = []
        self._closed = False
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._writer = self._connect()
            mode = self._switch_to_wal()
        except (sqlite3.Error, OSError) as exc:
            raise StorageError(f"cannot open the memory database {str(path)!r}: {exc}") from exc
        if mode is None or str(mode[0]).lower() != "wal":
            raise StorageError(f"cannot switch {str(path)!r} to WAL mode (got {mode!r})")

    def _switch_to_wal(self) -> Any:
        """``PRAGMA journal_mode = WAL``, retried while another connection holds the lock.

        When several connections open a new file at once, SQLite can answer "database is
        locked" at once, without calling the busy handler (it would deadlock two
        connections that both hold a shared lock and want an exclusive one), so the
        busy timeout does not cover this step: it is retried here, within the same
        timeout.
        """
        deadline = time.monotonic() + self._busy_timeout
        delay = 0.002
        while True:
            try:
                return self._writer.execute("PRAGMA journal_mode = WAL").fetchone()
            except sqlite3.OperationalError as exc:
                busy = "locked" in str(exc) or "busy" in str(exc)
                if not busy or time.monotonic() + delay > deadline:
                    raise
            time.sleep(delay)
            delay = min(delay * 2, 0.1)

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(
            self.path,
            timeout=self._busy_timeout,
            isolation_level=None,
            check_same_thread=False,
        )
        conn.execute(f"PRAGMA busy_timeout = {int(self._busy_timeout * 1000)}")
        conn.execute(f"PRAGMA synchronous = {self._synchronous}")
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute("PRAGMA temp_store = MEMORY")
        conn.execute(f"PRAGMA mmap_size = {_MMAP_BYTES}")
        self._all.append(conn)
        return conn

    def _check_open(self) -> None:
        if self._closed:
            raise StorageError(f"the memory database {str(self.path)!r} is closed")

    def setup(self, function: Callable[[sqlite3.Connection], _T]) -> _T:
        """Run ``function`` on the writer connection outside any transaction (for
        migrations, which manage their own)."""
        with self._write_lock:
            self._check_open()
            try:
                return function(self._writer)
            except sqlite3.Error as exc:
                raise StorageError(f"memory database setup failed: {exc}") from exc

    def write(self, function: Callable[[sqlite3.Connection], _T]) -> _T:
        """Run ``function`` in one write transaction; commit if it returns, roll back if
        it raises. Blocking: call it from a worker thread."""
        with self._write_lock:
            self._check_open()
            conn = self._writer
            try:
                conn.execute("BEGIN IMMEDIATE")
            except sqlite3.Error as exc:
                raise StorageError(f"cannot start a write transaction: {exc}") from exc
            try:
                result = function(conn)
                conn.execute("COMMIT")
            except sqlite3.Error as exc:
                self._rollback(conn)
                raise StorageError(f"memory database write failed: {exc}") from exc
            except BaseException:
                self._rollback(conn)
                raise
            return result

    @staticmethod
    def _rollback(conn: sqlite3.Connection) -> None:
        if conn.in_transaction:
            with contextlib.suppress(sqlite3.Error):  # already gone: nothing to undo
                conn.execute("ROLLBACK")

    def read(self, function: Callable[[sqlite3.Connection], _T]) -> _T:
        """Run ``function`` in one read transaction on a pooled reader connection.
        Blocking: call it from a worker thread."""
        with self._pool_lock:
            self._check_open()
            try:
                conn = self._idle.pop() if self._idle else self._connect()
            except sqlite3.Error as exc:
                raise StorageError(f"cannot open a reader connection: {exc}") from exc
        try:
            conn.execute("BEGIN")
            try:
                return function(conn)
            finally:
                self._rollback(conn)
        except sqlite3.Error as exc:
            raise StorageError(f"memory database read failed: {exc}") from exc
        finally:
            with self._pool_lock:
                if self._closed:
                    conn.close()
                else:
                    self._idle.append(conn)

    def close(self) -> None:
        """Close every connection (idempotent). Readers in use close when released."""
        with self._write_lock, self._pool_lock:
            if self._closed:
                return
            self._closed = True
            for conn in self._idle:
                conn.close()
            self._idle.clear()
            self._writer.close()
