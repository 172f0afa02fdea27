"""The PostgreSQL :class:`PostgresBackend`: the database steps of the shared store.

It connects, migrates, claims the database for the embedder's model, and runs each
step on a pooled connection. A write to a block re-checks the level the permission
gate allowed in its own statement (:mod:`._blocks`). The gate itself, consent and
embedding are :class:`~satchel.memory.GatedStore`'s.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Collection, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, LiteralString, TypeVar

import numpy as np
import numpy.typing as npt
from psycopg.types import TypeInfo

from satchel._errors import StorageError
from satchel.memory._backend import MemoryBackend, NewBlock, NewMessage, RestoreBatch, TextDomain
from satchel.memory._history import BlockVersion
from satchel.memory._models import (
    AgentSummary,
    Block,
    BlockKind,
    ImportReport,
    Message,
    OnConflict,
    Permission,
    SearchHit,
    Unset,
)
from satchel.memory._operator import BlockChange
from satchel.memory._search import SearchRequest
from satchel.memory._transfer import add_reports
from satchel.memory.postgres import _agents, _blocks, _history, _operator, _records
from satchel.memory.postgres._db import Conn, Database
from satchel.memory.postgres._messages import (
    count_texts,
    insert_message,
    list_messages,
    store_vectors,
    texts_to_embed,
)
from satchel.memory.postgres._migrations import migrate
from satchel.memory.postgres._model import adopt_model, claim_model, dim_sql
from satchel.memory.postgres._paging import visible_page
from satchel.memory.postgres._search_sql import BLOCKS, MESSAGES, TermStats, run_search

__all__ = ["PostgresBackend"]

logger = logging.getLogger("satchel.memory")

_T = TypeVar("_T")
F32 = npt.NDArray[np.float32]
_DOMAINS: dict[TextDomain, int] = {"blocks": BLOCKS.key, "messages": MESSAGES.key}


class PostgresBackend:
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

    # --- plumbing ------------------------------------------------------------------

    @property
    def _model(self) -> str | None:
        return self._model_id if self.vectors_ok else None

    async def _run(self, function: Callable[[Conn], Awaitable[_T]]) -> _T:
        async with self._db.connection() as conn:
            return await function(conn)

    # --- blocks: the database steps -------------------------------------------------

    async def resolve(self, agent: str, labels: Sequence[str]) -> list[tuple[int, Block]]:
        async def resolve_all(conn: Conn) -> list[tuple[int, Block]]:
            return [await _blocks.resolve(conn, agent, label) for label in labels]

        return await self._run(resolve_all)

    async def resolve_id(self, agent: str, block_id: str) -> Block:
        return await self._run(lambda conn: _blocks.resolve_id(conn, agent, block_id))

    async def list_visible(self, agent: str, kinds: Collection[BlockKind] | None) -> list[Block]:
        return await self._run(lambda conn: _blocks.list_visible(conn, agent, kinds))

    async def list_visible_page(
        self, agent: str, kinds: Collection[BlockKind] | None, offset: int, limit: int
    ) -> tuple[list[Block], int]:
        return await self._run(lambda conn: visible_page(conn, agent, kinds, offset, limit))

    async def block_history(self, block_id: str) -> list[BlockVersion]:
        """The kept earlier versions of a block (see :mod:`satchel.memory._history`)."""
        return await self._run(lambda conn: _history.block_history(conn, block_id))

    async def insert_block(self, new: NewBlock, vector: F32 | None) -> Block:
        model = self._model
        _, block = await self._run(
            lambda conn: _blocks.insert(conn, **new, vector=vector, model=model)
        )
        return block

    async def set_text(
        self,
        agent: str,
        pk: int,
        level: Permission,
        value: str,
        *,
        expected_version: int | None,
        description: str | None,
        vector: F32 | None,
        hard_limit: bool,
    ) -> Block:
        model = self._model
        return await self._run(
            lambda conn: _blocks.set_text(
                conn,
                pk,
                agent,
                level,
                value,
                expected_version=expected_version,
                description=description,
                hard_limit=hard_limit,
                vector=vector,
                model=model,
            )
        )

    async def append(
        self,
        agent: str,
        pk: int,
        level: Permission,
        text: str,
        separator: str,
        *,
        hard_limit: bool,
    ) -> Block:
        return await self._run(
            lambda conn: _blocks.append(
                conn, pk, agent, level, text, separator, hard_limit=hard_limit
            )
        )

    async def replace(
        self,
        agent: str,
        pk: int,
        level: Permission,
        old: str,
        new: str,
        *,
        expected_version: int | None,
        hard_limit: bool,
    ) -> Block:
        return await self._run(
            lambda conn: _blocks.replace(
                conn,
                pk,
                agent,
                level,
                old,
                new,
                expected_version=expected_version,
                hard_limit=hard_limit,
            )
        )

    async def delete(
        self, agent: str, pk: int, level: Permission, *, expected_version: int | None
    ) -> Block:
        return await self._run(
            lambda conn: _blocks.delete(conn, pk, agent, level, expected_version=expected_version)
        )

    async def set_kind(
        self,
        agent: str,
        pk: int,
        level: Permission,
        kind: BlockKind,
        *,
        expected_version: int | None,
    ) -> Block:
        return await self._run(
            lambda conn: _blocks.set_kind(
                conn, pk, agent, level, kind, expected_version=expected_version
            )
        )

    async def swap(
        self,
        agent: str,
        archive: tuple[int, Permission],
        load: tuple[int, Permission],
    ) -> tuple[Block, Block]:
        return await self._run(lambda conn: _blocks.swap(conn, agent, archive, load))

    async def set_share(
        self,
        agent: str,
        pk: int,
        level: Permission,
        recipient: str,
        permission: Permission | None,
    ) -> Block:
        return await self._run(
            lambda conn: _blocks.set_share(conn, pk, agent, level, recipient, permission)
        )

    async def configure(
        self,
        agent: str,
        pk: int,
        *,
        permission: Permission | None,
        char_limit: int | Unset | None,
        description: str | None,
    ) -> Block:
        return await self._run(
            lambda conn: _blocks.configure(
                conn,
                pk,
                agent,
                permission=permission,
                char_limit=char_limit,
                description=description,
            )
        )

    async def operator_write(
        self,
        agent: str,
        pk: int,
        change: BlockChange,
        *,
        expected_version: int,
        vector: F32 | None,
    ) -> Block:
        model = self._model
        return await self._run(
            lambda conn: _operator.operator_write(
                conn,
                pk,
                agent,
                change,
                expected_version=expected_version,
                vector=vector,
                model=model,
            )
        )

    async def operator_delete(self, agent: str, pk: int, *, expected_version: int) -> Block:
        return await self._run(
            lambda conn: _operator.operator_delete(
                conn, pk, agent, expected_version=expected_version
            )
        )

    # --- agents: the database steps ------------------------------------------------

    async def initialise_agent(
        self, agent: str, template: str, blocks: Sequence[tuple[NewBlock, F32 | None]]
    ) -> list[Block] | None:
        model = self._model
        return await self._run(
            lambda conn: _agents.initialise(conn, agent, template, blocks, model)
        )

    async def is_set_up(self, agent: str) -> bool:
        return await self._run(lambda conn: _agents.is_set_up(conn, agent))

    async def agent_summaries(self, agent: str | None) -> list[AgentSummary]:
        return await self._run(lambda conn: _agents.summaries(conn, agent))

    # --- messages and search: the database steps ------------------------------------

    async def insert_message(self, new: NewMessage, vector: F32 | None) -> Message:
        model = self._model
        return await self._run(lambda conn: insert_message(conn, **new, vector=vector, model=model))

    async def list_messages(
        self,
        agent: str,
        *,
        conversation_id: str | None,
        limit: int,
        before: datetime | None,
    ) -> list[Message]:
        return await self._run(
            lambda conn: list_messages(
                conn, agent, conversation_id=conversation_id, limit=limit, before=before
            )
        )

    async def search(self, request: SearchRequest) -> list[SearchHit]:
        model, dim = self._model, self._dim if self.vectors_ok else None
        return await self._run(
            lambda conn: run_search(conn, self._stats, request, model=model, dim=dim)
        )

    # --- vectors: the database steps ------------------------------------------------

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
