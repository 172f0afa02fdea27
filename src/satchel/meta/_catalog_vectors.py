"""The embeddings of :class:`~satchel.meta.CatalogIndex`: each tool's description and
name vectors, the example vectors, and the query vectors.

They are computed lazily, the first time a search needs them, outside the index's lock,
and cached by the text they were computed from, so a replaced tool whose text did not
change is not embedded again. :class:`CatalogVectors` is a part the index holds: it owns
the vector arrays (one row per slot of :class:`~satchel.meta._catalog_records.CatalogRecords`),
the caches and the example vectors.
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


class CatalogVectors:
    """The embeddings of :class:`~satchel.meta.CatalogIndex` (see the module
    docstring).

    Args:
        embedder: The model, or ``None`` (then nothing is embedded).
        records: The records whose slots the rows follow; its lock guards the arrays.
        examples: The tools' examples, whose vectors are filled here.
    """

    def __init__(
        self, embedder: Embedder | None, records: CatalogRecords, examples: ExampleSet
    ) -> None:
        self.embedder = embedder
        self.examples = examples
        self._records = records
        self._lock = records.lock
        self._embed_mutex = threading.Lock()
        dim = embedder.dim if embedder is not None else 0
        self.vectors: npt.NDArray[np.float32] = np.zeros((16, 2, dim), dtype=np.float32)
        self.has_vector: npt.NDArray[np.bool_] = np.zeros(16, dtype=np.bool_)
        self._vector_cache: OrderedDict[str, npt.NDArray[np.float32]] = OrderedDict()
        self._query_cache: OrderedDict[str, npt.NDArray[np.float32]] = OrderedDict()

    def fit(self, slot: int) -> None:
        """Grow the arrays to hold ``slot``. Call with the lock held."""
        if slot < len(self.has_vector):
            return
        size = 2 * len(self.has_vector)
        vectors = np.zeros((size, *self.vectors.shape[1:]), dtype=np.float32)
        vectors[: len(self.vectors)] = self.vectors
        has = np.zeros(size, dtype=np.bool_)
        has[: len(self.has_vector)] = self.has_vector
        self.vectors, self.has_vector = vectors, has

    def has_query(self, query: str) -> bool:
        """Whether ``query``'s vector is cached."""
        return query in self._query_cache

    def renew(self, record: ToolRecord) -> None:
        """``record``'s texts changed: drop its vectors, taking them from the cache if
        they are there. Call with the lock held."""
        self.has_vector[record.slot] = False
        self.fill_from_cache(record)

    def fill_from_cache(self, record: ToolRecord) -> bool:
        """Give ``record`` its vectors from the cache if both are there. Call with the
        lock held."""
        cache = self._vector_cache
        if all(key in cache for key in record.keys):
            for i, key in enumerate(record.keys):
                self.vectors[record.slot, i] = cache[key]
            self.has_vector[record.slot] = True
            return True
        return False

    def ensure(self, slots: npt.NDArray[np.intp]) -> None:
        """Embed the tools at ``slots`` that have no vector yet (blocking)."""
        embedder = self.embedder
        if embedder is None:
            return
        self._ensure_example_vectors(embedder)
        if bool(self.has_vector[slots].all()):
            return
        with self._embed_mutex:
            todo: dict[str, str] = {}
            with self._lock:
                for slot in slot_list(slots):
                    name = self._records.slots[slot]
                    if self.has_vector[slot] or name is None:
                        continue
                    record = self._records.records[name]
                    if not self.fill_from_cache(record):
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
                for record in self._records.records.values():
                    if not self.has_vector[record.slot]:
                        self.fill_from_cache(record)

    def _ensure_example_vectors(self, embedder: Embedder) -> None:
        """Embed the examples that have no vector yet (a learned query's vector is
        usually still in the query cache)."""
        with self._lock:
            if not self.examples:
                return
            missing = self.examples.missing()
            if not missing:
                return
            known = {t: self._query_cache[t] for t in missing if t in self._query_cache}
        todo = [t for t in missing if t not in known]
        if todo:
            known.update(zip(todo, embedder.embed(todo), strict=True))
        with self._lock:
            self.examples.fill(known)

    def query_vector(self, query: str) -> npt.NDArray[np.float32]:
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
            slots = self._records.candidates((), ())
        await anyio.to_thread.run_sync(self.ensure, slots)
