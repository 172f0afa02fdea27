"""The PostgreSQL :class:`PostgresStore`.

Everything but the database steps is in :class:`~satchel.memory._store_base.StoreBase`;
this module connects, migrates, claims the database for the embedder, and runs each
step on a pooled connection. A write to a block re-checks the level the permission
gate allowed in its own statement (:mod:`._blocks`).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Collection, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal, LiteralString, Self, TypeVar

import numpy as np
import numpy.typing as npt
from psycopg.types import TypeInfo

from satchel._errors import InvalidInputError, StorageError
from satchel.embed import Embedder
from satchel.memory._fusion import DEFAULT_FUSION, Fusion
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
from satchel.memory._open import is_postgres_url
from satchel.memory._permissions import ConsentHandler
from satchel.memory._protocol import MemoryStore
from satchel.memory._search import SearchRequest
from satchel.memory._store_base import NewBlock, NewMessage, StoreBase, TextDomain
from satchel.memory._transfer import RestoreBatch, add_reports
from satchel.memory.postgres import _agents, _blocks, _records
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
from satchel.memory.postgres._search_sql import BLOCKS, MESSAGES, TermStats, run_search

__all__ = ["PostgresStore", "is_postgres_url"]

logger = logging.getLogger("satchel.memory")

_T = TypeVar("_T")
F32 = npt.NDArray[np.float32]
_DOMAINS: dict[TextDomain, int] = {"blocks": BLOCKS.key, "messages": MESSAGES.key}


class PostgresStore(StoreBase):
    """Memory on PostgreSQL, shared by any number of processes on any machines.

    Implements :class:`~satchel.memory.MemoryStore` with the same semantics, errors,
    permission gate and consent as :class:`~satchel.memory.SQLiteStore`; full-text
    search uses ``tsvector`` (GIN), vector search pgvector (HNSW, cosine), fused the
    same way. The server needs pgvector (``CREATE EXTENSION vector``, done on first
    open when the user may). Create with :meth:`open`, or use ``async with``.

    Args:
        url: A ``postgresql://`` URL or libpq connection string.
        embedder: The embedding model: ``"default"`` for satchel's local
            all-MiniLM-L6-v2 (loaded on first use), any :class:`~satchel.embed.Embedder`,
            or ``None`` for BM25-only search.
        consent: Asked when a write needs consent; ``None`` makes such writes raise
            :class:`~satchel.ConsentRequiredError`.
        char_limit_mode: ``hard`` refuses a write past a block's ``char_limit``;
            ``soft`` accepts it and logs a warning.
        fusion: How hybrid search combines full-text and vector scores.
        min_connections: Connections the pool keeps open.
        max_connections: At most this many connections at once.
        timeout: Seconds to wait to connect or for a free pooled connection.
        connect_kwargs: Extra arguments for :func:`psycopg.AsyncConnection.connect`
            (e.g. ``{"prepare_threshold": None}`` behind PgBouncer).

    Example:
        >>> async with await PostgresStore.open(  # doctest: +SKIP
        ...     "postgresql://localhost/satchel", embedder=None
        ... ) as store:
        ...     await store.create_block("ada", "persona", "I am Ada.")
    """

    def __init__(
        self,
        url: str,
        *,
        embedder: Embedder | Literal["default"] | None = "default",
        consent: ConsentHandler | None = None,
        char_limit_mode: Literal["hard", "soft"] = "hard",
        fusion: Fusion = DEFAULT_FUSION,
        min_connections: int = 1,
        max_connections: int = 10,
        timeout: float = 30.0,
        connect_kwargs: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(
            embedder=embedder, consent=consent, char_limit_mode=char_limit_mode, fusion=fusion
        )
        self.applied_migrations: list[str] = []
        self._db = Database(
            url,
            min_size=min_connections,
            max_size=max_connections,
            timeout=timeout,
            connect_kwargs=connect_kwargs,
        )
        self._dim: LiteralString | None = dim_sql(self.embedder.dim) if self.embedder else None
        self._opened = False
        self._stats = TermStats()

    @classmethod
    async def open(cls, url: str, **options: Any) -> PostgresStore:
        """Connect, create the extensions and apply pending migrations, claim the
        database for the embedder, and open the pool (same arguments as the class).

        Raises:
            StorageError: The server cannot be reached, or lacks pgvector (the message
                says how to install it).
        """
        store = cls(url, **options)
        await store.setup()
        return store

    async def setup(self) -> None:
        """Do what :meth:`open` does, for a store built with the constructor.
        Idempotent."""
        if self._opened:
            return
        async with self._db.setup_connection() as conn:
            self.applied_migrations = await migrate(conn)
            info = await TypeInfo.fetch(conn, "vector")
            if info is None:
                raise StorageError("the 'vector' type is missing after CREATE EXTENSION vector")
            if self.embedder is not None:
                self._vectors_ok = await claim_model(conn, self._model_id, self.embedder.dim)
        await self._db.open(info)
        self._opened = True

    async def __aenter__(self) -> Self:
        await self.setup()
        return self

    async def close(self) -> None:
        """Close every connection. Idempotent."""
        await self._db.close()

    def __repr__(self) -> str:
        return f"PostgresStore({self._db.safe_url!r})"

    # --- plumbing ------------------------------------------------------------------

    @property
    def _model(self) -> str | None:
        return self._model_id if self._vectors_ok else None

    async def _run(self, function: Callable[[Conn], Awaitable[_T]]) -> _T:
        async with self._db.connection() as conn:
            return await function(conn)

    # --- blocks: the database steps -------------------------------------------------

    async def _resolve(self, agent: str, labels: Sequence[str]) -> list[tuple[int, Block]]:
        async def resolve_all(conn: Conn) -> list[tuple[int, Block]]:
            return [await _blocks.resolve(conn, agent, label) for label in labels]

        return await self._run(resolve_all)

    async def _list_visible(self, agent: str, kinds: Collection[BlockKind] | None) -> list[Block]:
        return await self._run(lambda conn: _blocks.list_visible(conn, agent, kinds))

    async def _insert_block(self, new: NewBlock, vector: F32 | None) -> Block:
        model = self._model
        _, block = await self._run(
            lambda conn: _blocks.insert(conn, **new, vector=vector, model=model)
        )
        return block

    async def _set_text(
        self,
        agent: str,
        pk: int,
        level: Permission,
        value: str,
        *,
        expected_version: int | None,
        description: str | None,
        vector: F32 | None,
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
                hard_limit=self.hard_limit,
                vector=vector,
                model=model,
            )
        )

    async def _append(
        self, agent: str, pk: int, level: Permission, text: str, separator: str
    ) -> Block:
        return await self._run(
            lambda conn: _blocks.append(
                conn, pk, agent, level, text, separator, hard_limit=self.hard_limit
            )
        )

    async def _replace(
        self,
        agent: str,
        pk: int,
        level: Permission,
        old: str,
        new: str,
        *,
        expected_version: int | None,
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
                hard_limit=self.hard_limit,
            )
        )

    async def _delete(
        self, agent: str, pk: int, level: Permission, *, expected_version: int | None
    ) -> Block:
        return await self._run(
            lambda conn: _blocks.delete(conn, pk, agent, level, expected_version=expected_version)
        )

    async def _set_kind(
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

    async def _swap(
        self,
        agent: str,
        archive: tuple[int, Permission],
        load: tuple[int, Permission],
    ) -> tuple[Block, Block]:
        return await self._run(lambda conn: _blocks.swap(conn, agent, archive, load))

    async def _set_share(
        self,
        agent: str,
        pk: int,
        level: Permission,
        recipient: str,
        permission: Permission | None,
    ) -> Block:
        if recipient == agent:  # past the gate, ``agent`` is the owner
            raise InvalidInputError("a block cannot be shared with its own owner")
        return await self._run(
            lambda conn: _blocks.set_share(conn, pk, agent, level, recipient, permission)
        )

    async def _configure(
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

    # --- agents: the database steps ------------------------------------------------

    async def _initialise_agent(
        self, agent: str, template: str, blocks: Sequence[tuple[NewBlock, F32 | None]]
    ) -> list[Block] | None:
        model = self._model
        return await self._run(
            lambda conn: _agents.initialise(conn, agent, template, blocks, model)
        )

    async def _is_set_up(self, agent: str) -> bool:
        return await self._run(lambda conn: _agents.is_set_up(conn, agent))

    async def _agent_summaries(self, agent: str | None) -> list[AgentSummary]:
        return await self._run(lambda conn: _agents.summaries(conn, agent))

    # --- messages and search: the database steps ------------------------------------

    async def _insert_message(self, new: NewMessage, vector: F32 | None) -> Message:
        model = self._model
        return await self._run(lambda conn: insert_message(conn, **new, vector=vector, model=model))

    async def _list_messages(
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

    async def _search(self, request: SearchRequest) -> list[SearchHit]:
        model, dim = self._model, self._dim if self._vectors_ok else None
        return await self._run(
            lambda conn: run_search(conn, self._stats, request, model=model, dim=dim)
        )

    # --- vectors: the database steps ------------------------------------------------

    async def _block_text(self, pk: int) -> str:
        items = await self._run(lambda conn: texts_to_embed(conn, BLOCKS.key, pk - 1, 1))
        return next((value for item_pk, value in items if item_pk == pk), "")

    async def _store_vectors(
        self, domain: TextDomain, items: Sequence[tuple[int, str]], vectors: F32
    ) -> None:
        model = self._model_id
        await self._run(lambda conn: store_vectors(conn, _DOMAINS[domain], items, vectors, model))

    async def _count_texts(self) -> int:
        return await self._run(count_texts)

    async def _adopt_model(self) -> None:
        assert self.embedder is not None
        model, dim = self._model_id, self.embedder.dim
        await self._run(lambda conn: adopt_model(conn, model, dim))

    async def _texts_to_embed(
        self, domain: TextDomain, after_pk: int, limit: int
    ) -> list[tuple[int, str]]:
        return await self._run(lambda conn: texts_to_embed(conn, _DOMAINS[domain], after_pk, limit))

    # --- export and import: the database steps (RecordTransfer does the rest) -----

    async def _agents(self) -> list[str]:
        return await self._run(_records.list_agents)

    async def _block_page(
        self, agent: str | None, after: Any, limit: int
    ) -> tuple[list[Block], Any]:
        return await self._run(lambda conn: _records.export_blocks(conn, agent, after, limit))

    async def _message_page(
        self, agent: str | None, after: Any, limit: int
    ) -> tuple[list[Message], Any]:
        return await self._run(lambda conn: _records.export_messages(conn, agent, after, limit))

    async def _restore(
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


if TYPE_CHECKING:  # the type checker proves PostgresStore implements the protocol
    _implements: type[MemoryStore] = PostgresStore
