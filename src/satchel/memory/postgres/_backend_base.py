"""The plumbing every database step of
:class:`~satchel.memory.postgres._backend.PostgresBackend` runs through: a function run
on a pooled connection, and the embedding model a write stores vectors for.

:class:`BackendBase` is the common base of the backend's parts
(:mod:`._backend_blocks`, :mod:`._backend_agents`); the backend opens the pool and
claims the model.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

from satchel.memory.postgres._db import Conn, Database

__all__ = ["BackendBase"]

_T = TypeVar("_T")


class BackendBase:
    """Runs a database step on a pooled connection (see the module docstring); the
    backend supplies the attributes below."""

    _db: Database
    _model_id: str | None
    vectors_ok: bool

    @property
    def _model(self) -> str | None:
        return self._model_id if self.vectors_ok else None

    async def _run(self, function: Callable[[Conn], Awaitable[_T]]) -> _T:
        async with self._db.connection() as conn:
            return await function(conn)
