"""Export and import, written once for every backend.

Paging, batching, record checks and embedding are the same whatever the database; a
backend supplies only the four database steps (:meth:`RecordTransfer._agents`,
:meth:`~RecordTransfer._block_page`, :meth:`~RecordTransfer._message_page`,
:meth:`~RecordTransfer._restore`).
"""

from __future__ import annotations

import itertools
from abc import ABC, abstractmethod
from collections.abc import AsyncGenerator, AsyncIterator, Iterable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from satchel._errors import AlreadyExistsError, InvalidInputError
from satchel.memory._embedding import EmbedBatcher
from satchel.memory._models import (
    Block,
    ImportReport,
    Message,
    OnConflict,
    check_import_record,
    validate_agent,
)

__all__ = ["MAX_EMBED_CHARS", "RecordTransfer", "RestoreBatch", "add_reports", "conflict_error"]

MAX_EMBED_CHARS = 4_000
"""Texts are embedded from their first this-many characters: the model reads 256
tokens, so there is no need to tokenise more."""

_PAGE = 500
_EMBED_CHUNK = 64

F32 = npt.NDArray[np.float32]

RestoreBatch = tuple[Sequence[Block | Message], Sequence[F32 | None]]
"""Checked records and their vectors (``None`` for no vector), written together."""


def add_reports(first: ImportReport, second: ImportReport) -> ImportReport:
    """The counts of two :class:`ImportReport` added up."""
    return ImportReport(
        blocks=first.blocks + second.blocks,
        messages=first.messages + second.messages,
        skipped=first.skipped + second.skipped,
    )


def conflict_error(record: Block | Message) -> AlreadyExistsError:
    """The refusal of an import whose ``record`` the store holds already (by id, or for
    a block by owner and label), with ``on_conflict="error"``."""
    also = f" or a block {record.label!r} of {record.agent!r}" if isinstance(record, Block) else ""
    return AlreadyExistsError(
        f"the store already holds {type(record).__name__.lower()} {record.id!r}{also}; "
        "import with on_conflict='skip' or 'replace'. Nothing was imported.",
        details={"id": record.id, "agent": record.agent},
    )


class RecordTransfer(ABC):
    """The backend-neutral half of :meth:`~satchel.memory.MemoryStore.export_records`,
    :meth:`~satchel.memory.MemoryStore.import_records` and
    :meth:`~satchel.memory.MemoryStore.list_agents`."""

    _batcher: EmbedBatcher | None
    _vectors_ok: bool

    @abstractmethod
    async def _agents(self) -> list[str]:
        """Every agent that owns a block or a message, sorted."""

    @abstractmethod
    async def _block_page(
        self, agent: str | None, after: Any, limit: int
    ) -> tuple[list[Block], Any]:
        """Up to ``limit`` blocks after the key ``after``, and the next key (``None`` at
        the end)."""

    @abstractmethod
    async def _message_page(
        self, agent: str | None, after: Any, limit: int
    ) -> tuple[list[Message], Any]:
        """Up to ``limit`` messages after the key ``after``, and the next key."""

    @abstractmethod
    async def _restore(
        self, batches: AsyncIterator[RestoreBatch], on_conflict: OnConflict
    ) -> ImportReport:
        """Write every batch ``batches`` yields, in one transaction: all or nothing.
        The iterator checks and embeds the next batch when asked, so only one batch is
        held at a time."""

    async def list_agents(self) -> list[str]:
        """See :meth:`MemoryStore.list_agents`."""
        return await self._agents()

    async def export_records(self, agent: str | None = None) -> AsyncIterator[Block | Message]:
        """See :meth:`MemoryStore.export_records`. Reads in pages of 500; nothing is held
        open between pages."""
        if agent is not None:
            validate_agent(agent)
        key: Any = None
        while True:
            blocks, key = await self._block_page(agent, key, _PAGE)
            for block in blocks:
                yield block
            if key is None:
                break
        while True:
            messages, key = await self._message_page(agent, key, _PAGE)
            for message in messages:
                yield message
            if key is None:
                break

    async def import_records(
        self,
        records: Iterable[Block | Message],
        *,
        on_conflict: OnConflict = "error",
        batch_size: int = 500,
    ) -> ImportReport:
        """See :meth:`MemoryStore.import_records` (no permission gate: an operator's
        restore; the records' own shares are checked against the gate's rule)."""
        if on_conflict not in ("error", "skip", "replace"):
            raise InvalidInputError(
                f"on_conflict must be 'error', 'skip' or 'replace', not {on_conflict!r}"
            )
        if batch_size < 1:
            raise InvalidInputError("batch_size must be at least 1")
        batches = self._checked_batches(records, batch_size)
        try:
            return await self._restore(batches, on_conflict)
        finally:
            await batches.aclose()

    async def _checked_batches(
        self, records: Iterable[Block | Message], batch_size: int
    ) -> AsyncGenerator[RestoreBatch]:
        """The records ``batch_size`` at a time, each batch checked in full, then
        embedded."""
        position = 0
        source = iter(records)
        while batch := list(itertools.islice(source, batch_size)):
            checked = [check_import_record(r, position + i) for i, r in enumerate(batch)]
            position += len(checked)
            yield checked, await self._embed_records(checked)

    async def _embed_records(self, records: Sequence[Block | Message]) -> list[F32 | None]:
        """One vector per record (``None`` for empty text or without vectors), embedded
        64 texts at a time in a worker thread."""
        out: list[F32 | None] = [None] * len(records)
        if self._batcher is None or not self._vectors_ok:
            return out
        todo = [
            (i, (r.value if isinstance(r, Block) else r.content)[:MAX_EMBED_CHARS])
            for i, r in enumerate(records)
        ]
        todo = [(i, text) for i, text in todo if text]
        for start in range(0, len(todo), _EMBED_CHUNK):
            chunk = todo[start : start + _EMBED_CHUNK]
            vectors = await self._batcher.embed([text for _, text in chunk])
            for (i, _), vector in zip(chunk, vectors, strict=True):
                out[i] = vector
        return out
