"""The PostgreSQL :class:`PostgresStore`."""

from __future__ import annotations

import logging
from collections.abc import (
    Awaitable,
    Callable,
    Collection,
    Mapping,
    Sequence,
)
from datetime import datetime
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal, LiteralString, Self, TypeVar

import numpy as np
import numpy.typing as npt
from psycopg.types import TypeInfo

from satchel._errors import StorageError, VersionConflictError
from satchel.embed import Embedder, default_embedder
from satchel.memory._embedding import EmbedBatcher
from satchel.memory._fts import query_terms
from satchel.memory._fusion import DEFAULT_FUSION, Fusion
from satchel.memory._models import (
    Block,
    BlockKind,
    Domain,
    ImportReport,
    Message,
    OnConflict,
    Permission,
    Role,
    SearchFilters,
    SearchHit,
    SearchMode,
    utc_now,
    validate_agent,
    validate_label,
)
from satchel.memory._permissions import ConsentHandler, Operation, authorize
from satchel.memory._protocol import MemoryStore, ProgressCallback
from satchel.memory._search import plan_search
from satchel.memory._transfer import MAX_EMBED_CHARS, RecordTransfer
from satchel.memory.postgres import _blocks, _records
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
from satchel.memory.postgres._rows import normalise_tags
from satchel.memory.postgres._search_sql import (
    BLOCKS,
    MESSAGES,
    SearchRequest,
    TermStats,
    run_search,
)

__all__ = ["PostgresStore", "is_postgres_url"]

logger = logging.getLogger("satchel.memory")

_T = TypeVar("_T")
F32 = npt.NDArray[np.float32]
_ROLES = ("user", "assistant", "system", "tool")
_RETRIES = 5


def is_postgres_url(target: str) -> bool:
    """Whether ``target`` names a PostgreSQL database (``postgresql://`` or
    ``postgres://``) rather than a SQLite file.

    Example:
        >>> is_postgres_url("postgresql://localhost/satchel")
        True
    """
    return target.startswith(("postgresql://", "postgres://"))


class PostgresStore(RecordTransfer):
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
        if embedder == "default":
            embedder = default_embedder()
        self.embedder: Embedder | None = embedder
        self.consent = consent
        self.hard_limit = char_limit_mode == "hard"
        self.fusion = fusion
        self.applied_migrations: list[str] = []
        self._db = Database(
            url,
            min_size=min_connections,
            max_size=max_connections,
            timeout=timeout,
            connect_kwargs=connect_kwargs,
        )
        self._dim: LiteralString | None = dim_sql(embedder.dim) if embedder else None
        self._batcher = EmbedBatcher(embedder) if embedder is not None else None
        self._vectors_ok = False
        self._opened = False
        self._stats = TermStats()
        self._dirty: set[int] = set()
        self._refreshing: set[int] = set()

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

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    async def close(self) -> None:
        """Close every connection. Idempotent."""
        await self._db.close()

    def __repr__(self) -> str:
        return f"PostgresStore({self._db.safe_url!r})"

    # --- plumbing ------------------------------------------------------------------

    @property
    def _model_id(self) -> str:
        assert self.embedder is not None
        return f"{self.embedder.name}:{self.embedder.dim}"

    @property
    def _model(self) -> str | None:
        return self._model_id if self._vectors_ok else None

    async def _run(self, function: Callable[[Conn], Awaitable[_T]]) -> _T:
        async with self._db.connection() as conn:
            return await function(conn)

    async def _embed_one(self, text: str) -> F32 | None:
        if self._batcher is None or not self._vectors_ok or not text:
            return None
        return (await self._batcher.embed([text[:MAX_EMBED_CHARS]]))[0]

    async def _refresh_block_vector(self, pk: int, text: str) -> None:
        """Embed a block's text after a write that changed it (``text`` is the value
        the write left), coalesced per block: while one call embeds, later calls only
        mark the block dirty, and the running call embeds the newest text once more."""
        if self._batcher is None or not self._vectors_ok:
            return
        self._dirty.add(pk)
        if pk in self._refreshing:
            return
        self._refreshing.add(pk)
        try:
            latest: str | None = text
            while pk in self._dirty:
                self._dirty.discard(pk)
                await self._embed_block_now(self._batcher, pk, latest)
                latest = None  # a later write changed it: read the newest text
        finally:
            self._refreshing.discard(pk)

    async def _embed_block_now(self, batcher: EmbedBatcher, pk: int, text: str | None) -> None:
        if text is None:
            items = await self._run(lambda conn: texts_to_embed(conn, BLOCKS.key, pk - 1, 1))
            items = [(item_pk, value) for item_pk, value in items if item_pk == pk]
        else:
            items = [(pk, text)] if text else []
        if not items:
            return
        try:
            vectors = await batcher.embed([value[:MAX_EMBED_CHARS] for _, value in items])
        except Exception:  # the write is committed; a missing vector is healed by reembed()
            logger.exception("embedding block %d failed; its vector is missing", pk)
            return
        model = self._model_id
        await self._run(lambda conn: store_vectors(conn, BLOCKS.key, items, vectors, model))

    async def _gated(
        self,
        agent: str,
        label: str,
        operation: Operation,
        reason: Callable[[Block], str],
        write: Callable[[Conn, int, Permission], Awaitable[_T]],
        *,
        share_level: Permission | None = None,
    ) -> tuple[int, _T]:
        """Resolve ``label`` for ``agent``, pass the permission gate (no connection is
        held while a consent handler decides), then run ``write``, which re-checks in
        its own statement the level the gate allowed."""
        validate_agent(agent)
        for _ in range(_RETRIES):
            pk, block = await self._run(lambda conn: _blocks.resolve(conn, agent, label))
            level = await authorize(
                operation,
                block=block,
                agent=agent,
                consent=self.consent,
                reason=reason(block),
                share_level=share_level,
            )
            try:
                return pk, await self._run(lambda conn, pk=pk, level=level: write(conn, pk, level))
            except _blocks.LevelChanged:
                continue
        raise VersionConflictError(
            f"the permissions of block {label!r} kept changing; try again",
            details={"label": label},
        )

    # --- blocks --------------------------------------------------------------------

    async def create_block(
        self,
        agent: str,
        label: str,
        value: str = "",
        *,
        description: str = "",
        kind: BlockKind = BlockKind.CORE,
        permission: Permission = Permission.READ_WRITE,
        char_limit: int | None = None,
        pinned: bool = False,
        tags: Sequence[str] = (),
        metadata: Mapping[str, Any] | None = None,
    ) -> Block:
        """See :meth:`MemoryStore.create_block`."""
        validate_agent(agent)
        validate_label(label)
        clean_tags = normalise_tags(tags)
        kind, permission = BlockKind(kind), Permission(permission)
        vector = await self._embed_one(value)
        model = self._model
        _, block = await self._run(
            lambda conn: _blocks.insert(
                conn,
                agent=agent,
                label=label,
                value=value,
                description=description,
                kind=kind,
                permission=permission,
                char_limit=char_limit,
                pinned=pinned,
                tags=clean_tags,
                metadata=metadata,
                hard_limit=self.hard_limit,
                vector=vector,
                model=model,
            )
        )
        return block

    async def get_block(self, agent: str, label: str) -> Block:
        """See :meth:`MemoryStore.get_block`."""
        validate_agent(agent)
        _, block = await self._run(lambda conn: _blocks.resolve(conn, agent, label))
        return block

    async def list_blocks(
        self, agent: str, kinds: Collection[BlockKind] | None = None
    ) -> list[Block]:
        """See :meth:`MemoryStore.list_blocks`."""
        validate_agent(agent)
        return await self._run(lambda conn: _blocks.list_visible(conn, agent, kinds))

    async def update_block_text(
        self,
        agent: str,
        label: str,
        value: str,
        *,
        expected_version: int | None = None,
        description: str | None = None,
    ) -> Block:
        """See :meth:`MemoryStore.update_block_text`."""
        vector = await self._embed_one(value)
        model = self._model
        _, block = await self._gated(
            agent,
            label,
            Operation.OVERWRITE,
            lambda b: (
                f"overwrite block {b.label!r} ({b.chars} characters) with {len(value)} characters"
            ),
            lambda conn, pk, level: _blocks.set_text(
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
            ),
        )
        return block

    async def append_to_block(
        self, agent: str, label: str, text: str, *, separator: str = "\n"
    ) -> Block:
        """See :meth:`MemoryStore.append_to_block`."""
        pk, block = await self._gated(
            agent,
            label,
            Operation.APPEND,
            lambda b: f"append {len(text)} characters to block {b.label!r}",
            lambda conn, pk, level: _blocks.append(
                conn, pk, agent, level, text, separator, hard_limit=self.hard_limit
            ),
        )
        await self._refresh_block_vector(pk, block.value)
        return block

    async def replace_in_block(
        self,
        agent: str,
        label: str,
        old: str,
        new: str,
        *,
        expected_version: int | None = None,
    ) -> Block:
        """See :meth:`MemoryStore.replace_in_block`."""
        pk, block = await self._gated(
            agent,
            label,
            Operation.OVERWRITE,
            lambda b: (
                f"replace {len(old)} characters of block {b.label!r} with {len(new)} characters"
            ),
            lambda conn, pk, level: _blocks.replace(
                conn,
                pk,
                agent,
                level,
                old,
                new,
                expected_version=expected_version,
                hard_limit=self.hard_limit,
            ),
        )
        await self._refresh_block_vector(pk, block.value)
        return block

    async def delete_block(
        self, agent: str, label: str, *, expected_version: int | None = None
    ) -> Block:
        """See :meth:`MemoryStore.delete_block`."""
        _, block = await self._gated(
            agent,
            label,
            Operation.DELETE,
            lambda b: f"delete block {b.label!r} ({b.chars} characters)",
            lambda conn, pk, level: _blocks.delete(
                conn, pk, agent, level, expected_version=expected_version
            ),
        )
        return block

    async def set_kind(
        self,
        agent: str,
        label: str,
        kind: BlockKind,
        *,
        expected_version: int | None = None,
    ) -> Block:
        """See :meth:`MemoryStore.set_kind`."""
        kind = BlockKind(kind)
        _, block = await self._gated(
            agent,
            label,
            Operation.KIND_CHANGE,
            lambda b: f"move block {b.label!r} from {b.kind.value} to {kind.value} memory",
            lambda conn, pk, level: _blocks.set_kind(
                conn, pk, agent, level, kind, expected_version=expected_version
            ),
        )
        return block

    async def swap_blocks(
        self, agent: str, archive_label: str, load_label: str
    ) -> tuple[Block, Block]:
        """See :meth:`MemoryStore.swap_blocks`."""
        validate_agent(agent)

        async def resolve_both(conn: Conn) -> tuple[tuple[int, Block], tuple[int, Block]]:
            first = await _blocks.resolve(conn, agent, archive_label)
            return first, await _blocks.resolve(conn, agent, load_label)

        for _ in range(_RETRIES):
            (pk_a, block_a), (pk_l, block_l) = await self._run(resolve_both)
            if pk_a == pk_l:
                raise ValueError("swap needs two different blocks")
            levels = [
                await authorize(
                    Operation.KIND_CHANGE,
                    block=block,
                    agent=agent,
                    consent=self.consent,
                    reason=f"swap: move block {block.label!r} to {target.value} memory",
                )
                for block, target in ((block_a, BlockKind.ARCHIVAL), (block_l, BlockKind.WORKING))
            ]
            try:
                return await self._run(
                    lambda conn, a=pk_a, b=pk_l, levels=levels: _blocks.swap(
                        conn, agent, (a, levels[0]), (b, levels[1])
                    )
                )
            except _blocks.LevelChanged:
                continue
        raise VersionConflictError("the permissions of the blocks kept changing; try again")

    async def share_block(
        self, agent: str, label: str, recipient: str, permission: Permission
    ) -> Block:
        """See :meth:`MemoryStore.share_block`."""
        validate_agent(recipient)
        permission = Permission(permission)
        return await self._share(agent, label, recipient, permission)

    async def unshare_block(self, agent: str, label: str, recipient: str) -> Block:
        """See :meth:`MemoryStore.unshare_block`."""
        validate_agent(recipient)
        return await self._share(agent, label, recipient, None)

    async def _share(
        self, agent: str, label: str, recipient: str, permission: Permission | None
    ) -> Block:
        def reason(block: Block) -> str:
            if permission is None:
                return f"stop sharing block {block.label!r} with {recipient!r}"
            return f"share block {block.label!r} with {recipient!r} at {permission.value}"

        async def write(conn: Conn, pk: int, level: Permission) -> Block:
            if recipient == agent:  # past the gate, ``agent`` is the owner
                raise ValueError("a block cannot be shared with its own owner")
            return await _blocks.set_share(conn, pk, agent, level, recipient, permission)

        _, block = await self._gated(
            agent, label, Operation.SHARE, reason, write, share_level=permission
        )
        return block

    # --- messages ------------------------------------------------------------------

    async def add_message(
        self,
        agent: str,
        role: Role,
        content: str,
        *,
        conversation_id: str = "default",
        created_at: datetime | None = None,
        tags: Sequence[str] = (),
        metadata: Mapping[str, Any] | None = None,
    ) -> Message:
        """See :meth:`MemoryStore.add_message`."""
        validate_agent(agent)
        if role not in _ROLES:
            raise ValueError(f"role must be one of {_ROLES}, got {role!r}")
        if created_at is not None and created_at.tzinfo is None:
            raise ValueError("datetimes given to the memory store must be timezone-aware")
        clean_tags = normalise_tags(tags)
        moment = created_at or utc_now()
        vector = await self._embed_one(content)
        model = self._model
        return await self._run(
            lambda conn: insert_message(
                conn,
                agent=agent,
                role=role,
                content=content,
                conversation_id=conversation_id,
                created_at=moment,
                tags=clean_tags,
                metadata=metadata,
                vector=vector,
                model=model,
            )
        )

    async def list_messages(
        self,
        agent: str,
        *,
        conversation_id: str | None = None,
        limit: int = 50,
        before: datetime | None = None,
    ) -> list[Message]:
        """See :meth:`MemoryStore.list_messages`."""
        validate_agent(agent)
        if limit < 1:
            raise ValueError("limit must be at least 1")
        return await self._run(
            lambda conn: list_messages(
                conn, agent, conversation_id=conversation_id, limit=limit, before=before
            )
        )

    # --- search --------------------------------------------------------------------

    async def search(
        self,
        agent: str,
        query: str,
        *,
        domains: Domain = Domain.ALL,
        filters: SearchFilters | None = None,
        limit: int = 10,
        mode: SearchMode = "hybrid",
    ) -> list[SearchHit]:
        """See :meth:`MemoryStore.search`."""
        validate_agent(agent)
        if not 1 <= limit <= 1000:
            raise ValueError("limit must be between 1 and 1000")
        filters = filters or SearchFilters()
        request = SearchRequest(
            agent=agent,
            terms=query_terms(query),
            query_vector=await self._embed_one(query.strip()) if mode != "bm25" else None,
            model=self._model,
            dim=self._dim if self._vectors_ok else None,
            plan=plan_search(Domain(domains), filters),
            filters=filters,
            limit=limit,
            mode=mode,
            fusion=self.fusion,
        )
        return await self._run(lambda conn: run_search(conn, self._stats, request))

    # --- maintenance ---------------------------------------------------------------

    async def reembed(
        self, *, progress: ProgressCallback | None = None, batch_size: int = 64
    ) -> int:
        """See :meth:`MemoryStore.reembed`. Re-embeds everything, and adopts the current
        embedder for a database that held another model's vectors."""
        if self._batcher is None or self.embedder is None:
            return 0
        batcher, model, dim = self._batcher, self._model_id, self.embedder.dim
        total = await self._run(count_texts)
        if not self._vectors_ok:
            await self._run(lambda conn: adopt_model(conn, model, dim))
            self._vectors_ok = True
        done = 0
        if progress is not None:
            progress(0, total)
        for domain in (BLOCKS.key, MESSAGES.key):
            after = 0
            while True:
                items = await self._run(
                    lambda conn, after=after, domain=domain: texts_to_embed(
                        conn, domain, after, batch_size
                    )
                )
                if not items:
                    break
                vectors = await batcher.embed([text[:MAX_EMBED_CHARS] for _, text in items])
                await self._run(
                    lambda conn, d=domain, i=items, v=vectors: store_vectors(conn, d, i, v, model)
                )
                after = items[-1][0]
                done += len(items)
                if progress is not None:
                    progress(min(done, total), max(total, done))
        return done

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
        self,
        records: Sequence[Block | Message],
        vectors: Sequence[F32 | None],
        on_conflict: OnConflict,
    ) -> ImportReport:
        model = self._model
        return await self._run(
            lambda conn: _records.restore(conn, list(records), list(vectors), on_conflict, model)
        )


if TYPE_CHECKING:  # the type checker proves PostgresStore implements the protocol
    _implements: type[MemoryStore] = PostgresStore
