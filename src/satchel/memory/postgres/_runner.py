"""How every database step of
:class:`~satchel.memory.postgres._backend.PostgresBackend` runs: a function of the
dialect's SQL modules, run on a pooled connection, and the embedding model a write
stores vectors for.

:class:`Runner` is held by the backend and by each of its parts
(:class:`~satchel.memory.postgres._backend_blocks.BlockSteps`,
:class:`~satchel.memory.postgres._backend_agents.AgentSteps`); the backend opens the
pool and claims the model.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Concatenate, ParamSpec, TypeVar

from satchel.memory.postgres._db import Conn, Database

__all__ = ["Runner"]

_T = TypeVar("_T")
_P = ParamSpec("_P")


class Runner:
    """Runs database steps on one PostgreSQL :class:`~.Database` (see the module doc).

    Args:
        db: The pool (opened by the backend's ``setup``).
    """

    def __init__(self, db: Database) -> None:
        self.db = db
        self.model_id: str | None = None
        """The embedder's model, once the backend was told it."""
        self.vectors_ok = False
        """Whether the database's vectors are :attr:`model_id`'s."""

    @property
    def model(self) -> str | None:
        """The model a write stores vectors for, or ``None`` (vector search is off)."""
        return self.model_id if self.vectors_ok else None

    async def run(
        self,
        function: Callable[Concatenate[Conn, _P], Awaitable[_T]],
        *args: _P.args,
        **kwargs: _P.kwargs,
    ) -> _T:
        """``await function(conn, *args, **kwargs)`` on a pooled connection."""
        async with self.db.connection() as conn:
            return await function(conn, *args, **kwargs)

    read = run
    """A read: the same as :meth:`run` (autocommit; a step that needs one snapshot
    opens its own transaction)."""

    write = run
    """A write: the same as :meth:`run` (each write is one conditional statement or
    opens its own transaction)."""
