"""Embedding text off the event loop, batched across concurrent callers.

:class:`EmbedBatcher` lets many tasks ask for embeddings at once and turns their
requests into few :meth:`Embedder.embed` calls: the first caller to get the lock embeds
every request queued so far in one worker-thread call (up to ``max_batch`` texts), and
the others find their vectors ready when they get the lock in turn. There is no
background task to start or stop.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import anyio
import anyio.to_thread
import numpy as np
import numpy.typing as npt

from satchel._errors import EmbeddingError
from satchel.embed import Embedder

__all__ = ["EmbedBatcher", "as_unit_rows"]

F32 = npt.NDArray[np.float32]


def as_unit_rows(vectors: npt.ArrayLike, dim: int) -> F32:
    """Check an embedder's output and return it as unit-length float32 rows.

    Raises:
        EmbeddingError: The shape is wrong.
    """
    array = np.asarray(vectors, dtype=np.float32)
    if array.ndim != 2 or array.shape[1] != dim:
        raise EmbeddingError(f"embedder returned shape {array.shape}, expected (n, {dim})")
    norms = np.linalg.norm(array, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return np.ascontiguousarray(array / norms, dtype=np.float32)


@dataclass(kw_only=True)
class _Request:
    texts: Sequence[str]
    result: F32 | None = None
    error: BaseException | None = None
    done: bool = field(default=False)


class EmbedBatcher:
    """Batches concurrent embedding requests into few calls in a worker thread.

    Args:
        embedder: The model.
        max_batch: At most this many texts per :meth:`Embedder.embed` call.
    """

    def __init__(self, embedder: Embedder, *, max_batch: int = 64) -> None:
        self.embedder = embedder
        self.max_batch = max_batch
        self._queue: list[_Request] = []
        self._lock = anyio.Lock()

    async def embed(self, texts: Sequence[str]) -> F32:
        """Embed ``texts``; returns unit float32 rows, one per text.

        Raises:
            Exception: Whatever the embedder raised for the batch holding these texts.
        """
        if not texts:
            return np.zeros((0, self.embedder.dim), dtype=np.float32)
        request = _Request(texts=texts)
        self._queue.append(request)
        while not request.done:
            async with self._lock:
                if request.done:
                    break
                batch: list[_Request] = []
                size = 0
                while self._queue and (
                    not batch or size + len(self._queue[0].texts) <= self.max_batch
                ):
                    taken = self._queue.pop(0)
                    batch.append(taken)
                    size += len(taken.texts)
                await self._run(batch)
        if request.error is not None:
            raise request.error
        assert request.result is not None
        return request.result

    async def _run(self, batch: list[_Request]) -> None:
        texts = [text for request in batch for text in request.texts]
        try:
            raw = await anyio.to_thread.run_sync(self.embedder.embed, texts)
            vectors = as_unit_rows(raw, self.embedder.dim)
            if len(vectors) != len(texts):
                raise EmbeddingError(
                    f"embedder returned {len(vectors)} rows for {len(texts)} texts"
                )
        except Exception as exc:  # handed to every waiter of the batch, then re-raised
            for request in batch:
                request.error, request.done = exc, True
            return
        start = 0
        for request in batch:
            request.result = vectors[start : start + len(request.texts)]
            request.done = True
            start += len(request.texts)
