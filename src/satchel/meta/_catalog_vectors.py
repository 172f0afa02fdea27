"""The embeddings of :class:`~satchel.meta.CatalogIndex`: each tool's description and
name vectors, the example vectors, and the query vectors.

They are computed lazily, the first time a search needs them, outside the index's lock,
and cached by the text they were computed from, so a replaced tool whose text did not
change is not embedded again. :class:`CatalogVectors` is a part of the index (a base),
kept in its own module; it holds no state of its own.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Final

import anyio.to_thread
import numpy as np
import numpy.typing as npt

from satchel.embed import Embedder
from satchel.meta._catalog_records import CatalogRecords, ToolRecord, slot_list
from satchel.meta._examples import ExampleSet

__all__ = ["CatalogVectors"]

_QUERY_CACHE_SIZE: Final = 512
_VECTOR_CACHE_SIZE: Final = 20_000


class CatalogVectors(CatalogRecords):
    """The embeddings of :class:`~satchel.meta.CatalogIndex` (see the module
    docstring); the index supplies the attributes below."""

    embedder: Embedder | None
    _embed_mutex: threading.Lock
    _slots: list[str | None]
    _vectors: npt.NDArray[np.float32]
    _has_vector: npt.NDArray[np.bool_]
    _vector_cache: OrderedDict[str, npt.NDArray[np.float32]]
    _query_cache: OrderedDict[str, npt.NDArray[np.float32]]
    _examples: ExampleSet

    def _fill_from_cache(self, record: ToolRecord) -> bool:
        """Give ``record`` its vectors from the cache if both are there. Call with the
        lock held."""
        cache = self._vector_cache
        if all(key in cache for key in record.keys):
            for i, key in enumerate(record.keys):
                self._vectors[record.slot, i] = cache[key]
            self._has_vector[record.slot] = True
            return True
        return False

    def _ensure_vectors(self, slots: npt.NDArray[np.intp]) -> None:
        """Embed the tools at ``slots`` that have no vector yet (blocking)."""
        embedder = self.embedder
        if embedder is None:
            return
        self._ensure_example_vectors(embedder)
        if bool(self._has_vector[slots].all()):
            return
        with self._embed_mutex:
            todo: dict[str, str] = {}
            with self._lock:
                for slot in slot_list(slots):
                    name = self._slots[slot]
                    if self._has_vector[slot] or name is None:
                        continue
                    record = self._records[name]
                    if not self._fill_from_cache(record):
                        for key, text in zip(record.keys, record.texts, strict=True):
                            if key not in self._vector_cache:
                                todo[key] = text
            if not todo:
                return
            vectors = embedder.embed(list(todo.values()))
            with self._lock:
                for key, vector in zip(todo, vectors, strict=True):
                    self._vector_cache[key] = vector
                    self._vector_cache.move_to_end(key)
                while len(self._vector_cache) > _VECTOR_CACHE_SIZE:
                    self._vector_cache.popitem(last=False)
                for record in self._records.values():
                    if not self._has_vector[record.slot]:
                        self._fill_from_cache(record)

    def _ensure_example_vectors(self, embedder: Embedder) -> None:
        """Embed the examples that have no vector yet (a learned query's vector is
        usually still in the query cache)."""
        with self._lock:
            if not self._examples:
                return
            missing = self._examples.missing()
            if not missing:
                return
            known = {t: self._query_cache[t] for t in missing if t in self._query_cache}
        todo = [t for t in missing if t not in known]
        if todo:
            known.update(zip(todo, embedder.embed(todo), strict=True))
        with self._lock:
            self._examples.fill(known)

    def _query_vector(self, query: str) -> npt.NDArray[np.float32]:
        embedder = self.embedder
        assert embedder is not None
        with self._lock:
            cached = self._query_cache.get(query)
            if cached is not None:
                self._query_cache.move_to_end(query)
                return cached
        vector = embedder.embed([query])[0]
        with self._lock:
            self._query_cache[query] = vector
            while len(self._query_cache) > _QUERY_CACHE_SIZE:
                self._query_cache.popitem(last=False)
        return vector

    async def prepare(self) -> None:
        """Embed every tool that has no vector yet, in a worker thread (searches do this
        on demand; call it to pay the cost up front)."""
        with self._lock:
            slots = self._candidates((), ())
        await anyio.to_thread.run_sync(self._ensure_vectors, slots)
