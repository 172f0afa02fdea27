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
  file itself is never written (saves go to a new file and rename), so a mapped file
  stays valid even after a later save replaced or deleted it.
* Changes to a mapped index go to an **overlay**: added and replaced vectors in a small
  in-memory index searched exactly, and the mapped ids they hide (removed or replaced).
  A search asks both and merges. Only when the overlay would pass
  :attr:`AnnIndex.overlay_limit` changes (or at :meth:`AnnIndex.save`) is the mapped
  index copied into memory with the overlay applied: a copy costs as long as a read
  (1.5 s at 1M entries) and doubles the memory of a process that would otherwise share
  the mapped pages with every other process on the same file.
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
        overlay_limit: The most changes a mapped index keeps in its overlay before it
            is copied into memory (see the module docstring).
    """

    def __init__(
        self,
        dim: int,
        *,
        exact_below: int = 4_096,
        connectivity: int = 16,
        expansion_add: int = 128,
        expansion_search: int = 64,
        overlay_limit: int = 2_048,
    ) -> None:
        self.dim = dim
        self.exact_below = exact_below
        self.expansion_search = expansion_search
        self.overlay_limit = overlay_limit
        self._settings = (connectivity, expansion_add, expansion_search)
        self._lock = threading.Lock()
        self._viewed = False
        self._index = self._new_index()
        self._overlay = self._new_index()
        self._hidden: set[int] = set()

    def _new_index(self) -> Index:
        connectivity, expansion_add, expansion_search = self._settings
        return Index(
            ndim=self.dim,
            metric="cos",
            dtype="f16",
            connectivity=connectivity,
            expansion_add=expansion_add,
            expansion_search=expansion_search,
        )

    def __len__(self) -> int:
        return len(self._index) - len(self._hidden) + len(self._overlay)

    @property
    def viewed(self) -> bool:
        """Whether the index is still served from its mapped file (see :meth:`load`),
        changes since kept in the overlay."""
        return self._viewed

    @property
    def overlaid(self) -> int:
        """How many changes the overlay holds (added or replaced vectors plus hidden
        mapped ids); 0 once the index is in memory."""
        return len(self._overlay) + len(self._hidden)

    def _writable(self) -> Index:
        """The index in memory with the overlay applied, copied out of its mapped file
        first if it is one. Call with the lock held."""
        if self._viewed:
            copy = self._index.copy()
            copy.expansion_search = self._index.expansion_search
            if self._hidden:
                copy.remove(self._keys(np.fromiter(self._hidden, np.int64, len(self._hidden))))
            if len(self._overlay):
                keys = np.asarray(self._overlay.keys, dtype=np.uint64)
                rows = np.asarray(self._overlay.get(keys), dtype=np.float32)
                copy.add(keys, rows.reshape(len(keys), self.dim), threads=1)
            self._index, self._viewed = copy, False
            self._overlay, self._hidden = self._new_index(), set()
        return self._index

    def _overlay_takes(self, more: int) -> bool:
        """Whether ``more`` changes still fit in the overlay (else the index is copied
        into memory first). Call with the lock held."""
        return self._viewed and self.overlaid + more <= self.overlay_limit

    def _in_base(self, keys: npt.NDArray[np.uint64]) -> npt.NDArray[np.bool_]:
        """Which keys the mapped index holds and the overlay does not hide."""
        found = np.asarray(self._index.contains(keys), dtype=np.bool_).reshape(-1)
        if self._hidden:
            found &= ~np.isin(keys.astype(np.int64), list(self._hidden))
        return found

    def _where(
        self, keys: npt.NDArray[np.uint64]
    ) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.bool_]]:
        """Which keys the base holds unhidden, and which the overlay holds. Call with
        the lock held."""
        over = (
            np.asarray(self._overlay.contains(keys), dtype=np.bool_).reshape(-1)
            if len(self._overlay)
            else np.zeros(len(keys), np.bool_)
        )
        return self._in_base(keys), over

    def _hide(self, keys: npt.NDArray[np.uint64]) -> None:
        """Hide the mapped vectors of ``keys`` and drop their overlay ones."""
        base, over = self._where(keys)
        self._hidden.update(keys[base].astype(np.int64).tolist())
        if over.any():
            self._overlay.remove(keys[over])

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
            if self._overlay_takes(2 * len(keys)):
                self._hide(keys)
                self._overlay.add(keys, rows, threads=1)
                return
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
            if self._overlay_takes(len(ids)):
                self._hide(self._keys(ids))
                return
            self._writable().remove(self._keys(ids))

    def contains(self, ids: I64) -> npt.NDArray[np.bool_]:
        """Whether each id is in the index."""
        ids = np.asarray(ids, dtype=np.int64)
        if len(ids) == 0:
            return np.zeros(0, dtype=np.bool_)
        keys = self._keys(np.maximum(ids, 0))
        with self._lock:
            base, over = self._where(keys)
        return (base | over) & (ids >= 0)

    def ids(self) -> I64:
        """Every id in the index, in no particular order."""
        with self._lock:
            held = np.asarray(self._index.keys, dtype=np.uint64).astype(np.int64)
            if self._hidden:
                held = held[~np.isin(held, list(self._hidden))]
            if len(self._overlay):
                extra = np.asarray(self._overlay.keys, dtype=np.uint64).astype(np.int64)
                held = np.concatenate([held, extra])
            return held

    def search(self, query: F32, k: int) -> tuple[I64, F32]:
        """The ``k`` nearest ids to ``query`` and their cosine similarities, best first.

        Args:
            query: A unit vector.
            k: How many to return (fewer if the index holds fewer).
        """
        query = np.asarray(query, dtype=np.float32)
        with self._lock:
            if k <= 0 or len(self) == 0:
                return np.zeros(0, np.int64), np.zeros(0, np.float32)
            keys, scores = self._search_base(query, k)
            if len(self._overlay):
                more = self._overlay.search(query, min(k, len(self._overlay)), exact=True)
                keys = np.concatenate([keys, np.asarray(more.keys, np.uint64).astype(np.int64)])
                scores = np.concatenate([scores, 1.0 - np.asarray(more.distances, np.float32)])
                best = np.argsort(-scores, kind="stable")[:k]
                keys, scores = keys[best], scores[best]
        return keys, scores.astype(np.float32, copy=False)

    def _search_base(self, query: F32, k: int) -> tuple[I64, F32]:
        """The ``k`` best of the mapped (or in-memory) index that the overlay does not
        hide: asking for up to 16 more first, and for one more per hidden id only if
        that was not enough. Call with the lock held."""
        size, hidden = len(self._index), len(self._hidden)
        keys, scores = self._base_top(query, min(k + min(hidden, 16), size))
        if len(keys) < k and hidden > 16:
            keys, scores = self._base_top(query, min(k + hidden, size))
        return keys[:k], scores[:k]

    def _base_top(self, query: F32, want: int) -> tuple[I64, F32]:
        """The ``want`` nearest of the base index, less the hidden ones."""
        if want <= 0:
            return np.zeros(0, np.int64), np.zeros(0, np.float32)
        self._index.expansion_search = max(self.expansion_search, want)
        matches = self._index.search(
            query, want, exact=len(self._index) < self.exact_below, threads=1
        )
        keys = np.asarray(matches.keys, dtype=np.uint64).astype(np.int64)
        scores = 1.0 - np.asarray(matches.distances, dtype=np.float32)
        if self._hidden:
            shown = ~np.isin(keys, list(self._hidden))
            keys, scores = keys[shown], scores[shown]
        return keys, scores

    def scores_for(self, query: F32, ids: I64) -> tuple[I64, F32]:
        """Cosine of ``query`` with each of ``ids`` that the index holds (scored from
        the stored half-precision vectors).

        Returns:
            The ids found and their scores (ids without a vector are left out).
        """
        ids, vectors = self._stored(ids)
        if len(ids) == 0:
            return ids, np.zeros(0, np.float32)
        norms = np.linalg.norm(vectors, axis=1)
        scores = (vectors @ np.asarray(query, dtype=np.float32)) / np.maximum(norms, 1e-12)
        return ids, scores.astype(np.float32)

    def vectors(self, ids: I64) -> tuple[I64, F32]:
        """The stored vectors of those of ``ids`` the index holds, as unit rows
        (from half precision), and their ids."""
        ids, rows = self._stored(ids)
        if len(ids) == 0:
            return ids, np.zeros((0, self.dim), np.float32)
        return ids, rows / np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), 1e-12)

    def _stored(self, ids: I64) -> tuple[I64, F32]:
        """Those of ``ids`` the index holds and their stored (half-precision) vectors,
        read from the overlay or the base."""
        ids = np.asarray(ids, dtype=np.int64)
        ids = ids[ids >= 0]
        with self._lock:
            keys = self._keys(ids)
            base, over = self._where(keys)
            keep = base | over
            ids, keys, over = ids[keep], keys[keep], over[keep]
            rows = np.zeros((len(ids), self.dim), np.float32)
            for source, chosen in ((self._index, ~over), (self._overlay, over)):
                if chosen.any():
                    got = np.asarray(source.get(keys[chosen]), dtype=np.float32)
                    rows[chosen] = got.reshape(int(chosen.sum()), self.dim)
        return ids, rows

    def save(self, path: Path) -> None:
        """Write the index to ``path`` atomically (a temporary file, flushed, then
        renamed over ``path``), so a crash leaves either the old file or the new one.

        Raises:
            StorageError: The file cannot be written.
        """
        temporary = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        try:
            with self._lock:
                index = self._writable() if self.overlaid else self._index
                index.save(str(temporary))  # pyright: ignore[reportUnknownMemberType]
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
