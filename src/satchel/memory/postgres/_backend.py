"""The PostgreSQL :class:`PostgresBackend`: the database steps of the shared store.

It connects, migrates, claims the database for the embedder's model, and runs each
step on a pooled connection (:mod:`._runner`). A write to a block re-checks the
level the permission gate allowed in its own statement (:mod:`._blocks`). The gate
itself, consent and embedding are :class:`~satchel.memory.GatedStore`'s.

The backend is composed, not stacked: it holds a :class:`~._runner.Runner` (its
:meth:`read` and :meth:`write` over the dialect's SQL modules, and the model vectors
are stored for) and two parts sharing it, :class:`~._backend_blocks.BlockSteps` (the
block steps) and :class:`~._backend_agents.AgentSteps` (agents and messages), to which
the :class:`~satchel.memory.MemoryBackend` methods they own delegate; this module keeps
connecting and closing, the embedding model, search, vectors, export and import.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Collection, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, Concatenate, LiteralString, ParamSpec, TypeVar

import numpy as np
import numpy.typing as npt
from psycopg.types import TypeInfo

from satchel._errors import StorageError
from satchel.memory._backend import MemoryBackend, NewBlock, NewMessage, RestoreBatch, TextDomain
from satchel.memory._history import BlockVersion
from satchel.memory._merge import MergeSteps
from satchel.memory._model_change import model_change_message
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
from satchel.memory.postgres import _records
from satchel.memory.postgres._backend_agents import AgentSteps
from satchel.memory.postgres._backend_blocks import BlockSteps
from satchel.memory.postgres._db import Conn, Database
from satchel.memory.postgres._messages import (
    count_texts,
    count_without_vector,
    read_meta,
    store_vectors,
    texts_to_embed,
    texts_without_vector,
    write_meta,
)
from satchel.memory.postgres._migrations import migrate
from satchel.memory.postgres._model import adopt_model, claim_model, dim_sql
from satchel.memory.postgres._runner import Runner
from satchel.memory.postgres._search_sql import BLOCKS, MESSAGES, TermStats, run_search

__all__ = ["PostgresBackend"]

logger = logging.getLogger("satchel.memory")

F32 = npt.NDArray[np.float32]
_T = TypeVar("_T")
_P = ParamSpec("_P")
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
        self._dim: LiteralString | None = None
        self._embed_dim: int | None = None
        self.runner = Runner(self._db)
        """How every step runs (on a pooled connection), and the model vectors are for."""
        self.blocks = BlockSteps(self.runner)
        """The block steps."""
        self.agent_steps = AgentSteps(self.runner)
        """The agent and message steps."""
        self._opened = False
        self._stats = TermStats()
        self.stored_model: str | None = None
        """The embedding model (``NAME:DIM``) the database's vectors are of, once
        opened with an embedder."""

    def use_model(self, model: str | None, dim: int | None) -> None:
        """Remember the model; :meth:`setup` claims the database for it."""
        self.runner.model_id, self._embed_dim = model, dim
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
            if self.runner.model_id is not None and self._embed_dim is not None:
                self.stored_model = await claim_model(conn, self.runner.model_id, self._embed_dim)
                self.runner.vectors_ok = self.stored_model == self.runner.model_id
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

    @property
    def vectors_ok(self) -> bool:
        """Whether the database's vectors are the embedder's model's."""
        return self.runner.vectors_ok

    # --- running steps ----------------------------------------------------------

    async def read(
        self,
        function: Callable[Concatenate[Conn, _P], Awaitable[_T]],
        *args: _P.args,
        **kwargs: _P.kwargs,
    ) -> _T:
        """Run ``function(conn, *args, **kwargs)``, a step of this dialect's SQL modules,
        on a pooled connection."""
        return await self.runner.read(function, *args, **kwargs)

    async def write(
        self,
        function: Callable[Concatenate[Conn, _P], Awaitable[_T]],
        *args: _P.args,
        **kwargs: _P.kwargs,
    ) -> _T:
        """Run ``function(conn, *args, **kwargs)``, a step of this dialect's SQL modules,
        on a pooled connection (one statement, or its own transaction)."""
        return await self.runner.write(function, *args, **kwargs)

    # --- blocks: BlockSteps ---
    async def resolve(self, agent: str, labels: Sequence[str]) -> list[tuple[int, Block]]:
        return await self.blocks.resolve(agent, labels)

    async def resolve_id(self, agent: str, block_id: str) -> Block:
        return await self.blocks.resolve_id(agent, block_id)

    async def list_visible(self, agent: str, kinds: Collection[BlockKind] | None) -> list[Block]:
        return await self.blocks.list_visible(agent, kinds)

    async def list_visible_page(
        self, agent: str, kinds: Collection[BlockKind] | None, offset: int, limit: int
    ) -> tuple[list[Block], int]:
        return await self.blocks.list_visible_page(agent, kinds, offset, limit)

    async def block_history(self, block_id: str) -> list[BlockVersion]:
        """The kept earlier versions of a block (see :mod:`satchel.memory._history`)."""
        return await self.blocks.block_history(block_id)

    async def insert_block(self, new: NewBlock, vector: F32 | None) -> Block:
        return await self.blocks.insert_block(new, vector)

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
        return await self.blocks.set_text(
            agent,
            pk,
            level,
            value,
            expected_version=expected_version,
            description=description,
            vector=vector,
            hard_limit=hard_limit,
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
        return await self.blocks.append(agent, pk, level, text, separator, hard_limit=hard_limit)

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
        return await self.blocks.replace(
            agent, pk, level, old, new, expected_version=expected_version, hard_limit=hard_limit
        )

    async def delete(
        self, agent: str, pk: int, level: Permission, *, expected_version: int | None
    ) -> Block:
        return await self.blocks.delete(agent, pk, level, expected_version=expected_version)

    async def set_kind(
        self,
        agent: str,
        pk: int,
        level: Permission,
        kind: BlockKind,
        *,
        expected_version: int | None,
    ) -> Block:
        return await self.blocks.set_kind(agent, pk, level, kind, expected_version=expected_version)

    async def swap(
        self,
        agent: str,
        archive: tuple[int, Permission],
        load: tuple[int, Permission],
    ) -> tuple[Block, Block]:
        return await self.blocks.swap(agent, archive, load)

    async def set_share(
        self,
        agent: str,
        pk: int,
        level: Permission,
        recipient: str,
        permission: Permission | None,
    ) -> Block:
        return await self.blocks.set_share(agent, pk, level, recipient, permission)

    async def configure(
        self,
        agent: str,
        pk: int,
        *,
        permission: Permission | None,
        char_limit: int | Unset | None,
        description: str | None,
    ) -> Block:
        return await self.blocks.configure(
            agent, pk, permission=permission, char_limit=char_limit, description=description
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
        return await self.blocks.operator_write(
            agent, pk, change, expected_version=expected_version, vector=vector
        )

    async def operator_delete(self, agent: str, pk: int, *, expected_version: int) -> Block:
        return await self.blocks.operator_delete(agent, pk, expected_version=expected_version)

    async def merge_agents(self, steps: MergeSteps) -> int:
        return await self.blocks.merge_agents(steps)

    # --- agents and messages: AgentSteps ---
    async def initialise_agent(
        self, agent: str, template: str, blocks: Sequence[tuple[NewBlock, F32 | None]]
    ) -> list[Block] | None:
        return await self.agent_steps.initialise_agent(agent, template, blocks)

    async def is_set_up(self, agent: str) -> bool:
        return await self.agent_steps.is_set_up(agent)

    async def agent_summaries(self, agent: str | None) -> list[AgentSummary]:
        return await self.agent_steps.agent_summaries(agent)

    async def insert_message(self, new: NewMessage, vector: F32 | None) -> Message:
        return await self.agent_steps.insert_message(new, vector)

    async def list_messages(
        self,
        agent: str,
        *,
        conversation_id: str | None,
        limit: int,
        before: datetime | None,
    ) -> list[Message]:
        return await self.agent_steps.list_messages(
            agent, conversation_id=conversation_id, limit=limit, before=before
        )

    # --- search and vectors: the database steps ------------------------------------

    async def search(self, request: SearchRequest) -> list[SearchHit]:
        model, dim = self.runner.model, self._dim if self.runner.vectors_ok else None

        async def search(conn: Conn) -> list[SearchHit]:
            if model is not None and request.query_vector is not None:
                await self._check_model(conn, model)
            return await run_search(conn, self._stats, request, model=model, dim=dim)

        return await self.runner.run(search)

    async def _check_model(self, conn: Conn, model: str) -> None:
        """Notice that another process moved the database to another model: vector
        search is then off here too (the search's own SQL already ignores vectors of
        another model; this makes the store say so)."""
        stored = await read_meta(conn, "embedding_model")
        if stored is None or stored == model:
            return
        if self.runner.vectors_ok:
            logger.warning("%s", model_change_message(stored, model))
        self.stored_model, self.runner.vectors_ok = stored, False

    async def block_text(self, pk: int) -> str:
        items = await self.runner.run(lambda conn: texts_to_embed(conn, BLOCKS.key, pk - 1, 1))
        return next((value for item_pk, value in items if item_pk == pk), "")

    async def store_vectors(
        self, domain: TextDomain, items: Sequence[tuple[int, str]], vectors: F32
    ) -> None:
        model = self.runner.model_id
        assert model is not None
        await self.runner.run(
            lambda conn: store_vectors(conn, _DOMAINS[domain], items, vectors, model)
        )

    async def count_texts(self) -> int:
        return await self.runner.run(count_texts)

    async def adopt_model(self) -> None:
        model, dim = self.runner.model_id, self._embed_dim
        assert model is not None
        assert dim is not None
        await self.runner.run(lambda conn: adopt_model(conn, model, dim))
        self.runner.vectors_ok = True
        self.stored_model = model

    async def texts_without_vector(
        self, domain: TextDomain, after_pk: int, limit: int
    ) -> list[tuple[int, str]]:
        """The next ``limit`` non-empty ``(pk, text)`` pairs of ``domain`` with ``pk >
        after_pk`` that have no vector."""
        return await self.runner.run(
            lambda conn: texts_without_vector(conn, _DOMAINS[domain], after_pk, limit)
        )

    async def count_without_vector(self) -> int:
        """How many non-empty blocks and messages have no vector."""
        return await self.runner.run(count_without_vector)

    async def read_meta(self, key: str) -> str | None:
        """The value of ``key`` in the database's ``satchel_meta`` table, or ``None``."""
        return await self.runner.run(lambda conn: read_meta(conn, key))

    async def write_meta(self, key: str, value: str | None) -> None:
        """Set ``key`` in ``satchel_meta`` (``None``: remove it)."""
        await self.runner.run(lambda conn: write_meta(conn, key, value))

    async def texts_to_embed(
        self, domain: TextDomain, after_pk: int, limit: int
    ) -> list[tuple[int, str]]:
        return await self.runner.run(
            lambda conn: texts_to_embed(conn, _DOMAINS[domain], after_pk, limit)
        )

    # --- export and import: the database steps (GatedStore does the rest) ---------

    async def agents(self) -> list[str]:
        return await self.runner.run(_records.list_agents)

    async def block_page(
        self, agent: str | None, after: Any, limit: int
    ) -> tuple[list[Block], Any]:
        return await self.runner.run(lambda conn: _records.export_blocks(conn, agent, after, limit))

    async def message_page(
        self, agent: str | None, after: Any, limit: int
    ) -> tuple[list[Message], Any]:
        return await self.runner.run(
            lambda conn: _records.export_messages(conn, agent, after, limit)
        )

    async def restore(
        self, batches: AsyncIterator[RestoreBatch], on_conflict: OnConflict
    ) -> ImportReport:
        async def run(conn: Conn) -> ImportReport:
            report = ImportReport()
            async with conn.transaction():  # one transaction for the whole import
                async for records, vectors in batches:
                    done = await _records.restore(
                        conn, list(records), list(vectors), on_conflict, self.runner.model
                    )
                    report = add_reports(report, done)
            return report

        return await self.runner.run(run)


if TYPE_CHECKING:  # the type checker proves PostgresBackend implements the protocol
    _implements: type[MemoryBackend] = PostgresBackend
