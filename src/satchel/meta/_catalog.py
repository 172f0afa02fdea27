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

The index holds three parts, each owning its state: the records
(:mod:`satchel.meta._catalog_records`: the records, the reads over them and the
filters), the vectors (:mod:`satchel.meta._catalog_vectors`: the embeddings) and the
search (:mod:`satchel.meta._catalog_search`: BM25, scoring and fusion). This module
builds them, keeps them current with the registry, and keeps the learned requests.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Collection
from typing import Final

from satchel.consent import ApprovalPolicy
from satchel.embed import Embedder
from satchel.meta._catalog_records import CatalogRecords, ToolRecord
from satchel.meta._catalog_search import CatalogSearch, SearchMode
from satchel.meta._catalog_vectors import CatalogVectors
from satchel.meta._entry import CatalogEntry, CatalogScores
from satchel.meta._examples import ExampleSet
from satchel.meta._ranking import DEFAULT_RANKING, Ranking
from satchel.meta._synonyms import implied_actions
from satchel.meta._text import description_text, document_terms, name_text
from satchel.registry import BaseRegistry, RegistryEvent
from satchel.retrieval import tokenize

__all__ = ["UNCATEGORIZED", "CatalogIndex", "SearchMode"]

UNCATEGORIZED: Final = "uncategorized"
"""The category name under which tools without a category are counted and filtered."""


def _key(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "replace"), digest_size=16).hexdigest()


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
        self._records = CatalogRecords()
        self._lock = self._records.lock
        self._examples = ExampleSet(embedder.dim if embedder is not None else 0)
        self._vectors = CatalogVectors(embedder, self._records, self._examples)
        self._search = CatalogSearch(self._records, self._vectors, ranking)
        self._learned: dict[str, tuple[str, ...]] = {}
        self._unsubscribe: Callable[[], None] | None = registry.subscribe(self._on_change)
        for name in registry.names():
            self._sync(name)

    # -- the parts' reads and searches --------------------------------------------

    def __len__(self) -> int:
        return len(self._records)

    def entry(self, name: str) -> CatalogEntry | None:
        """The entry of the tool called ``name``, or ``None``."""
        return self._records.entry(name)

    def entries(self) -> list[CatalogEntry]:
        """Every tool's entry, in registration order."""
        return self._records.entries()

    def categories(self) -> dict[str, int]:
        """Tool count per category (tools without one under ``"uncategorized"``),
        sorted by name."""
        return self._records.categories()

    def actions(self) -> dict[str, int]:
        """Tool count per declared action, sorted by name."""
        return self._records.actions()

    def by_category(self) -> dict[str, list[str]]:
        """The tool names of each category (tools without one under
        ``"uncategorized"``), categories sorted, tools in registration order."""
        return self._records.by_category()

    def by_action(self) -> dict[str, list[str]]:
        """The tool names declaring each action, actions sorted, tools in registration
        order."""
        return self._records.by_action()

    def unknown_filters(
        self, categories: Collection[str] = (), actions: Collection[str] = ()
    ) -> tuple[list[str], list[str]]:
        """The given categories and actions that match none (case-insensitively)."""
        return self._records.unknown_filters(categories, actions)

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
        return await self._search.search(
            query, categories=categories, actions=actions, limit=limit, mode=mode, offset=offset
        )

    def score(self, query: str) -> CatalogScores:
        """Every tool's signals for ``query``, computed in this thread (blocking). For
        benchmarks and tuning a :class:`Ranking`."""
        return self._search.score(query)

    async def prepare(self) -> None:
        """Embed every tool that has no vector yet, in a worker thread (searches do this
        on demand; call it to pay the cost up front)."""
        await self._vectors.prepare()

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
            current = self._records.records.get(name)
            if tool is None:
                if current is not None:
                    self._records.drop(current)
                    self._search.bm25.remove(current.slot)
                    self._vectors.has_vector[current.slot] = False
                    self._examples.set(name, ())
                return
            spec = tool.spec
            if current is not None and current.spec is spec:
                return
            slot = current.slot if current is not None else self._records.take_slot(name)
            self._vectors.fit(slot)
            if current is not None:
                self._records.unlink(current)
            texts = (description_text(spec), name_text(spec))
            record = ToolRecord(
                slot=slot,
                spec=spec,
                entry=CatalogEntry.from_spec(spec, self.approval),
                category=spec.category or UNCATEGORIZED,
                actions=frozenset(spec.actions),
                implied=implied_actions(spec),
                texts=texts,
                keys=(_key(texts[0]), _key(texts[1])),
            )
            self._records.put(record)
            self._index_text(record)
            if current is None or current.keys != record.keys:
                self._vectors.renew(record)

    def _index_text(self, record: ToolRecord) -> None:
        """Index ``record``'s BM25 document and examples (its own and the learned ones).
        Call with the lock held."""
        spec = record.spec
        examples = (*spec.examples, *self._learned.get(spec.name, ()))
        self._examples.set(spec.name, examples)
        terms = document_terms(spec, name_repeat=self.ranking.name_repeat)
        for example in examples:
            terms += tokenize(example)
        self._search.bm25.set(record.slot, terms)

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
            record = self._records.records.get(tool)
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
