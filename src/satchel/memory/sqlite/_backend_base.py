"""The plumbing every database step of
:class:`~satchel.memory.sqlite._backend.SQLiteBackend` runs through: a function run on
a pooled reader, or in one write transaction on the writer, in a worker thread.

:class:`BackendBase` is the common base of the backend's parts
(:mod:`._backend_blocks`, :mod:`._backend_agents`); the backend opens the database.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import TypeVar

import anyio.to_thread

from satchel.memory.sqlite._db import Database

__all__ = ["BackendBase"]

_T = TypeVar("_T")


class BackendBase:
    """Runs a database step in a worker thread (see the module docstring); the backend
    supplies :attr:`_db`."""

    _db: Database

    async def _read(self, function: Callable[[sqlite3.Connection], _T]) -> _T:
        return await anyio.to_thread.run_sync(self._db.read, function)

    async def _write(self, function: Callable[[sqlite3.Connection], _T]) -> _T:
        return await anyio.to_thread.run_sync(self._db.write, function)
