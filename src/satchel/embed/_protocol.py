"""The :class:`Embedder` protocol: what satchel needs from a text-embedding model."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

__all__ = ["Embedder"]


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into unit-length float32 vectors.

    Implementations are synchronous and thread-safe; satchel calls them from a worker
    thread so the event loop never blocks.
    """

    @property
    def name(self) -> str:
        """A stable identifier of the model (stored beside vectors to detect a change)."""
        ...

    @property
    def dim(self) -> int:
        """The number of dimensions of every vector."""
        ...

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Embed ``texts`` into an array of shape ``(len(texts), dim)``, each row
        L2-normalised."""
        ...
