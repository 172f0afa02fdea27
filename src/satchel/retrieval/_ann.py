"""A cosine nearest-neighbour index over unit vectors, persisted to one file.

Built on ``usearch`` (an HNSW graph in C++ with a small Python wrapper, wheels for every
platform satchel supports). Measured against ``hnswlib``, ``faiss-cpu`` and
``sqlite-vec`` on this project's 2-core machine (``bench/ann_libraries.py``, tables in
``bench/README.md``): it has the same recall and query time as the others, loads a
saved index as fast, can serve a saved file memory-mapped, and stores half-precision
vectors (``f16``: half the memory and disk of ``float32`` at no measurable recall cost,
where ``i8`` lost recall).

* Below :attr:`AnnIndex.exact_below` entries a search scans every vector (exact, and
  as fast as the graph at that size); above it, it walks the graph with an expansion
  of at least :attr:`AnnIndex.expansion_search` (and at least ``k``).
* Ids are non-negative integers (a backend's row ids). Adding an id that is present
  replaces its vector. Removed ids are never returned.
* Every method takes one lock, so the index is safe to share between threads; searches
  are short (well under a millisecond at 100k entries), so they are serialised too.
* :meth:`AnnIndex.load` maps a saved file into memory (``view``) instead of reading it:
  opening costs the same at any size (the operating system pages the graph in as
  searches touch it), where reading is linear (about 0.5 s per 100k entries here). The
  first change copies the mapped index into memory (as long as a read) and edits the
  copy; the file itself is never written (saves go to a new file and rename), so a
  mapped file stays valid even after a later save replaced or deleted it.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

import numpy as np
import numpy.typing as npt
from usearch.index import Index

from satchel._errors import StorageError

__all__ = ["AnnIndex"]

F32 = npt.NDArray[np.float32]
I64 = npt.NDArray[np.int64]


class AnnIndex:
    """Cosine top-k over unit vectors keyed by integer ids (see the module docstring).

    Args:
        dim: Dimensions of every vector.
        exact_below: Below this many entries, searches are exact scans.
        connectivity: Graph edges per node (HNSW ``M``).
        expansion_add: Candidate list size while inserting (HNSW ``ef_construction``).
        expansion_search: Candidate list size while searching (HNSW ``ef``).
    """

    def __init__(
        self,
        dim: int,
        *,
        exact_below: int = 4_096,
        connectivity: int = 16,
        expansion_add: int = 128,
        expansion_search: int = 64,
    ) -> None:
        self.dim = dim
        self.exact_below = exact_below
        self.expansion_search = expansion_search
        self._lock = threading.Lock()
        self._viewed = False
        self._index = Index(
            ndim=dim,
            metric="cos",
            dtype="f16",
            connectivity=connectivity,
            expansion_add=expansion_add,
            expansion_search=expansion_search,
        )

    def __len__(self) -> int:
        return len(self._index)

    @property
    def viewed(self) -> bool:
        """Whether the index is still a read-only map of its saved file (see
        :meth:`load`); the first change copies it into memory."""
        return self._viewed

    def _writable(self) -> Index:
        """The index, copied out of its mapped file first if it is one. Call with the
        lock held."""
        if self._viewed:
            copy = self._index.copy()
            copy.expansion_search = self._index.expansion_search
            self._index, self._viewed = copy, False
        return self._index

    @staticmethod
    def _keys(ids: I64) -> npt.NDArray[np.uint64]:
        return np.asarray(ids, dtype=np.int64).astype(np.uint64)

    def add(self, ids: I64, vectors: F32, *, threads: int = 0) -> None:
        """Add or replace vectors (the last one wins for an id repeated in ``ids``).

        Args:
            ids: Non-negative ids, one per row of ``vectors``.
            vectors: Unit vectors, shape ``(len(ids), dim)``.
            threads: Worker threads for a large batch (0: one per core).
        """
        if len(ids) == 0:
            return
        ids = np.asarray(ids, dtype=np.int64)
        _, last = np.unique(ids[::-1], return_index=True)
        keep = np.sort(len(ids) - 1 - last)
        keys = self._keys(ids[keep])
        rows = np.ascontiguousarray(np.asarray(vectors, dtype=np.float32)[keep])
        with self._lock:
            index = self._writable()
            present = np.asarray(index.contains(keys), dtype=np.bool_).reshape(-1)
            if present.any():
                index.remove(keys[present])
            index.add(keys, rows, threads=threads)

    def remove(self, ids: I64) -> None:
        """Forget these ids (unknown ids are ignored)."""
        ids = np.asarray(ids, dtype=np.int64)
        ids = ids[ids >= 0]
        if len(ids) == 0:
            return
        with self._lock:
            self._writable().remove(self._keys(ids))

    def contains(self, ids: I64) -> npt.NDArray[np.bool_]:
        """Whether each id is in the index."""
        ids = np.asarray(ids, dtype=np.int64)
        if len(ids) == 0:
            return np.zeros(0, dtype=np.bool_)
        with self._lock:
            found = self._index.contains(self._keys(np.maximum(ids, 0)))
        return np.asarray(found, dtype=np.bool_).reshape(-1) & (ids >= 0)

    def ids(self) -> I64:
        """Every id in the index, in no particular order."""
        with self._lock:
            return np.asarray(self._index.keys, dtype=np.uint64).astype(np.int64)

    def search(self, query: F32, k: int) -> tuple[I64, F32]:
        """The ``k`` nearest ids to ``query`` and their cosine similarities, best first.

        Args:
            query: A unit vector.
            k: How many to return (fewer if the index holds fewer).
        """
        with self._lock:
            size = len(self._index)
            if k <= 0 or size == 0:
                return np.zeros(0, np.int64), np.zeros(0, np.float32)
            self._index.expansion_search = max(self.expansion_search, k)
            matches = self._index.search(
                np.asarray(query, dtype=np.float32),
                min(k, size),
                exact=size < self.exact_below,
                threads=1,
            )
        keys = np.asarray(matches.keys, dtype=np.uint64).astype(np.int64)
        return keys, (1.0 - np.asarray(matches.distances, dtype=np.float32))

    def scores_for(self, query: F32, ids: I64) -> tuple[I64, F32]:
        """Cosine of ``query`` with each of ``ids`` that the index holds (scored from
        the stored half-precision vectors).

        Returns:
            The ids found and their scores (ids without a vector are left out).
        """
        ids = np.asarray(ids, dtype=np.int64)
        ids = ids[self.contains(ids)]
        if len(ids) == 0:
            return ids, np.zeros(0, np.float32)
        with self._lock:
            stored = self._index.get(self._keys(ids))
        vectors = np.asarray(stored, dtype=np.float32).reshape(len(ids), self.dim)
        norms = np.linalg.norm(vectors, axis=1)
        scores = (vectors @ np.asarray(query, dtype=np.float32)) / np.maximum(norms, 1e-12)
        return ids, scores.astype(np.float32)

    def vectors(self, ids: I64) -> tuple[I64, F32]:
        """The stored vectors of those of ``ids`` the index holds, as unit rows
        (from half precision), and their ids."""
        ids = np.asarray(ids, dtype=np.int64)
        ids = ids[self.contains(ids)]
        if len(ids) == 0:
            return ids, np.zeros((0, self.dim), np.float32)
        with self._lock:
            stored = self._index.get(self._keys(ids))
        rows = np.asarray(stored, dtype=np.float32).reshape(len(ids), self.dim)
        return ids, rows / np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), 1e-12)

    def save(self, path: Path) -> None:
        """Write the index to ``path`` atomically (a temporary file, flushed, then
        renamed over ``path``), so a crash leaves either the old file or the new one.

        Raises:
            StorageError: The file cannot be written.
        """
        temporary = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        try:
            with self._lock:
                self._index.save(str(temporary))  # pyright: ignore[reportUnknownMemberType]
            with open(temporary, "rb+") as handle:
                os.fsync(handle.fileno())
            os.replace(temporary, path)
        except (OSError, RuntimeError) as exc:  # usearch reports I/O as RuntimeError
            temporary.unlink(missing_ok=True)
            raise StorageError(f"cannot write the vector index {str(path)!r}: {exc}") from exc

    @classmethod
    def load(cls, path: Path, dim: int, *, view: bool = False, **settings: int) -> AnnIndex:
        """Open an index written by :meth:`save`.

        Args:
            path: The file.
            dim: The width it must have.
            view: Map the file into memory instead of reading it (see the module
                docstring): constant time at any size; the first change copies it.
            **settings: As for the constructor.

        Raises:
            StorageError: The file is missing, unreadable, or of another width.
        """
        index = cls(dim, **settings)
        try:
            loaded = Index.restore(str(path), view=view)  # pyright: ignore[reportUnknownMemberType]
        except (OSError, RuntimeError, ValueError) as exc:
            raise StorageError(f"cannot read the vector index {str(path)!r}: {exc}") from exc
        if loaded is None or loaded.ndim != dim:
            raise StorageError(f"the vector index {str(path)!r} is missing or of another width")
        loaded.expansion_search = index.expansion_search
        index._index, index._viewed = loaded, view
        return index
