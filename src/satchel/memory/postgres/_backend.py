"""The PostgreSQL :class:`PostgresBackend`: the database steps of the shared store.

It connects, migrates, claims the database for the embedder's model, and runs each
step on a pooled connection (:mod:`._backend_base`). A write to a block re-checks the
level the permission gate allowed in its own statement (:mod:`._blocks`). The gate
itself, consent and embedding are :class:`~satchel.memory.GatedStore`'s.

The class is written in three modules: this one (connecting and closing, the embedding
model, search, vectors, export and import), :mod:`._backend_blocks` (the block steps)
and :mod:`._backend_agents` (agents and messages), whose classes are its bases and hold
no state of their own.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING, Any, LiteralString

import numpy as np
import numpy.typing as npt
from psycopg.types import TypeInfo

from satchel._errors import StorageError
from satchel.memory._backend import MemoryBackend, RestoreBatch, TextDomain
from satchel.memory._models import Block, ImportReport, Message, OnConflict, SearchHit
from satchel.memory._search import SearchRequest
from satchel.memory._transfer import add_reports
from satchel.memory.postgres import _records
from satchel.memory.postgres._backend_agents import AgentSteps
from satchel.memory.postgres._backend_blocks import BlockSteps
from satchel.memory.postgres._db import Conn, Database
from satchel.memory.postgres._messages import count_texts, store_vectors, texts_to_embed
from satchel.memory.postgres._migrations import migrate
from satchel.memory.postgres._model import adopt_model, claim_model, dim_sql
from satchel.memory.postgres._search_sql import BLOCKS, MESSAGES, TermStats, run_search

__all__ = ["PostgresBackend"]

logger = logging.getLogger("satchel.memory")

F32 = npt.NDArray[np.float32]
_DOMAINS: dict[TextDomain, int] = {"blocks": BLOCKS.key, "messages": MESSAGES.key}


class PostgresBackend(BlockSteps, AgentSteps):
    """The database steps of the PostgreSQL memory store. Implements
    :class:`~satchel.memory.MemoryBackend`; wrapped by
    :class:`~satchel.memory.postgres.PostgresStore`.

    Nothing connects until :meth:`setup`.

    Args:
        url: A ``postgresql://`` URL or libpq connection string.
        min_connections: Connections the pool keeps open.
        max_connections: At most this many connections at once.
        timeout: Seconds to wait to connect or for a free pooled connection.
        connect_kwargs: Extra arguments for :func:`psycopg.AsyncConnection.connect`.
    """

    def __init__(
        self,
        url: str,
        *,
        min_connections: int = 1,
        max_connections: int = 10,
        timeout: float = 30.0,
        connect_kwargs: dict[str, Any] | None = None,
    ) -> None:
        self.applied_migrations: list[str] = []
        self._db = Database(
            url,
            min_size=min_connections,
            max_size=max_connections,
            timeout=timeout,
            connect_kwargs=connect_kwargs,
        )
        self._model_id: str | None = None
        self._dim: LiteralString | None = None
        self._embed_dim: int | None = None
        self.vectors_ok = False
        self._opened = False
        self._stats = TermStats()

    def use_model(self, model: str | None, dim: int | None) -> None:
        """Remember the model; :meth:`setup` claims the database for it."""
        self._model_id, self._embed_dim = model, dim
        self._dim = dim_sql(dim) if dim is not None else None

    async def setup(self) -> None:
        """Connect, create the extensions and apply pending migrations, claim the
        database for the model, and open the pool. Idempotent.

        Raises:
            StorageError: The server cannot be reached, or lacks pgvector (the message
                says how to install it).
        """
        if self._opened:
            return
        async with self._db.setup_connection() as conn:
            self.applied_migrations = await migrate(conn)
            info = await TypeInfo.fetch(conn, "vector")
            if info is None:
                raise StorageError("the 'vector' type is missing after CREATE EXTENSION vector")
            if self._model_id is not None and self._embed_dim is not None:
                self.vectors_ok = await claim_model(conn, self._model_id, self._embed_dim)
        await self._db.open(info)
        self._opened = True

    async def close(self) -> None:
        """Close every connection. Idempotent."""
        await self._db.close()

    @property
    def safe_url(self) -> str:
        """The URL without its password, for messages."""
        return self._db.safe_url

    def __repr__(self) -> str:
        return f"PostgresBackend({self.safe_url!r})"

    # --- search and vectors: the database steps ------------------------------------

    async def search(self, request: SearchRequest) -> list[SearchHit]:
        model, dim = self._model, self._dim if self.vectors_ok else None
        return await self._run(
            lambda conn: run_search(conn, self._stats, request, model=model, dim=dim)
        )

    async def block_text(self, pk: int) -> str:
        items = await self._run(lambda conn: texts_to_embed(conn, BLOCKS.key, pk - 1, 1))
        return next((value for item_pk, value in items if item_pk == pk), "")

    async def store_vectors(
        self, domain: TextDomain, items: Sequence[tuple[int, str]], vectors: F32
    ) -> None:
        model = self._model_id
        assert model is not None
        await self._run(lambda conn: store_vectors(conn, _DOMAINS[domain], items, vectors, model))

    async def count_texts(self) -> int:
        return await self._run(count_texts)

    async def adopt_model(self) -> None:
        model, dim = self._model_id, self._embed_dim
        assert model is not None
        assert dim is not None
        await self._run(lambda conn: adopt_model(conn, model, dim))
        self.vectors_ok = True

    async def texts_to_embed(
        self, domain: TextDomain, after_pk: int, limit: int
    ) -> list[tuple[int, str]]:
        return await self._run(lambda conn: texts_to_embed(conn, _DOMAINS[domain], after_pk, limit))

    # --- export and import: the database steps (GatedStore does the rest) ---------

    async def agents(self) -> list[str]:
        return await self._run(_records.list_agents)

    async def block_page(
        self, agent: str | None, after: Any, limit: int
    ) -> tuple[list[Block], Any]:
        return await self._run(lambda conn: _records.export_blocks(conn, agent, after, limit))

    async def message_page(
        self, agent: str | None, after: Any, limit: int
    ) -> tuple[list[Message], Any]:
        return await self._run(lambda conn: _records.export_messages(conn, agent, after, limit))

    async def restore(
        self, batches: AsyncIterator[RestoreBatch], on_conflict: OnConflict
    ) -> ImportReport:
        async def run(conn: Conn) -> ImportReport:
            report = ImportReport()
            async with conn.transaction():  # one transaction for the whole import
                async for records, vectors in batches:
                    done = await _records.restore(
                        conn, list(records), list(vectors), on_conflict, self._model
                    )
                    report = add_reports(report, done)
            return report

        return await self._run(run)


if TYPE_CHECKING:  # the type checker proves PostgresBackend implements the protocol
    _implements: type[MemoryBackend] = PostgresBackend
