"""The embedded :class:`SQLiteStore`."""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable, Collection, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal, Self, TypeVar

import anyio.to_thread
import numpy as np
import numpy.typing as npt
import platformdirs

from satchel._errors import VersionConflictError
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
from satchel.memory.sqlite import _blocks, _records
from satchel.memory.sqlite._db import Database, Durability
from satchel.memory.sqlite._messages import (
    BLOCKS,
    MESSAGES,
    insert_message,
    list_messages,
    store_vectors,
    texts_to_embed,
)
from satchel.memory.sqlite._migrations import migrate
from satchel.memory.sqlite._rows import normalise_tags
from satchel.memory.sqlite._search_sql import StoredIndexes
from satchel.memory.sqlite._searcher import SearchRequest, run_search

__all__ = ["SQLiteStore", "default_path"]

logger = logging.getLogger("satchel.memory")

_T = TypeVar("_T")
F32 = npt.NDArray[np.float32]
_ROLES = ("user", "assistant", "system", "tool")


def default_path() -> Path:
    """``<user data dir>/satchel/satchel.db``, e.g. ``~/.local/share/satchel/satchel.db``."""
    return Path(platformdirs.user_data_dir("satchel")) / "satchel.db"


class SQLiteStore(RecordTransfer):
    """The embedded memory store: one SQLite file, WAL, FTS5 BM25 and a vector index.

    Implements :class:`~satchel.memory.MemoryStore`. Safe to share between tasks and
    threads of one process, and between processes on one machine (SQLite's locking).

    Args:
        path: The database file; defaults to :func:`default_path`. ``":memory:"`` is not
            supported (readers need a shared file); use a temporary file.
        embedder: The embedding model: ``"default"`` for satchel's local
            all-MiniLM-L6-v2 (loaded on first use), any :class:`~satchel.embed.Embedder`,
            or ``None`` for BM25-only search.
        consent: Asked when a write needs consent (see
            :mod:`satchel.memory._permissions`); ``None`` makes such writes raise
            :class:`~satchel.ConsentRequiredError`.
        char_limit_mode: ``hard`` refuses a write past a block's ``char_limit``;
            ``soft`` accepts it and logs a warning.
        fusion: How hybrid search combines BM25 and vectors.
        durability: ``normal`` or ``full`` (see :class:`.Database`).
        busy_timeout: Seconds to wait for another process's write lock.

    Example:
        >>> async with SQLiteStore("memory.db", embedder=None) as store:  # doctest: +SKIP
        ...     await store.create_block("ada", "persona", "I am Ada.")
    """

    def __init__(
        self,
        path: str | Path | None = None,
        *,
        embedder: Embedder | Literal["default"] | None = "default",
        consent: ConsentHandler | None = None,
        char_limit_mode: Literal["hard", "soft"] = "hard",
        fusion: Fusion = DEFAULT_FUSION,
        durability: Durability = "normal",
        busy_timeout: float = 10.0,
    ) -> None:
        self.path = Path(path) if path is not None else default_path()
        if embedder == "default":
            embedder = default_embedder()
        self.embedder: Embedder | None = embedder
        self.consent = consent
        self.hard_limit = char_limit_mode == "hard"
        self.fusion = fusion
        self._db = Database(self.path, busy_timeout=busy_timeout, durability=durability)
        try:
            self.applied_migrations = self._db.setup(migrate)
            self._vectors_ok = embedder is not None and self._db.write(self._claim_model)
        except BaseException:
            self._db.close()
            raise
        self._batcher = EmbedBatcher(embedder) if embedder is not None else None
        self._indexes = StoredIndexes(embedder.dim) if embedder is not None else None
        self._dirty: set[int] = set()
        self._refreshing: set[int] = set()

    @classmethod
    async def open(cls, path: str | Path | None = None, **options: Any) -> SQLiteStore:
        """Open a store without blocking the event loop (same arguments as the class)."""
        return await anyio.to_thread.run_sync(lambda: cls(path, **options))

    async def __aenter__(self) -> Self:
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
        await anyio.to_thread.run_sync(self._db.close)

    # --- plumbing ------------------------------------------------------------------

    @property
    def _model_id(self) -> str:
        assert self.embedder is not None
        return f"{self.embedder.name}:{self.embedder.dim}"

    def _claim_model(self, conn: sqlite3.Connection) -> bool:
        row = conn.execute("SELECT value FROM meta WHERE key = 'embedding_model'").fetchone()
        if row is None:
            conn.execute(
                "INSERT INTO meta (key, value) VALUES ('embedding_model', ?)", (self._model_id,)
            )
            return True
        if row[0] == self._model_id:
            return True
        logger.warning(
            "the memory database %s holds vectors of %r, not %r: vector search is off "
            "until reembed() runs",
            self.path,
            row[0],
            self._model_id,
        )
        return False

    async def _read(self, function: Callable[[sqlite3.Connection], _T]) -> _T:
        return await anyio.to_thread.run_sync(self._db.read, function)

    async def _write(self, function: Callable[[sqlite3.Connection], _T]) -> _T:
        return await anyio.to_thread.run_sync(self._db.write, function)

    async def _embed_one(self, text: str) -> F32 | None:
        if self._batcher is None or not self._vectors_ok or not text:
            return None
        return (await self._batcher.embed([text[:MAX_EMBED_CHARS]]))[0]

    async def _refresh_block_vector(self, pk: int) -> None:
        """Embed a block's current text after a write that changed it.

        Coalesced per block: while one call is embedding, later calls only mark the
        block dirty and return, and the running call embeds the newest text once more.
        So a burst of appends costs a few embeddings, not one per append, and the
        vector catches up with the last write.
        """
        if self._batcher is None or not self._vectors_ok:
            return
        self._dirty.add(pk)
        if pk in self._refreshing:
            return
        self._refreshing.add(pk)
        try:
            while pk in self._dirty:
                self._dirty.discard(pk)
                await self._embed_block_now(self._batcher, pk)
        finally:
            self._refreshing.discard(pk)

    async def _embed_block_now(self, batcher: EmbedBatcher, pk: int) -> None:
        items = await self._read(
            lambda conn: [
                (pk, str(row[0]))
                for row in conn.execute("SELECT value FROM blocks WHERE pk = ?", (pk,))
                if row[0]
            ]
        )
        if not items:
            return
        try:
            vectors = await batcher.embed([text[:MAX_EMBED_CHARS] for _, text in items])
        except Exception:  # the write is committed; a missing vector is healed by reembed()
            logger.exception("embedding block %d failed; its vector is missing", pk)
            return
        await self._write(lambda conn: store_vectors(conn, BLOCKS, items, vectors))

    async def _gated(
        self,
        agent: str,
        label: str,
        operation: Operation,
        reason: Callable[[Block], str],
        write: Callable[[sqlite3.Connection, int, Block], _T],
        *,
        share_level: Permission | None = None,
    ) -> tuple[int, _T]:
        """Resolve ``label`` for ``agent``, pass the permission gate, then run ``write``
        in one transaction that first re-checks the level the gate allowed."""
        validate_agent(agent)
        for _ in range(5):
            pk, block = await self._read(lambda conn: _blocks.resolve(conn, agent, label))
            level = await authorize(
                operation,
                block=block,
                agent=agent,
                consent=self.consent,
                reason=reason(block),
                share_level=share_level,
            )

            def run(
                conn: sqlite3.Connection,
                pk: int = pk,
                block: Block = block,
                level: Permission = level,
            ) -> _T:
                _blocks.check_level(conn, pk, agent, level)
                return write(conn, pk, block)

            try:
                return pk, await self._write(run)
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

        def run(conn: sqlite3.Connection) -> Block:
            pk, block = _blocks.insert(
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
            )
            if vector is not None:
                store_vectors(conn, BLOCKS, [(pk, value)], vector[None, :])
            return block

        return await self._write(run)

    async def get_block(self, agent: str, label: str) -> Block:
        """See :meth:`MemoryStore.get_block`."""
        validate_agent(agent)
        _, block = await self._read(lambda conn: _blocks.resolve(conn, agent, label))
        return block

    async def list_blocks(
        self, agent: str, kinds: Collection[BlockKind] | None = None
    ) -> list[Block]:
        """See :meth:`MemoryStore.list_blocks`."""
        validate_agent(agent)
        return await self._read(lambda conn: _blocks.list_visible(conn, agent, kinds))

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

        def write(conn: sqlite3.Connection, pk: int, _: Block) -> Block:
            _, after = _blocks.set_text(
                conn,
                pk,
                value,
                expected_version=expected_version,
                description=description,
                hard_limit=self.hard_limit,
            )
            if vector is not None:
                store_vectors(conn, BLOCKS, [(pk, value)], vector[None, :])
            return after

        _, block = await self._gated(
            agent,
            label,
            Operation.OVERWRITE,
            lambda b: (
                f"overwrite block {b.label!r} ({b.chars} characters) with {len(value)} characters"
            ),
            write,
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
            lambda conn, pk, _: _blocks.append(
                conn, pk, text, separator, hard_limit=self.hard_limit
            ),
        )
        await self._refresh_block_vector(pk)
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
            lambda conn, pk, _: _blocks.replace(
                conn,
                pk,
                old,
                new,
                expected_version=expected_version,
                hard_limit=self.hard_limit,
            ),
        )
        await self._refresh_block_vector(pk)
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
            lambda conn, pk, _: _blocks.delete(conn, pk, expected_version=expected_version),
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
        _, blocks = await self._gated(
            agent,
            label,
            Operation.KIND_CHANGE,
            lambda b: f"move block {b.label!r} from {b.kind.value} to {kind.value} memory",
            lambda conn, pk, _: _blocks.set_kinds(conn, [(pk, kind, expected_version)]),
        )
        return blocks[0]

    async def swap_blocks(
        self, agent: str, archive_label: str, load_label: str
    ) -> tuple[Block, Block]:
        """See :meth:`MemoryStore.swap_blocks`."""
        validate_agent(agent)
        for _ in range(5):
            (pk_a, block_a), (pk_l, block_l) = await self._read(
                lambda conn: (
                    _blocks.resolve(conn, agent, archive_label),
                    _blocks.resolve(conn, agent, load_label),
                )
            )
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

            def run(
                conn: sqlite3.Connection,
                a: int = pk_a,
                b: int = pk_l,
                levels: list[Permission] = levels,
            ) -> list[Block]:
                _blocks.check_level(conn, a, agent, levels[0])
                _blocks.check_level(conn, b, agent, levels[1])
                return _blocks.set_kinds(
                    conn, [(a, BlockKind.ARCHIVAL, None), (b, BlockKind.WORKING, None)]
                )

            try:
                archived, loaded = await self._write(run)
            except _blocks.LevelChanged:
                continue
            return archived, loaded
        raise VersionConflictError("the permissions of the blocks kept changing; try again")

    async def share_block(
        self, agent: str, label: str, recipient: str, permission: Permission
    ) -> Block:
        """See :meth:`MemoryStore.share_block`."""
        validate_agent(recipient)
        permission = Permission(permission)
        _, block = await self._gated(
            agent,
            label,
            Operation.SHARE,
            lambda b: f"share block {b.label!r} with {recipient!r} at {permission.value}",
            lambda conn, pk, _: _blocks.set_share(conn, pk, recipient, permission),
            share_level=permission,
        )
        return block

    async def unshare_block(self, agent: str, label: str, recipient: str) -> Block:
        """See :meth:`MemoryStore.unshare_block`."""
        validate_agent(recipient)
        _, block = await self._gated(
            agent,
            label,
            Operation.SHARE,
            lambda b: f"stop sharing block {b.label!r} with {recipient!r}",
            lambda conn, pk, _: _blocks.set_share(conn, pk, recipient, None),
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
        clean_tags = normalise_tags(tags)
        moment = created_at or utc_now()
        vector = await self._embed_one(content)
        return await self._write(
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
        return await self._read(
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
            plan=plan_search(Domain(domains), filters),
            filters=filters,
            limit=limit,
            mode=mode,
            fusion=self.fusion,
        )
        indexes = self._indexes if self._vectors_ok else None
        return await self._read(lambda conn: run_search(conn, indexes, request))

    # --- maintenance ---------------------------------------------------------------

    async def reembed(
        self, *, progress: ProgressCallback | None = None, batch_size: int = 64
    ) -> int:
        """See :meth:`MemoryStore.reembed`. Re-embeds everything, and adopts the current
        embedder for a database that held another model's vectors."""
        if self._batcher is None:
            return 0
        batcher = self._batcher

        def count(conn: sqlite3.Connection) -> int:
            row = conn.execute(
                "SELECT (SELECT count(*) FROM blocks WHERE value != '') + "
                "(SELECT count(*) FROM messages WHERE content != '')"
            ).fetchone()
            return int(row[0])

        total = await self._read(count)
        if not self._vectors_ok:

            def adopt(conn: sqlite3.Connection) -> None:
                conn.execute("DELETE FROM embeddings")
                conn.execute(
                    "INSERT OR REPLACE INTO meta (key, value) VALUES ('embedding_model', ?)",
                    (self._model_id,),
                )

            await self._write(adopt)
            self._vectors_ok = True
        done = 0
        if progress is not None:
            progress(0, total)
        for domain in (BLOCKS, MESSAGES):
            after = 0
            while True:
                items = await self._read(
                    lambda conn, after=after, domain=domain: texts_to_embed(
                        conn, domain, after, batch_size, missing_only=False
                    )
                )
                if not items:
                    break
                vectors = await batcher.embed([text[:MAX_EMBED_CHARS] for _, text in items])
                await self._write(
                    lambda conn, d=domain, i=items, v=vectors: store_vectors(conn, d, i, v)
                )
                after = items[-1][0]
                done += len(items)
                if progress is not None:
                    progress(min(done, total), max(total, done))
        return done

    # --- export and import: the database steps (RecordTransfer does the rest) -----

    async def _agents(self) -> list[str]:
        return await self._read(_records.list_agents)

    async def _block_page(
        self, agent: str | None, after: Any, limit: int
    ) -> tuple[list[Block], Any]:
        return await self._read(lambda conn: _records.export_blocks(conn, agent, after, limit))

    async def _message_page(
        self, agent: str | None, after: Any, limit: int
    ) -> tuple[list[Message], Any]:
        return await self._read(lambda conn: _records.export_messages(conn, agent, after, limit))

    async def _restore(
        self,
        records: Sequence[Block | Message],
        vectors: Sequence[F32 | None],
        on_conflict: OnConflict,
    ) -> ImportReport:
        return await self._write(
            lambda conn: _records.restore(conn, list(records), list(vectors), on_conflict)
        )


if TYPE_CHECKING:  # the type checker proves SQLiteStore implements the protocol
    _implements: type[MemoryStore] = SQLiteStore
