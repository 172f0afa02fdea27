"""Keeping a backend's vectors in step with its texts, for any backend.

:class:`VectorUpkeep` is the embedding half of :class:`~satchel.memory.GatedStore`:
it embeds a text about to be written, re-embeds a block after an append or a replace
(coalesced per block), and re-embeds everything page by page. The backend only stores
and reads vectors (:meth:`~.MemoryBackend.store_vectors`,
:meth:`~.MemoryBackend.texts_to_embed`).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from satchel.embed import Embedder
from satchel.memory._embedding import EmbedBatcher
from satchel.memory._protocol import ProgressCallback
from satchel.memory._transfer import MAX_EMBED_CHARS

if TYPE_CHECKING:
    from satchel.memory._backend import MemoryBackend, TextDomain

__all__ = ["VectorUpkeep"]

logger = logging.getLogger("satchel.memory")

F32 = npt.NDArray[np.float32]


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
        return (await batcher.embed([text[:MAX_EMBED_CHARS]]))[0]

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

    async def reembed(self, progress: ProgressCallback | None, batch_size: int) -> int:
        """See :meth:`MemoryStore.reembed`. Re-embeds everything, and adopts the
        current embedder for a database that held another model's vectors."""
        if self.batcher is None:
            return 0
        batcher = self.batcher
        total = await self.backend.count_texts()
        if not self.backend.vectors_ok:
            await self.backend.adopt_model()
        done = 0
        if progress is not None:
            progress(0, total)
        domains: tuple[TextDomain, ...] = ("blocks", "messages")
        for domain in domains:
            after = 0
            while items := await self.backend.texts_to_embed(domain, after, batch_size):
                vectors = await batcher.embed([text[:MAX_EMBED_CHARS] for _, text in items])
                await self.backend.store_vectors(domain, items, vectors)
                after = items[-1][0]
                done += len(items)
                if progress is not None:
                    progress(min(done, total), max(total, done))
        return done
