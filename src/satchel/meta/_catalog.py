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
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass
from typing import Final, Literal, cast

import anyio.to_thread
import numpy as np
import numpy.typing as npt

from satchel._errors import SatchelUsageError
from satchel.consent import ApprovalPolicy
from satchel.embed import Embedder
from satchel.meta._entry import CatalogEntry, CatalogScores
from satchel.meta._examples import ExampleSet
from satchel.meta._ranking import DEFAULT_RANKING, Ranking, fuse_scores
from satchel.meta._text import description_text, document_terms, name_text
from satchel.registry import RegistryEvent, ToolRegistry
from satchel.retrieval import BM25Index, tokenize
from satchel.tools import ToolSpec

__all__ = ["UNCATEGORIZED", "CatalogIndex", "SearchMode"]

UNCATEGORIZED: Final = "uncategorized"
"""The category name under which tools without a category are counted and filtered."""
SearchMode = Literal["hybrid", "bm25", "embedding"]

_MAX_QUERY_CHARS: Final = 2000
_QUERY_CACHE_SIZE: Final = 512
_VECTOR_CACHE_SIZE: Final = 20_000


@dataclass(frozen=True, kw_only=True, slots=True)
class _Record:
    slot: int
    spec: ToolSpec
    entry: CatalogEntry
    category: str
    actions: frozenset[str]
    texts: tuple[str, str]
    """What the description and the name vectors are computed from."""
    keys: tuple[str, str]


def _key(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "replace"), digest_size=16).hexdigest()


def _ints(array: npt.NDArray[np.intp]) -> list[int]:
    return cast(list[int], array.tolist())


def _fold(values: Iterable[str]) -> dict[str, str]:
    return {v.casefold(): v for v in values}


class CatalogIndex:
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
        registry: ToolRegistry,
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
        self._records: dict[str, _Record] = {}
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
            record = _Record(
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

    def _index_text(self, record: _Record) -> None:
        """Index ``record``'s BM25 document and examples (its own and the learned ones).
        Call with the lock held."""
        spec = record.spec
        examples = (*spec.examples, *self._learned.get(spec.name, ()))
        self._examples.set(spec.name, examples)
        terms = document_terms(spec, name_repeat=self.ranking.name_repeat)
        for example in examples:
            terms += tokenize(example)
        self._bm25.set(record.slot, terms)

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

    def _unlink(self, record: _Record) -> None:
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

    def _drop(self, record: _Record) -> None:
        self._unlink(record)
        self._bm25.remove(record.slot)
        self._has_vector[record.slot] = False
        self._slots[record.slot] = None
        self._free.append(record.slot)
        self._all_slots = None

    def _fill_from_cache(self, record: _Record) -> bool:
        """Give ``record`` its vectors from the cache if both are there. Call with the
        lock held."""
        cache = self._vector_cache
        if all(key in cache for key in record.keys):
            for i, key in enumerate(record.keys):
                self._vectors[record.slot, i] = cache[key]
            self._has_vector[record.slot] = True
            return True
        return False

    # -- reading -----------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._records)

    def entry(self, name: str) -> CatalogEntry | None:
        """The entry of the tool called ``name``, or ``None``."""
        record = self._records.get(name)
        return record.entry if record is not None else None

    def entries(self) -> list[CatalogEntry]:
        """Every tool's entry, in registration order."""
        with self._lock:
            return [r.entry for r in self._records.values()]

    def categories(self) -> dict[str, int]:
        """Tool count per category (tools without one under ``"uncategorized"``),
        sorted by name."""
        with self._lock:
            return {c: len(n) for c, n in sorted(self._by_category.items())}

    def actions(self) -> dict[str, int]:
        """Tool count per declared action, sorted by name."""
        with self._lock:
            return {a: len(n) for a, n in sorted(self._by_action.items())}

    def by_category(self) -> dict[str, list[str]]:
        """The tool names of each category (tools without one under
        ``"uncategorized"``), categories sorted, tools in registration order."""
        with self._lock:
            return {
                c: [n for n in self._records if n in names]
                for c, names in sorted(self._by_category.items())
            }

    def by_action(self) -> dict[str, list[str]]:
        """The tool names declaring each action, actions sorted, tools in registration
        order."""
        with self._lock:
            return {
                a: [n for n in self._records if n in names]
                for a, names in sorted(self._by_action.items())
            }

    def unknown_filters(
        self, categories: Collection[str] = (), actions: Collection[str] = ()
    ) -> tuple[list[str], list[str]]:
        """The given categories and actions that match none (case-insensitively)."""
        with self._lock:
            known_c, known_a = _fold(self._by_category), _fold(self._by_action)
        return (
            [c for c in categories if c.casefold() not in known_c],
            [a for a in actions if a.casefold() not in known_a],
        )

    def _candidates(
        self, categories: Collection[str], actions: Collection[str]
    ) -> npt.NDArray[np.intp]:
        """Slots of the tools passing the filters, in registration order. Call with the
        lock held."""
        if not categories and not actions:
            if self._all_slots is None:
                self._all_slots = np.fromiter(
                    (r.slot for r in self._records.values()), dtype=np.intp
                )
            return self._all_slots
        unknown = self.unknown_filters(categories, actions)
        if unknown[0] or unknown[1]:
            raise SatchelUsageError(
                f"Unknown categories {unknown[0]} or actions {unknown[1]}; the valid ones "
                f"are {sorted(self._by_category)} and {sorted(self._by_action)}.",
                details={"categories": unknown[0], "actions": unknown[1]},
            )
        keep: set[str] | None = None
        if categories:
            folded = _fold(self._by_category)
            keep = set[str]().union(*(self._by_category[folded[c.casefold()]] for c in categories))
        if actions:
            folded = _fold(self._by_action)
            by_action = set[str]().union(*(self._by_action[folded[a.casefold()]] for a in actions))
            keep = by_action if keep is None else keep & by_action
        assert keep is not None
        return np.fromiter((r.slot for n, r in self._records.items() if n in keep), dtype=np.intp)

    # -- embeddings --------------------------------------------------------------

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
                for slot in _ints(slots):
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

    # -- searching ---------------------------------------------------------------

    def _mode(self, mode: SearchMode | None) -> SearchMode:
        chosen = mode or self.ranking.mode
        return "bm25" if self.embedder is None else chosen

    async def search(
        self,
        query: str = "",
        *,
        categories: Collection[str] = (),
        actions: Collection[str] = (),
        limit: int = 5,
        mode: SearchMode | None = None,
        offset: int = 0,
    ) -> tuple[list[CatalogEntry], int]:
        """The best tools for ``query`` among those passing the filters.

        Without a query, the filtered tools in registration order. A category filter
        keeps tools in any of the categories, an action filter tools with any of the
        actions; both together keep tools passing both. Names match case-insensitively.

        Args:
            query: What the caller wants to do, in words (may be empty).
            categories: Keep only tools in these categories.
            actions: Keep only tools declaring one of these actions.
            limit: The most entries to return.
            mode: Override the index's :class:`Ranking` mode for this search.
            offset: Skip this many of the best entries (for the next page).

        Returns:
            The entries, best first, and how many tools passed the filters.

        Raises:
            SatchelUsageError: An unknown category or action (see
                :meth:`unknown_filters` to check first).
        """
        chosen = self._mode(mode)
        query = " ".join(query.split())[:_MAX_QUERY_CHARS]
        start = max(0, offset)
        window = (start, start + max(0, limit))
        if not query or chosen == "bm25" or self._embedded(query, categories, actions):
            return self._search(query, categories, actions, window, chosen)
        return await anyio.to_thread.run_sync(
            self._search, query, categories, actions, window, chosen
        )

    def _embedded(self, query: str, categories: Collection[str], actions: Collection[str]) -> bool:
        """Whether searching for ``query`` needs no embedding: the query's vector is
        cached and every candidate tool and example has one. Such a search takes a
        fraction of a millisecond, less than the hop to a worker thread, so it runs on
        the caller's thread."""
        with self._lock:
            if query not in self._query_cache or (self._examples and self._examples.missing()):
                return False
            return bool(self._has_vector[self._candidates(categories, actions)].all())

    def _search(
        self,
        query: str,
        categories: Collection[str],
        actions: Collection[str],
        window: tuple[int, int],
        mode: SearchMode,
    ) -> tuple[list[CatalogEntry], int]:
        if query and mode != "bm25":
            with self._lock:
                slots = self._candidates(categories, actions)
            self._ensure_vectors(slots)
            qvec = self._query_vector(query)
        else:
            qvec = None
        with self._lock:
            slots = self._candidates(categories, actions)
            total = len(slots)
            start, stop = window
            if not query or not total:
                chosen = slots[start:stop]
            else:
                scores = self._scores(query, slots, qvec)
                fused = self._fuse(scores, mode)
                self._boost_exact(query, slots, fused)
                order = np.argsort(-fused, kind="stable")[start:stop]
                if mode == "bm25" or scores.description is None:
                    order = order[scores.bm25[order] > 0]
                chosen = slots[order]
            return [self._records[self._slots[s] or ""].entry for s in _ints(chosen)], total

    def _slot_of(self, tool: str) -> int:
        record = self._records.get(tool)
        return -1 if record is None else record.slot

    def _boost_exact(
        self, query: str, slots: npt.NDArray[np.intp], fused: npt.NDArray[np.float32]
    ) -> None:
        """Put first the tools one of whose examples is exactly ``query``. Call with
        the lock held."""
        tools = self._examples.exact(query) if self._examples else []
        if not tools:
            return
        wanted = {self._records[t].slot for t in tools if t in self._records}
        hit = np.fromiter((int(s) in wanted for s in slots), dtype=np.bool_, count=len(slots))
        if bool(hit.any()):
            fused[hit] += float(np.abs(fused).max()) * 2 + 1.0

    def _fuse(self, scores: CatalogScores, mode: SearchMode) -> npt.NDArray[np.float32]:
        r = self.ranking
        if mode == "bm25" or scores.description is None or scores.name is None:
            return scores.bm25
        signals = [
            (scores.description, r.description_weight, False),
            (scores.name, r.name_weight, False),
        ]
        if scores.example is not None:
            signals.append((scores.example, r.example_weight, False))
        if mode == "hybrid":
            signals.append((scores.bm25, r.bm25_weight, True))
        return fuse_scores(signals, r)

    def _scores(
        self,
        query: str,
        slots: npt.NDArray[np.intp],
        qvec: npt.NDArray[np.float32] | None,
    ) -> CatalogScores:
        """Every signal for the tools at ``slots``. Call with the lock held."""
        names: list[str] = []  # filled by score() only: searches do not need them
        bm25 = self._bm25.scores(tokenize(query), len(self._slots))[slots]
        if qvec is None:
            return CatalogScores(names=names, bm25=bm25, description=None, name=None)
        size, width = len(self._slots), self._vectors.shape[1]
        # One row-wise dot product over a 2-D view (no copy). np.vecdot, not ``@``:
        # OpenBLAS runs a product this size on all its threads, which then spin and take
        # the cores the next query's embedding needs (CPU per discovery went from 6 to
        # 15 ms on 2 cores); vecdot stays on this thread and is as fast (bench/README.md).
        flat = np.vecdot(self._vectors[:size].reshape(size * width, -1), qvec)
        cosine = flat.reshape(size, width)[slots].astype(np.float32, copy=False)
        cosine[~self._has_vector[slots]] = 0.0
        description = cosine[:, 0].copy()
        example = None
        if self._examples:
            full = flat.reshape(size, width)[:, 0].astype(np.float32)
            full[~self._has_vector[:size]] = 0.0
            best = self._examples.scores(qvec, self._slot_of, full)
            example = None if best is None else best[slots]
        return CatalogScores(
            names=names,
            bm25=bm25,
            description=description,
            name=cosine[:, 1].copy(),
            example=example,
        )

    def score(self, query: str) -> CatalogScores:
        """Every tool's signals for ``query``, computed in this thread (blocking). For
        benchmarks and tuning a :class:`Ranking`."""
        qvec = None
        query = " ".join(query.split())[:_MAX_QUERY_CHARS]
        if self.embedder is not None:
            with self._lock:
                slots = self._candidates((), ())
            self._ensure_vectors(slots)
            qvec = self._query_vector(query)
        with self._lock:
            slots = self._candidates((), ())
            scores = self._scores(query, slots, qvec)
            scores.names.extend(self._slots[s] or "" for s in _ints(slots))
            return scores
