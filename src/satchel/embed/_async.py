"""Embedding from async code without blocking the event loop."""

from __future__ import annotations

from collections.abc import Sequence

import anyio.to_thread
import numpy as np
import numpy.typing as npt

from satchel.embed._protocol import Embedder

__all__ = ["embed_async"]


async def embed_async(embedder: Embedder, texts: Sequence[str]) -> npt.NDArray[np.float32]:
    """Run ``embedder.embed(texts)`` in a worker thread, so the event loop keeps running.

    Works under asyncio and trio (through anyio). If the awaiting task is cancelled, the
    embedding in progress still finishes in its thread before the cancellation is
    delivered.

    Args:
        embedder: Any :class:`~satchel.embed.Embedder`.
        texts: The texts to embed; copied first, so the caller may change its sequence
            while the thread runs.

    Returns:
        What ``embedder.embed`` returns: a float32 array of shape ``(len(texts), dim)``
        with unit-length rows.

    Example:
        >>> vectors = await embed_async(default_embedder(), ["hello", "world"])
    """
    snapshot = tuple(texts) if not isinstance(texts, str) else texts
    return await anyio.to_thread.run_sync(embedder.embed, snapshot)
