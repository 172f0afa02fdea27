"""Example requests of tools, as a search signal: written ones and learned ones alike.

A tool's examples are its :attr:`~satchel.tools.ToolSpec.examples` followed by the
queries learned from use (:mod:`satchel.meta._usage`). :class:`ExampleSet` keeps them per
tool with one embedding each, and scores a query against them: a tool's ``example``
signal is the best cosine of the query to one of its examples, or to its description
when it has no example (so a tool without examples is neither helped nor pushed down).
The examples' words also join the tool's BM25 document (see
:meth:`~satchel.meta.CatalogIndex.set_learned`).

Not thread-safe on its own: :class:`~satchel.meta.CatalogIndex` calls it with its lock
held, and embeds the missing vectors outside the lock.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import numpy.typing as npt

__all__ = ["ExampleSet"]

_Vector = npt.NDArray[np.float32]


class ExampleSet:
    """Every tool's example texts and their vectors.

    Args:
        dim: The embedding dimension (0 without an embedder).
    """

    def __init__(self, dim: int) -> None:
        self.dim = dim
        self._texts: dict[str, tuple[str, ...]] = {}
        self._vectors: dict[str, _Vector] = {}
        self._matrix: tuple[_Vector, list[str]] | None = None

    def __bool__(self) -> bool:
        return bool(self._texts)

    def set(self, tool: str, texts: Sequence[str]) -> bool:
        """Make ``texts`` the examples of ``tool`` (none removes it); returns whether
        anything changed."""
        unique = tuple(dict.fromkeys(t for t in texts if t))
        if self._texts.get(tool, ()) == unique:
            return False
        if unique:
            self._texts[tool] = unique
        else:
            self._texts.pop(tool, None)
        self._matrix = None
        return True

    def texts(self, tool: str) -> tuple[str, ...]:
        """The examples of ``tool``."""
        return self._texts.get(tool, ())

    def missing(self) -> list[str]:
        """Example texts that have no vector yet."""
        seen = self._vectors
        return list(dict.fromkeys(t for ts in self._texts.values() for t in ts if t not in seen))

    def fill(self, vectors: Mapping[str, _Vector]) -> None:
        """Store the vectors of example texts (from :meth:`missing`)."""
        self._vectors.update(vectors)
        self._matrix = None
        live = {t for ts in self._texts.values() for t in ts}
        if len(self._vectors) > 2 * len(live) + 64:
            self._vectors = {t: v for t, v in self._vectors.items() if t in live}

    def _stacked(self) -> tuple[_Vector, list[str]]:
        if self._matrix is None:
            rows: list[_Vector] = []
            owners: list[str] = []
            for tool, texts in self._texts.items():
                for text in texts:
                    vector = self._vectors.get(text)
                    if vector is not None:
                        rows.append(vector)
                        owners.append(tool)
            matrix = np.stack(rows) if rows else np.zeros((0, self.dim), dtype=np.float32)
            self._matrix = (matrix.astype(np.float32, copy=False), owners)
        return self._matrix

    def scores(self, qvec: _Vector, names: Sequence[str], fallback: _Vector) -> _Vector | None:
        """The ``example`` signal of the tools ``names`` for the query vector ``qvec``:
        each tool's best cosine to one of its examples, or to ``fallback`` (its
        description's cosine, aligned with ``names``) when that is higher or it has
        none. ``None`` when no tool among ``names`` has an embedded example."""
        matrix, owners = self._stacked()
        if not len(owners):
            return None
        position = {name: i for i, name in enumerate(names)}
        rows = np.fromiter((position.get(o, -1) for o in owners), dtype=np.intp, count=len(owners))
        keep = rows >= 0
        if not bool(keep.any()):
            return None
        best = fallback.astype(np.float32, copy=True)
        np.maximum.at(best, rows[keep], (matrix[keep] @ qvec).astype(np.float32))
        return best
