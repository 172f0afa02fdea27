"""Export and import, written once for every backend.

Paging, batching, record checks and embedding are the same whatever the database; a
backend supplies only the four database steps (:meth:`~.MemoryBackend.agents`,
:meth:`~.MemoryBackend.block_page`, :meth:`~.MemoryBackend.message_page`,
:meth:`~.MemoryBackend.restore`), and :class:`~satchel.memory.GatedStore` calls
:func:`export_records` and :func:`import_records` with its backend.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import AsyncGenerator, AsyncIterator, Iterable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from satchel._errors import AlreadyExistsError, CharLimitError, InvalidInputError
from satchel.memory._embedding import EmbedBatcher
from satchel.memory._models import (
    Block,
    ImportReport,
    Message,
    OnConflict,
    check_import_record,
    validate_agent,
)

if TYPE_CHECKING:
    from satchel.memory._backend import MemoryBackend, RestoreBatch

__all__ = [
    "MAX_EMBED_CHARS",
    "add_reports",
    "check_import_limit",
    "conflict_error",
    "export_records",
    "foreign_id_error",
    "import_records",
]

logger = logging.getLogger("satchel.memory")

MAX_EMBED_CHARS = 4_000
"""Texts are embedded from their first this-many characters: the model reads 256
tokens, so there is no need to tokenise more."""

_PAGE = 500
_EMBED_CHUNK = 64

F32 = npt.NDArray[np.float32]


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


def foreign_id_error(record: Block | Message) -> InvalidInputError:
    """The refusal of an import whose ``record`` carries an id that is not free for its
    agent: in every ``on_conflict`` mode, and in words that do not say whether, or
    whose, a record with that id exists (an import file must not take over, nor probe
    for, another agent's records)."""
    kind = type(record).__name__.lower()
    return InvalidInputError(
        f"{kind} {record.id!r} of {record.agent!r}: that id cannot be used for "
        f"{record.agent!r}. Remove the id (a new one is made) or give the record another "
        "one. Nothing was imported.",
        details={"id": record.id, "agent": record.agent},
    )


def check_import_limit(record: Block | Message, position: int, *, hard: bool) -> None:
    """Refuse (``hard``) or log a warning about an imported block whose value is longer
    than its ``char_limit``: the rule a write follows in a store of that
    ``char_limit_mode``, so an import cannot put in memory what no write could.

    Raises:
        CharLimitError: The value is over the limit, and ``hard``; the message and the
            details name the block, its length and the limit.
    """
    if not isinstance(record, Block) or record.char_limit is None:
        return
    chars, limit = record.chars, record.char_limit
    if chars <= limit:
        return
    if not hard:
        logger.warning(
            "imported block %r of %r is over its soft char_limit: %d > %d",
            record.label,
            record.agent,
            chars,
            limit,
        )
        return
    raise CharLimitError(
        f"import record {position} (block {record.label!r} of {record.agent!r}, id "
        f"{record.id!r}) holds {chars} characters, over its char_limit of {limit} by "
        f"{chars - limit}. Raise or remove its char_limit in the file, or import into a "
        "store whose char_limit_mode is 'soft'. Nothing was imported.",
        details={
            "position": position,
            "id": record.id,
            "agent": record.agent,
            "label": record.label,
            "chars": chars,
            "char_limit": limit,
        },
    )


async def export_records(
    backend: MemoryBackend, agent: str | None
) -> AsyncIterator[Block | Message]:
    """See :meth:`MemoryStore.export_records`. Reads in pages of 500; nothing is held
    open between pages."""
    if agent is not None:
        validate_agent(agent)
    key: Any = None
    while True:
        blocks, key = await backend.block_page(agent, key, _PAGE)
        for block in blocks:
            yield block
        if key is None:
            break
    while True:
        messages, key = await backend.message_page(agent, key, _PAGE)
        for message in messages:
            yield message
        if key is None:
            break


async def import_records(
    backend: MemoryBackend,
    batcher: EmbedBatcher | None,
    records: Iterable[Block | Message],
    *,
    on_conflict: OnConflict,
    batch_size: int,
    hard_limit: bool = True,
) -> ImportReport:
    """See :meth:`MemoryStore.import_records`; ``batcher`` embeds the records (``None``:
    store them without vectors); ``hard_limit`` refuses a block over its
    ``char_limit`` (:func:`check_import_limit`)."""
    if on_conflict not in ("error", "skip", "replace"):
        raise InvalidInputError(
            f"on_conflict must be 'error', 'skip' or 'replace', not {on_conflict!r}"
        )
    if batch_size < 1:
        raise InvalidInputError("batch_size must be at least 1")
    batches = _checked_batches(batcher, records, batch_size, hard_limit)
    try:
        return await backend.restore(batches, on_conflict)
    finally:
        await batches.aclose()


async def _checked_batches(
    batcher: EmbedBatcher | None,
    records: Iterable[Block | Message],
    batch_size: int,
    hard_limit: bool,
) -> AsyncGenerator[RestoreBatch]:
    """The records ``batch_size`` at a time, each batch checked in full, then
    embedded."""
    position = 0
    source = iter(records)
    while batch := list(itertools.islice(source, batch_size)):
        checked = [check_import_record(r, position + i) for i, r in enumerate(batch)]
        for i, record in enumerate(checked):
            check_import_limit(record, position + i, hard=hard_limit)
        position += len(checked)
        yield checked, await _embed_records(batcher, checked)


async def _embed_records(
    batcher: EmbedBatcher | None, records: Sequence[Block | Message]
) -> list[F32 | None]:
    """One vector per record (``None`` for empty text or without vectors), embedded
    64 texts at a time in a worker thread."""
    out: list[F32 | None] = [None] * len(records)
    if batcher is None:
        return out
    todo = [
        (i, (r.value if isinstance(r, Block) else r.content)[:MAX_EMBED_CHARS])
        for i, r in enumerate(records)
    ]
    todo = [(i, text) for i, text in todo if text]
    for start in range(0, len(todo), _EMBED_CHUNK):
        chunk = todo[start : start + _EMBED_CHUNK]
        vectors = await batcher.embed([text for _, text in chunk])
        for (i, _), vector in zip(chunk, vectors, strict=True):
            out[i] = vector
    return out
