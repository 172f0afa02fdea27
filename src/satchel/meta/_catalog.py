"""The catalog index behind ``discover_tools``: entries, filters and ranked search.

:class:`CatalogIndex` keeps, for every tool of a registry, a lightweight
:class:`CatalogEntry`, its BM25 document, its place in the by-category and by-action
indexes, and its embedding. It is built once and kept current through
:meth:`~satchel.ToolRegistry.subscribe`: a registration, replacement or removal
touches only that tool. Embeddings are computed lazily, the first time a search needs
them, in a worker thread, and cached by the text they were computed from, so a replaced
tool whose text did not change is not embedded again.

Thread safety: one lock guards the index; registry listeners (called from whichever
thread registered a tool) and searches take it briefly. The embedding model runs outside
it.

The class is written in four modules: this one (building the index, following the
registry, learned requests), :mod:`satchel.meta._catalog_records` (the records, the
reads over them and the filters), :mod:`satchel.meta._catalog_vectors` (the
embeddings) and :mod:`satchel.meta._catalog_search` (searching and scoring), whose
classes are its bases and hold no state of their own.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Callable, Collection
from typing import Final

import numpy as np
import numpy.typing as npt

from satchel.consent import ApprovalPolicy
from satchel.embed import Embedder
from satchel.meta._catalog_records import ToolRecord
from satchel.meta._catalog_search import CatalogSearch, SearchMode
from satchel.meta._entry import CatalogEntry
from satchel.meta._examples import ExampleSet
from satchel.meta._ranking import DEFAULT_RANKING, Ranking
from satchel.meta._text import description_text, document_terms, name_text
from satchel.registry import BaseRegistry, RegistryEvent
from satchel.retrieval import BM25Index, tokenize

__all__ = ["UNCATEGORIZED", "CatalogIndex", "SearchMode"]

UNCATEGORIZED: Final = "uncategorized"
"""The category name under which tools without a category are counted and filtered."""


def _key(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "replace"), digest_size=16).hexdigest()


class CatalogIndex(CatalogSearch):
    """A searchable index of a registry's tools, kept current as the registry changes.

    Args:
        registry: The tools to index. The index subscribes to it; call :meth:`close`
            to stop following it.
        embedder: The embedding model for hybrid search, or ``None`` for BM25 only.
        ranking: How a query ranks tools.
        approval: Which calls wait for a human (each entry's ``needs_approval``).

    Example:
        >>> index = CatalogIndex(registry, embedder=default_embedder())
        >>> entries, total = await index.search("open a pull request", limit=3)
    """

    def __init__(
        self,
        registry: BaseRegistry,
        *,
        embedder: Embedder | None = None,
        ranking: Ranking = DEFAULT_RANKING,
        approval: ApprovalPolicy = ApprovalPolicy.DESTRUCTIVE,
    ) -> None:
        self.registry = registry
        self.embedder = embedder
        self.ranking = ranking
        self.approval = ApprovalPolicy(approval)
        self._lock = threading.RLock()
        self._embed_mutex = threading.Lock()
        self._records: dict[str, ToolRecord] = {}
        self._slots: list[str | None] = []
        self._free: list[int] = []
        self._bm25 = BM25Index(k1=ranking.k1, b=ranking.b)
        self._by_category: dict[str, set[str]] = {}
        self._by_action: dict[str, set[str]] = {}
        dim = embedder.dim if embedder is not None else 0
        self._vectors: npt.NDArray[np.float32] = np.zeros((16, 2, dim), dtype=np.float32)
        self._has_vector: npt.NDArray[np.bool_] = np.zeros(16, dtype=np.bool_)
        self._vector_cache: OrderedDict[str, npt.NDArray[np.float32]] = OrderedDict()
        self._query_cache: OrderedDict[str, npt.NDArray[np.float32]] = OrderedDict()
        self._all_slots: npt.NDArray[np.intp] | None = None
        self._examples = ExampleSet(dim)
        self._learned: dict[str, tuple[str, ...]] = {}
        self._unsubscribe: Callable[[], None] | None = registry.subscribe(self._on_change)
        for name in registry.names():
            self._sync(name)

    # -- following the registry --------------------------------------------------

    def close(self) -> None:
        """Stop following the registry (idempotent)."""
        unsubscribe, self._unsubscribe = self._unsubscribe, None
        if unsubscribe is not None:
            unsubscribe()

    def _on_change(self, event: RegistryEvent) -> None:
        self._sync(event.name)

    def _sync(self, name: str) -> None:
        """Bring ``name``'s record in line with the registry (idempotent, so events
        arriving in any order end in the registry's state)."""
        tool = self.registry.get(name)
        with self._lock:
            current = self._records.get(name)
            if tool is None:
                if current is not None:
                    self._drop(current)
                    del self._records[name]
                    self._examples.set(name, ())
                return
            spec = tool.spec
            if current is not None and current.spec is spec:
                return
            slot = current.slot if current is not None else self._take_slot(name)
            if current is not None:
                self._unlink(current)
            texts = (description_text(spec), name_text(spec))
            record = ToolRecord(
                slot=slot,
                spec=spec,
                entry=CatalogEntry.from_spec(spec, self.approval),
                category=spec.category or UNCATEGORIZED,
                actions=frozenset(spec.actions),
                texts=texts,
                keys=(_key(texts[0]), _key(texts[1])),
            )
            self._records[name] = record
            self._index_text(record)
            self._by_category.setdefault(record.category, set()).add(name)
            for action in record.actions:
                self._by_action.setdefault(action, set()).add(name)
            if current is None or current.keys != record.keys:
                self._has_vector[slot] = False
                self._fill_from_cache(record)
            self._all_slots = None

    def _index_text(self, record: ToolRecord) -> None:
        """Index ``record``'s BM25 document and examples (its own and the learned ones).
        Call with the lock held."""
        spec = record.spec
        examples = (*spec.examples, *self._learned.get(spec.name, ()))
        self._examples.set(spec.name, examples)
        terms = document_terms(spec, name_repeat=self.ranking.name_repeat)
        for example in examples:
            terms += tokenize(example)
        self._bm25.set(record.slot, terms)

    # -- learned requests --------------------------------------------------------

    def set_learned(self, tool: str, queries: Collection[str]) -> None:
        """Make ``queries`` the requests learned for ``tool``: they rank it as its own
        examples do (kept for a tool that is not, or no longer, in the registry)."""
        with self._lock:
            learned = tuple(queries)
            if self._learned.get(tool, ()) == learned:
                return
            if learned:
                self._learned[tool] = learned
            else:
                self._learned.pop(tool, None)
            record = self._records.get(tool)
            if record is not None:
                self._index_text(record)

    def learned(self) -> dict[str, tuple[str, ...]]:
        """The requests learned per tool (see :meth:`set_learned`)."""
        with self._lock:
            return dict(self._learned)

    def examples(self, tool: str) -> tuple[str, ...]:
        """The examples ``tool`` is ranked by: its own, then the learned ones."""
        with self._lock:
            return self._examples.texts(tool)

    # -- slots -------------------------------------------------------------------

    def _take_slot(self, name: str) -> int:
        if self._free:
            slot = self._free.pop()
            self._slots[slot] = name
        else:
            slot = len(self._slots)
            self._slots.append(name)
        if slot >= len(self._has_vector):
            size = 2 * len(self._has_vector)
            vectors = np.zeros((size, *self._vectors.shape[1:]), dtype=np.float32)
            vectors[: len(self._vectors)] = self._vectors
            has = np.zeros(size, dtype=np.bool_)
            has[: len(self._has_vector)] = self._has_vector
            self._vectors, self._has_vector = vectors, has
        return slot

    def _unlink(self, record: ToolRecord) -> None:
        names = self._by_category.get(record.category)
        if names is not None:
            names.discard(record.spec.name)
            if not names:
                del self._by_category[record.category]
        for action in record.actions:
            names = self._by_action.get(action)
            if names is not None:
                names.discard(record.spec.name)
                if not names:
                    del self._by_action[action]

    def _drop(self, record: ToolRecord) -> None:
        self._unlink(record)
        self._bm25.remove(record.slot)
        self._has_vector[record.slot] = False
        self._slots[record.slot] = None
        self._free.append(record.slot)
        self._all_slots = None
