"""Example requests of tools, as a search signal: written ones and learned ones alike.

A tool's examples are its :attr:`~satchel.tools.ToolSpec.examples` followed by the
queries learned from use (:mod:`satchel.meta._usage`). :class:`ExampleSet` keeps them per
tool with one embedding each, and scores a query against them: a tool's ``example``
signal is the best cosine of the query to one of its examples, or to its description
when it has no example (so a tool without examples is neither helped nor pushed down).
A query that *is* one of a tool's examples (compared case-insensitively) ranks that tool
first: the same request was served by it before, whatever the size of the catalog (a
normalised signal alone cannot outweigh the others in a catalog of a handful of tools).
The examples' words also join the tool's BM25 document (see
:meth:`~satchel.meta.CatalogIndex.set_learned`).

Not thread-safe on its own: :class:`~satchel.meta.CatalogIndex` calls it with its lock
held, and embeds the missing vectors outside the lock.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

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
        self._pending: set[str] = set()
        self._matrix: tuple[_Vector, npt.NDArray[np.intp]] | None = None
        self._exact: dict[str, list[str]] | None = None

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
            self._pending.update(t for t in unique if t not in self._vectors)
        else:
            self._texts.pop(tool, None)
        self._matrix = None
        self._exact = None
        return True

    def texts(self, tool: str) -> tuple[str, ...]:
        """The examples of ``tool``."""
        return self._texts.get(tool, ())

    def missing(self) -> list[str]:
        """Example texts that have no vector yet."""
        return sorted(self._pending)

    def fill(self, vectors: Mapping[str, _Vector]) -> None:
        """Store the vectors of example texts (from :meth:`missing`)."""
        self._vectors.update(vectors)
        self._pending.difference_update(vectors)
        self._matrix = None
        live = {t for ts in self._texts.values() for t in ts}
        self._pending &= live
        if len(self._vectors) > 2 * len(live) + 64:
            self._vectors = {t: v for t, v in self._vectors.items() if t in live}

    def exact(self, query: str) -> list[str]:
        """The tools one of whose examples is ``query`` (case-insensitively)."""
        if self._exact is None:
            exact: dict[str, list[str]] = {}
            for tool, texts in self._texts.items():
                for text in texts:
                    exact.setdefault(text.casefold(), []).append(tool)
            self._exact = exact
        return self._exact.get(query.casefold(), [])

    def _stacked(self, slot_of: Callable[[str], int]) -> tuple[_Vector, npt.NDArray[np.intp]]:
        if self._matrix is None:
            rows: list[_Vector] = []
            owners: list[int] = []
            for tool, texts in self._texts.items():
                slot = slot_of(tool)
                for text in texts:
                    vector = self._vectors.get(text)
                    if vector is not None and slot >= 0:
                        rows.append(vector)
                        owners.append(slot)
            matrix = np.stack(rows) if rows else np.zeros((0, self.dim), dtype=np.float32)
            self._matrix = (
                matrix.astype(np.float32, copy=False),
                np.asarray(owners, dtype=np.intp),
            )
        return self._matrix

    def scores(
        self, qvec: _Vector, slot_of: Callable[[str], int], fallback: _Vector
    ) -> _Vector | None:
        """The ``example`` signal of every slot for the query vector ``qvec``: each
        tool's best cosine to one of its examples, or to ``fallback`` (its description's
        cosine, one per slot) when that is higher or it has none. ``None`` when no tool
        has an embedded example. ``slot_of`` gives a tool's slot (-1 when it is not in
        the registry); the slots of tools with examples must not change while they keep
        them."""
        matrix, owners = self._stacked(slot_of)
        if not len(owners):
            return None
        best = fallback.astype(np.float32, copy=True)
        # vecdot, not ``@``: no BLAS threads (see CatalogIndex._scores).
        np.maximum.at(best, owners, np.vecdot(matrix, qvec).astype(np.float32, copy=False))
        return best
