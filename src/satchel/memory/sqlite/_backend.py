"""The SQLite :class:`SQLiteBackend`: the database steps of the embedded store.

It connects, migrates, and runs each step in a worker thread, reads on a pooled reader
and writes in one transaction on the writer (:mod:`._runner`). A write to a block
re-checks the level the permission gate allowed first thing in its transaction
(:meth:`~satchel.memory.sqlite._backend_blocks.BlockSteps._checked`). The gate itself,
consent and embedding are :class:`~satchel.memory.GatedStore`'s.

The backend is composed, not stacked: it holds a :class:`~._runner.Runner` (its
:meth:`read` and :meth:`write` over the dialect's SQL modules) and two parts sharing it,
:class:`~._backend_blocks.BlockSteps` (the block steps) and
:class:`~._backend_agents.AgentSteps` (agents and messages), to which the
:class:`~satchel.memory.MemoryBackend` methods they own delegate; this module keeps
opening and closing, the embedding model, search, vectors, export and import.
"""

from __future__ import annotations

import logging
import sqlite3
import uuid
from collections.abc import AsyncIterator, Callable, Collection, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec, TypeVar

import anyio.from_thread
import anyio.to_thread
import numpy as np
import numpy.typing as npt

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
from satchel.memory.sqlite import _records
from satchel.memory.sqlite._backend_agents import AgentSteps
from satchel.memory.sqlite._backend_blocks import BlockSteps
from satchel.memory.sqlite._db import Database, Durability
from satchel.memory.sqlite._indexes import StoredIndexes, index_folder
from satchel.memory.sqlite._messages import BLOCKS, MESSAGES, store_vectors, texts_to_embed
from satchel.memory.sqlite._migrations import migrate
from satchel.memory.sqlite._runner import Runner
from satchel.memory.sqlite._searcher import run_search

__all__ = ["SQLiteBackend"]

logger = logging.getLogger("satchel.memory")

F32 = npt.NDArray[np.float32]
_T = TypeVar("_T")
_P = ParamSpec("_P")
_DOMAINS: dict[TextDomain, int] = {"blocks": BLOCKS, "messages": MESSAGES}


class SQLiteBackend:
    """The database steps of the embedded memory store: one SQLite file, WAL, FTS5
    BM25 and a vector index. Implements :class:`~satchel.memory.MemoryBackend`; wrapped
    by :class:`~satchel.memory.SQLiteStore`.

    The file is opened and migrated by the constructor.

    Args:
        path: The database file. ``":memory:"`` is not supported (readers need a
            shared file); use a temporary file.
        durability: ``normal`` or ``full`` (see :class:`.Database`).
        busy_timeout: Seconds to wait for another process's write lock.
    """

    def __init__(
        self, path: Path, *, durability: Durability = "normal", busy_timeout: float = 10.0
    ) -> None:
        self.path = path
        self._db = Database(self.path, busy_timeout=busy_timeout, durability=durability)
        self.runner = Runner(self._db)
        """How every step runs: on a pooled reader, or in one write transaction."""
        self.blocks = BlockSteps(self.runner)
        """The block steps."""
        self.agent_steps = AgentSteps(self.runner)
        """The agent and message steps."""
        self._model: str | None = None
        self._indexes: StoredIndexes | None = None
        self.vectors_ok = False
        self.stored_model: str | None = None
        """The embedding model (``NAME:DIM``) the file's vectors are of, once opened
        with an embedder."""
        try:
            self.applied_migrations = self._db.setup(migrate)
        except BaseException:
            self._db.close()
            raise

    def use_model(self, model: str | None, dim: int | None) -> None:
        """Claim the file for ``model`` (see :meth:`MemoryBackend.use_model`)."""
        self._model = model
        if model is None or dim is None:
            return
        try:
            self.vectors_ok, database_id = self._db.write(self._claim_model)
        except BaseException:
            self._db.close()
            raise
        self._indexes = StoredIndexes(dim, index_folder(self.path), database_id)

    async def save_vector_index(self) -> None:
        """Save the vector index beside the database now, if it has unsaved changes
        (it is also saved while searching, after many changes, and on :meth:`close`)."""
        if self._indexes is not None:
            await anyio.to_thread.run_sync(self._indexes.save)

    async def close(self) -> None:
        """Save the vector index and close every connection. Idempotent."""
        await self.save_vector_index()
        await anyio.to_thread.run_sync(self._db.close)

    def close_now(self) -> None:
        """Close every connection from this thread (for a constructor that failed)."""
        self._db.close()

    # --- running steps ----------------------------------------------------------

    async def read(
        self,
        function: Callable[Concatenate[sqlite3.Connection, _P], _T],
        *args: _P.args,
        **kwargs: _P.kwargs,
    ) -> _T:
        """Run ``function(conn, *args, **kwargs)``, a step of this dialect's SQL modules,
        in one read transaction on a pooled reader."""
        return await self.runner.read(function, *args, **kwargs)

    async def write(
        self,
        function: Callable[Concatenate[sqlite3.Connection, _P], _T],
        *args: _P.args,
        **kwargs: _P.kwargs,
    ) -> _T:
        """Run ``function(conn, *args, **kwargs)``, a step of this dialect's SQL modules,
        in one write transaction on the writer."""
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

    # --- the embedding model ------------------------------------------------------

    def _claim_model(self, conn: sqlite3.Connection) -> tuple[bool, str]:
        """Whether the file's vectors are this model's, and the database's random id
        (which ties the saved vector index to this file). Also guards this process's
        writer: a vector it stores while the file holds another model's (another
        process re-embedded it meanwhile) is dropped in the same statement."""
        assert self._model is not None
        conn.execute(
            "INSERT OR IGNORE INTO meta (key, value) VALUES ('vector_index_id', ?)",
            (uuid.uuid4().hex,),
        )
        database_id = str(
            conn.execute("SELECT value FROM meta WHERE key = 'vector_index_id'").fetchone()[0]
        )
        _guard_writer(conn, self._model)
        row = conn.execute("SELECT value FROM meta WHERE key = 'embedding_model'").fetchone()
        if row is None:
            conn.execute(
                "INSERT INTO meta (key, value) VALUES ('embedding_model', ?)", (self._model,)
            )
            self.stored_model = self._model
            return True, database_id
        self.stored_model = str(row[0])
        if row[0] == self._model:
            return True, database_id
        logger.warning("%s: %s", self.path, model_change_message(str(row[0]), self._model))
        return False, database_id

    def _check_model(self, conn: sqlite3.Connection) -> bool:
        """Whether the file still holds this model's vectors (read in the search's
        snapshot); if another process moved it to another model, vector search stops
        here too."""
        row = conn.execute("SELECT value FROM meta WHERE key = 'embedding_model'").fetchone()
        stored = None if row is None else str(row[0])
        if stored == self._model:
            return True
        if self.vectors_ok and stored is not None and self._model is not None:
            logger.warning("%s: %s", self.path, model_change_message(stored, self._model))
        self.stored_model, self.vectors_ok = stored, False
        return False

    # --- search and vectors: the database steps -----------------------------------

    async def search(self, request: SearchRequest) -> list[SearchHit]:
        indexes = self._indexes if self.vectors_ok else None

        def search(conn: sqlite3.Connection) -> list[SearchHit]:
            usable = indexes if indexes is not None and self._check_model(conn) else None
            return run_search(conn, usable, request)

        return await self.runner.read(search)

    async def block_text(self, pk: int) -> str:
        row = await self.runner.read(
            lambda conn: conn.execute("SELECT value FROM blocks WHERE pk = ?", (pk,)).fetchone()
        )
        return str(row[0]) if row is not None and row[0] else ""

    async def store_vectors(
        self, domain: TextDomain, items: Sequence[tuple[int, str]], vectors: F32
    ) -> None:
        await self.runner.write(lambda conn: store_vectors(conn, _DOMAINS[domain], items, vectors))

    async def count_texts(self) -> int:
        def count(conn: sqlite3.Connection) -> int:
            row = conn.execute(
                "SELECT (SELECT count(*) FROM blocks WHERE value != '') + "
                "(SELECT count(*) FROM messages WHERE content != '')"
            ).fetchone()
            return int(row[0])

        return await self.runner.read(count)

    async def adopt_model(self) -> None:
        assert self._model is not None

        def adopt(conn: sqlite3.Connection) -> None:
            conn.execute("DELETE FROM embeddings")
            conn.execute(
                "INSERT OR REPLACE INTO meta (key, value) VALUES ('embedding_model', ?)",
                (self._model,),
            )

        await self.runner.write(adopt)
        self.vectors_ok = True
        self.stored_model = self._model

    async def texts_without_vector(
        self, domain: TextDomain, after_pk: int, limit: int
    ) -> list[tuple[int, str]]:
        """The next ``limit`` non-empty ``(pk, text)`` pairs of ``domain`` with ``pk >
        after_pk`` that have no vector."""
        return await self.runner.read(
            lambda conn: texts_to_embed(conn, _DOMAINS[domain], after_pk, limit, missing_only=True)
        )

    async def count_without_vector(self) -> int:
        """How many non-empty blocks and messages have no vector."""

        def count(conn: sqlite3.Connection) -> int:
            row = conn.execute(
                "SELECT (SELECT count(*) FROM blocks AS t WHERE t.value != '' AND NOT EXISTS "
                f"(SELECT 1 FROM embeddings AS e WHERE e.domain = {BLOCKS} AND e.item = t.pk)) "
                "+ (SELECT count(*) FROM messages AS t WHERE t.content != '' AND NOT EXISTS "
                f"(SELECT 1 FROM embeddings AS e WHERE e.domain = {MESSAGES} AND e.item = t.pk))"
            ).fetchone()
            return int(row[0])

        return await self.runner.read(count)

    async def read_meta(self, key: str) -> str | None:
        """The value of ``key`` in the file's ``meta`` table, or ``None``."""
        row = await self.runner.read(
            lambda conn: conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        )
        return None if row is None else str(row[0])

    async def write_meta(self, key: str, value: str | None) -> None:
        """Set ``key`` in the ``meta`` table (``None``: remove it)."""

        def write(conn: sqlite3.Connection) -> None:
            if value is None:
                conn.execute("DELETE FROM meta WHERE key = ?", (key,))
            else:
                conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))

        await self.runner.write(write)

    async def texts_to_embed(
        self, domain: TextDomain, after_pk: int, limit: int
    ) -> list[tuple[int, str]]:
        return await self.runner.read(
            lambda conn: texts_to_embed(conn, _DOMAINS[domain], after_pk, limit, missing_only=False)
        )

    # --- export and import: the database steps (GatedStore does the rest) ---------

    async def agents(self) -> list[str]:
        return await self.runner.read(_records.list_agents)

    async def block_page(
        self, agent: str | None, after: Any, limit: int
    ) -> tuple[list[Block], Any]:
        return await self.runner.read(
            lambda conn: _records.export_blocks(conn, agent, after, limit)
        )

    async def message_page(
        self, agent: str | None, after: Any, limit: int
    ) -> tuple[list[Message], Any]:
        return await self.runner.read(
            lambda conn: _records.export_messages(conn, agent, after, limit)
        )

    async def restore(
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

        return await self.runner.write(run)


if TYPE_CHECKING:  # the type checker proves SQLiteBackend implements the protocol
    _implements: type[MemoryBackend] = SQLiteBackend


def _guard_writer(conn: sqlite3.Connection, model: str) -> None:
    """On the writer ``conn``: drop, in the statement that stored it, any vector this
    process stores while the file's model is not ``model`` (a TEMP trigger: it lives on
    this connection only and knows which model the process embeds with)."""
    conn.execute("CREATE TEMP TABLE IF NOT EXISTS satchel_writer_model (model TEXT NOT NULL)")
    conn.execute("DELETE FROM temp.satchel_writer_model")
    conn.execute("INSERT INTO temp.satchel_writer_model (model) VALUES (?)", (model,))
    conn.execute(
        "CREATE TEMP TRIGGER IF NOT EXISTS satchel_vectors_of_model "
        "AFTER INSERT ON main.embeddings WHEN NOT EXISTS (SELECT 1 FROM meta "
        "WHERE key = 'embedding_model' AND value = (SELECT model FROM satchel_writer_model)) "
        "BEGIN DELETE FROM embeddings WHERE seq = new.seq; END"
    )
