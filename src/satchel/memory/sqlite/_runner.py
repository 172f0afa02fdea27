"""How every database step of :class:`~satchel.memory.sqlite._backend.SQLiteBackend`
runs: a function of the dialect's SQL modules, run on a pooled reader or in one write
transaction on the writer, in a worker thread.

:class:`Runner` is held by the backend and by each of its parts
(:class:`~satchel.memory.sqlite._backend_blocks.BlockSteps`,
:class:`~satchel.memory.sqlite._backend_agents.AgentSteps`); the backend opens the
database it runs on.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import Concatenate, ParamSpec, TypeVar

import anyio.to_thread

from satchel.memory.sqlite._db import Database

__all__ = ["Runner"]

_T = TypeVar("_T")
_P = ParamSpec("_P")


class Runner:
    """Runs database steps on one SQLite :class:`~.Database` (see the module doc).

    Args:
        db: The opened database.
    """

    def __init__(self, db: Database) -> None:
        self.db = db

    async def read(
        self,
        function: Callable[Concatenate[sqlite3.Connection, _P], _T],
        *args: _P.args,
        **kwargs: _P.kwargs,
    ) -> _T:
        """``function(conn, *args, **kwargs)`` in one read transaction."""

        def step(conn: sqlite3.Connection) -> _T:
            return function(conn, *args, **kwargs)

        return await anyio.to_thread.run_sync(self.db.read, step)

    async def write(
        self,
        function: Callable[Concatenate[sqlite3.Connection, _P], _T],
        *args: _P.args,
        **kwargs: _P.kwargs,
    ) -> _T:
        """``function(conn, *args, **kwargs)`` in one write transaction."""

        def step(conn: sqlite3.Connection) -> _T:
            return function(conn, *args, **kwargs)

        return await anyio.to_thread.run_sync(self.db.write, step)
