"""Keeping a backend's vectors in step with its texts, for any backend.

:class:`VectorUpkeep` is the embedding half of :class:`~satchel.memory.GatedStore`:
it embeds a text about to be written, re-embeds a block after an append or a replace
(coalesced per block), embeds a search's query, and re-embeds everything page by page.
The backend only stores and reads vectors (:meth:`~.MemoryBackend.store_vectors`,
:meth:`~.MemoryBackend.texts_to_embed`).

When the embedder fails (a provider that is down or rate-limits past its retries):

* a search goes on by keywords only, with a warning in its results
  (:class:`~satchel.memory.SearchResults`); it never loses the query. An embedder
  with a ``query_timeout`` (a provider's: :class:`~satchel.embed.OpenAIEmbedder`) is
  not waited for longer than that: a server that hangs costs a search that many
  seconds, not the SDK's timeouts and retries;
* a write is kept without its vector (logged as a warning): what the agent wrote
  matters more than its vector, and BM25 still finds it. A row without a vector is
  its own queue entry: ``reembed(missing_only=True)`` (``satchel memory reembed
  --missing``) embeds exactly those.

A move to another model (:meth:`VectorUpkeep.reembed` on a database of another
model's vectors) resumes after an interruption on a backend that can record it
(:class:`ResumableBackend`, both of satchel's): the database first notes the move,
then forgets the old vectors and takes the new model, and each run embeds only the
texts still without a vector until none is left, when the note is removed. So every
row ends with exactly one vector of the new model, however often the move was cut
short.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import anyio
import anyio.to_thread
import numpy as np
import numpy.typing as npt

from satchel._errors import SatchelUsageError
from satchel.embed import Embedder
from satchel.memory._embedding import EmbedBatcher, as_unit_rows
from satchel.memory._model_change import model_change_message
from satchel.memory._protocol import ProgressCallback
from satchel.memory._transfer import MAX_EMBED_CHARS

if TYPE_CHECKING:
    from satchel.memory._backend import MemoryBackend, TextDomain

__all__ = ["MOVE_KEY", "ResumableBackend", "VectorUpkeep"]

logger = logging.getLogger("satchel.memory")

F32 = npt.NDArray[np.float32]

MOVE_KEY = "reembed_to"
"""The database's meta key noting a move to another model in progress (its id)."""


@runtime_checkable
class ResumableBackend(Protocol):
    """What a backend offers beyond :class:`~satchel.memory.MemoryBackend` so that a
    move to another model resumes (see the module docstring)."""

    @property
    def stored_model(self) -> str | None:
        """The model (``NAME:DIM``) the database's vectors are of, if known."""
        ...

    async def texts_without_vector(
        self, domain: TextDomain, after_pk: int, limit: int
    ) -> list[tuple[int, str]]:
        """The next ``limit`` non-empty ``(pk, text)`` pairs of ``domain`` with ``pk >
        after_pk`` that have no vector."""
        ...

    async def count_without_vector(self) -> int:
        """How many non-empty blocks and messages have no vector."""
        ...

    async def read_meta(self, key: str) -> str | None:
        """A value the database keeps under ``key``, or ``None``."""
        ...

    async def write_meta(self, key: str, value: str | None) -> None:
        """Keep ``value`` under ``key`` (``None``: remove it)."""
        ...


class VectorUpkeep:
    """Embeds for one store (see the module docstring).

    Args:
        backend: Where the vectors live.
        embedder: The model, or ``None`` for no vectors (every method then does
            nothing).
    """

    def __init__(self, backend: MemoryBackend, embedder: Embedder | None) -> None:
        self.backend = backend
        self.batcher = EmbedBatcher(embedder) if embedder is not None else None
        self.model_id = f"{embedder.name}:{embedder.dim}" if embedder is not None else None
        """The embedder's ``NAME:DIM``, or ``None``."""
        self._dirty: set[int] = set()
        self._refreshing: set[int] = set()

    @property
    def active(self) -> EmbedBatcher | None:
        """The batcher while the backend holds this model's vectors, else ``None``."""
        return self.batcher if self.backend.vectors_ok else None

    async def embed_one(self, text: str) -> F32 | None:
        """The vector of ``text`` to store with it, or ``None`` (no vectors, or no
        text)."""
        batcher = self.active
        if batcher is None or not text:
            return None
        try:
            return (await batcher.embed([text[:MAX_EMBED_CHARS]]))[0]
        except Exception as exc:  # the write goes on: see the module docstring
            logger.warning(
                "embedding failed, so this text is stored without its vector (keyword "
                "search still finds it; `satchel memory reembed --missing` adds it): %s",
                exc,
            )
            return None

    @property
    def model_warning(self) -> str | None:
        """Why vector search is off because the database holds another model's vectors,
        or ``None``."""
        if self.model_id is None or self.backend.vectors_ok:
            return None
        stored = self.backend.stored_model if isinstance(self.backend, ResumableBackend) else None
        if stored is None or stored == self.model_id:
            return None
        return model_change_message(stored, self.model_id)

    async def query_vector(self, query: str) -> tuple[F32 | None, str | None]:
        """A search query's vector, or ``None`` with why not when the embedder failed
        (the search then goes on by keywords: see the module docstring)."""
        batcher = self.active
        if batcher is None or not query:
            return None, None
        text = query[:MAX_EMBED_CHARS]
        deadline: object = getattr(batcher.embedder, "query_timeout", None)
        try:
            if not isinstance(deadline, int | float):
                return (await batcher.embed([text]))[0], None
            with anyio.move_on_after(deadline):  # a provider that hangs: do not wait
                raw = await anyio.to_thread.run_sync(
                    batcher.embedder.embed, [text], abandon_on_cancel=True
                )
                return as_unit_rows(raw, batcher.embedder.dim)[0], None
            note = f"the embedder did not answer within {deadline:g} s"
        except Exception as exc:  # the boundary: the search goes on, with a warning
            note = f"the embedder failed ({exc})"
        logger.warning("searching by keywords only: %s", note)
        return None, f"searched by keywords only: {note}"

    async def refresh_block(self, pk: int, text: str) -> None:
        """Embed a block's text after a write that changed it (``text`` is the value
        the write left).

        Coalesced per block: while one call is embedding, later calls only mark the
        block dirty and return, and the running call embeds the newest text once more.
        So a burst of appends costs a few embeddings, not one per append, and the
        vector catches up with the last write.
        """
        batcher = self.active
        if batcher is None:
            return
        self._dirty.add(pk)
        if pk in self._refreshing:
            return
        self._refreshing.add(pk)
        try:
            latest: str | None = text
            while pk in self._dirty:
                self._dirty.discard(pk)
                await self._embed_block_now(batcher, pk, latest)
                latest = None  # a later write changed it: read the newest text
        finally:
            self._refreshing.discard(pk)

    async def _embed_block_now(self, batcher: EmbedBatcher, pk: int, text: str | None) -> None:
        if text is None:
            text = await self.backend.block_text(pk)
        if not text:
            return
        try:
            vectors = await batcher.embed([text[:MAX_EMBED_CHARS]])
        except Exception:  # the write is committed; a missing vector is healed by reembed()
            logger.exception("embedding block %d failed; its vector is missing", pk)
            return
        await self.backend.store_vectors("blocks", [(pk, text)], vectors)

    async def reembed(
        self, progress: ProgressCallback | None, batch_size: int, *, missing_only: bool = False
    ) -> int:
        """See :meth:`MemoryStore.reembed`. Re-embeds everything, or only the texts
        without a vector; adopts the current embedder for a database that held another
        model's vectors, resumably (see the module docstring)."""
        if self.batcher is None:
            return 0
        backend = self.backend
        resumable = backend if isinstance(backend, ResumableBackend) else None
        if resumable is not None:
            moving = await resumable.read_meta(MOVE_KEY)
            if not backend.vectors_ok:
                await resumable.write_meta(MOVE_KEY, self.model_id)  # before the old go
                await backend.adopt_model()
                moving = self.model_id
            if moving is not None and moving == self.model_id:
                missing_only = True  # a move: only what it has not embedded yet
            elif moving is not None:
                await resumable.write_meta(MOVE_KEY, None)  # another model's, abandoned
        elif not backend.vectors_ok:
            await backend.adopt_model()
        if missing_only and resumable is None:
            raise SatchelUsageError(
                f"{type(backend).__name__} cannot list the texts without a vector "
                "(it is no ResumableBackend): re-embed everything instead"
            )
        total = (
            await resumable.count_without_vector()
            if missing_only and resumable is not None
            else await backend.count_texts()
        )
        done = await self._embed_all(progress, batch_size, total, missing_only=missing_only)
        if resumable is not None and missing_only:
            await resumable.write_meta(MOVE_KEY, None)
        return done

    async def _embed_all(
        self,
        progress: ProgressCallback | None,
        batch_size: int,
        total: int,
        *,
        missing_only: bool,
    ) -> int:
        batcher = self.batcher
        assert batcher is not None
        backend = self.backend
        done = 0
        if progress is not None:
            progress(0, total)
        domains: tuple[TextDomain, ...] = ("blocks", "messages")
        for domain in domains:
            after = 0
            while True:
                if missing_only:
                    assert isinstance(backend, ResumableBackend)
                    items = await backend.texts_without_vector(domain, after, batch_size)
                else:
                    items = await backend.texts_to_embed(domain, after, batch_size)
                if not items:
                    break
                vectors = await batcher.embed([text[:MAX_EMBED_CHARS] for _, text in items])
                await backend.store_vectors(domain, items, vectors)
                after = items[-1][0]
                done += len(items)
                if progress is not None:
                    progress(min(done, total), max(total, done))
        return done
