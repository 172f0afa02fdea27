"""The embedded :class:`SQLiteStore`.

Everything but the database steps is in :class:`~satchel.memory._store_base.StoreBase`;
this module connects, migrates, and runs each step in a worker thread, reads on a
pooled reader and writes in one transaction on the writer. A write to a block re-checks
the level the permission gate allowed first thing in its transaction
(:meth:`SQLiteStore._checked`).
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import AsyncIterator, Callable, Collection, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar

import anyio.from_thread
import anyio.to_thread
import numpy as np
import numpy.typing as npt
import platformdirs

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
from satchel.memory._permissions import ConsentHandler
from satchel.memory._protocol import MemoryStore
from satchel.memory._search import SearchRequest
from satchel.memory._store_base import NewBlock, NewMessage, StoreBase, TextDomain
from satchel.memory._transfer import RestoreBatch, add_reports
from satchel.memory.sqlite import _agents, _blocks, _records
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
from satchel.memory.sqlite._search_sql import StoredIndexes
from satchel.memory.sqlite._searcher import run_search

__all__ = ["SQLiteStore", "default_path"]

logger = logging.getLogger("satchel.memory")

_T = TypeVar("_T")
F32 = npt.NDArray[np.float32]
_DOMAINS: dict[TextDomain, int] = {"blocks": BLOCKS, "messages": MESSAGES}


def default_path() -> Path:
    """``<user data dir>/satchel/satchel.db``, e.g. ``~/.local/share/satchel/satchel.db``."""
    return Path(platformdirs.user_data_dir("satchel")) / "satchel.db"


class SQLiteStore(StoreBase):
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
        super().__init__(
            embedder=embedder, consent=consent, char_limit_mode=char_limit_mode, fusion=fusion
        )
        self.path = Path(path) if path is not None else default_path()
        self._db = Database(self.path, busy_timeout=busy_timeout, durability=durability)
        try:
            self.applied_migrations = self._db.setup(migrate)
            self._vectors_ok = self.embedder is not None and self._db.write(self._claim_model)
        except BaseException:
            self._db.close()
            raise
        self._indexes = StoredIndexes(self.embedder.dim) if self.embedder is not None else None

    @classmethod
    async def open(cls, path: str | Path | None = None, **options: Any) -> SQLiteStore:
        """Open a store without blocking the event loop (same arguments as the class)."""
        return await anyio.to_thread.run_sync(lambda: cls(path, **options))

    async def close(self) -> None:
        """Close every connection. Idempotent."""
        await anyio.to_thread.run_sync(self._db.close)

    # --- plumbing ------------------------------------------------------------------

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

    async def _checked(
        self,
        agent: str,
        pk: int,
        level: Permission,
        write: Callable[[sqlite3.Connection], _T],
    ) -> _T:
        """Run ``write`` in one transaction that first re-checks the level the gate
        allowed."""

        def run(conn: sqlite3.Connection) -> _T:
            _blocks.check_level(conn, pk, agent, level)
            return write(conn)

        return await self._write(run)

    # --- blocks: the database steps -------------------------------------------------

    async def _resolve(self, agent: str, labels: Sequence[str]) -> list[tuple[int, Block]]:
        return await self._read(
            lambda conn: [_blocks.resolve(conn, agent, label) for label in labels]
        )

    async def _list_visible(self, agent: str, kinds: Collection[BlockKind] | None) -> list[Block]:
        return await self._read(lambda conn: _blocks.list_visible(conn, agent, kinds))

    async def _insert_block(self, new: NewBlock, vector: F32 | None) -> Block:
        def run(conn: sqlite3.Connection) -> Block:
            pk, block = _blocks.insert(conn, **new)
            if vector is not None:
                store_vectors(conn, BLOCKS, [(pk, new["value"])], vector[None, :])
            return block

        return await self._write(run)

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
        def write(conn: sqlite3.Connection) -> Block:
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

        return await self._checked(agent, pk, level, write)

    async def _append(
        self, agent: str, pk: int, level: Permission, text: str, separator: str
    ) -> Block:
        return await self._checked(
            agent,
            pk,
            level,
            lambda conn: _blocks.append(conn, pk, text, separator, hard_limit=self.hard_limit),
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
        return await self._checked(
            agent,
            pk,
            level,
            lambda conn: _blocks.replace(
                conn,
                pk,
                old,
                new,
                expected_version=expected_version,
                hard_limit=self.hard_limit,
            ),
        )

    async def _delete(
        self, agent: str, pk: int, level: Permission, *, expected_version: int | None
    ) -> Block:
        return await self._checked(
            agent,
            pk,
            level,
            lambda conn: _blocks.delete(conn, pk, expected_version=expected_version),
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
        blocks = await self._checked(
            agent,
            pk,
            level,
            lambda conn: _blocks.set_kinds(conn, [(pk, kind, expected_version)]),
        )
        return blocks[0]

    async def _swap(
        self,
        agent: str,
        archive: tuple[int, Permission],
        load: tuple[int, Permission],
    ) -> tuple[Block, Block]:
        (a, level_a), (b, level_b) = archive, load

        def run(conn: sqlite3.Connection) -> tuple[Block, Block]:
            _blocks.check_level(conn, a, agent, level_a)
            _blocks.check_level(conn, b, agent, level_b)
            archived, loaded = _blocks.set_kinds(
                conn, [(a, BlockKind.ARCHIVAL, None), (b, BlockKind.WORKING, None)]
            )
            return archived, loaded

        return await self._write(run)

    async def _set_share(
        self,
        agent: str,
        pk: int,
        level: Permission,
        recipient: str,
        permission: Permission | None,
    ) -> Block:
        return await self._checked(
            agent,
            pk,
            level,
            lambda conn: _blocks.set_share(conn, pk, recipient, permission),
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
        return await self._write(
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
        return await self._write(lambda conn: _agents.initialise(conn, agent, template, blocks))

    async def _is_set_up(self, agent: str) -> bool:
        return await self._read(lambda conn: _agents.is_set_up(conn, agent))

    async def _agent_summaries(self, agent: str | None) -> list[AgentSummary]:
        return await self._read(lambda conn: _agents.summaries(conn, agent))

    # --- messages and search: the database steps ------------------------------------

    async def _insert_message(self, new: NewMessage, vector: F32 | None) -> Message:
        return await self._write(lambda conn: insert_message(conn, **new, vector=vector))

    async def _list_messages(
        self,
        agent: str,
        *,
        conversation_id: str | None,
        limit: int,
        before: datetime | None,
    ) -> list[Message]:
        return await self._read(
            lambda conn: list_messages(
                conn, agent, conversation_id=conversation_id, limit=limit, before=before
            )
        )

    async def _search(self, request: SearchRequest) -> list[SearchHit]:
        indexes = self._indexes if self._vectors_ok else None
        return await self._read(lambda conn: run_search(conn, indexes, request))

    # --- vectors: the database steps ------------------------------------------------

    async def _block_text(self, pk: int) -> str:
        row = await self._read(
            lambda conn: conn.execute("SELECT value FROM blocks WHERE pk = ?", (pk,)).fetchone()
        )
        return str(row[0]) if row is not None and row[0] else ""

    async def _store_vectors(
        self, domain: TextDomain, items: Sequence[tuple[int, str]], vectors: F32
    ) -> None:
        await self._write(lambda conn: store_vectors(conn, _DOMAINS[domain], items, vectors))

    async def _count_texts(self) -> int:
        def count(conn: sqlite3.Connection) -> int:
            row = conn.execute(
                "SELECT (SELECT count(*) FROM blocks WHERE value != '') + "
                "(SELECT count(*) FROM messages WHERE content != '')"
            ).fetchone()
            return int(row[0])

        return await self._read(count)

    async def _adopt_model(self) -> None:
        def adopt(conn: sqlite3.Connection) -> None:
            conn.execute("DELETE FROM embeddings")
            conn.execute(
                "INSERT OR REPLACE INTO meta (key, value) VALUES ('embedding_model', ?)",
                (self._model_id,),
            )

        await self._write(adopt)

    async def _texts_to_embed(
        self, domain: TextDomain, after_pk: int, limit: int
    ) -> list[tuple[int, str]]:
        return await self._read(
            lambda conn: texts_to_embed(conn, _DOMAINS[domain], after_pk, limit, missing_only=False)
        )

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
        self, batches: AsyncIterator[RestoreBatch], on_conflict: OnConflict
    ) -> ImportReport:
        async def next_batch() -> RestoreBatch | None:
            return await anext(batches, None)

        def run(conn: sqlite3.Connection) -> ImportReport:
            # One write transaction for the whole import; each next batch is checked
            # and embedded on the event loop while this thread waits.
            report = ImportReport()
            while (batch := anyio.from_thread.run(next_batch)) is not None:
                records, vectors = batch
                done = _records.restore(conn, list(records), list(vectors), on_conflict)
                report = add_reports(report, done)
            return report

        return await self._write(run)


if TYPE_CHECKING:  # the type checker proves SQLiteStore implements the protocol
    _implements: type[MemoryStore] = SQLiteStore
