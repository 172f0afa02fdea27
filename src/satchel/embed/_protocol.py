"""The :class:`Embedder` protocol: what satchel needs from a text-embedding model; and
:class:`LazyEmbedder`, an embedder that loads its model on first use."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

__all__ = ["Embedder", "LazyEmbedder"]


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


@runtime_checkable
class LazyEmbedder(Protocol):
    """An :class:`Embedder` that loads its model on first use and can be asked to load
    it sooner, reporting long steps (so a caller can show progress, e.g. to an MCP
    client, while the first use builds a model file)."""

    @property
    def loaded(self) -> bool:
        """Whether the model is loaded."""
        ...

    def load(self, progress: Callable[[str], None] | None = None) -> None:
        """Load the model now (blocking; at once if loaded), calling ``progress`` with a
        short message before each step that takes seconds."""
        ...
