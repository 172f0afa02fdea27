"""Searching :class:`~satchel.meta.CatalogIndex`: the candidates a query ranks, their
signals (:class:`~satchel.meta.CatalogScores`), and the fusion
(:mod:`satchel.meta._ranking`) that orders them.

A search whose vectors are all at hand runs on the caller's thread; one that must
embed first runs in a worker thread. :class:`CatalogSearch` is a part the index holds:
it owns the BM25 index and the ranking, and reads the records and vectors it is given.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Final, Literal

import anyio.to_thread
import numpy as np
import numpy.typing as npt

from satchel.meta._catalog_records import CatalogRecords, slot_list
from satchel.meta._catalog_vectors import CatalogVectors
from satchel.meta._entry import CatalogEntry, CatalogScores
from satchel.meta._ranking import Ranking, fuse_scores
from satchel.retrieval import BM25Index, tokenize

__all__ = ["CatalogSearch", "SearchMode"]

SearchMode = Literal["hybrid", "bm25", "embedding"]

_MAX_QUERY_CHARS: Final = 2000


class CatalogSearch:
    """The search of :class:`~satchel.meta.CatalogIndex` (see the module docstring).

    Args:
        records: The tools searched.
        vectors: Their embeddings (and the examples').
        ranking: How a query ranks tools.
    """

    def __init__(self, records: CatalogRecords, vectors: CatalogVectors, ranking: Ranking) -> None:
        self.ranking = ranking
        self.bm25 = BM25Index(k1=ranking.k1, b=ranking.b)
        self._records = records
        self._vectors = vectors
        self._lock = records.lock

    def _mode(self, mode: SearchMode | None) -> SearchMode:
        chosen = mode or self.ranking.mode
        return "bm25" if self._vectors.embedder is None else chosen

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
            examples = self._vectors.examples
            if not self._vectors.has_query(query) or (examples and examples.missing()):
                return False
            slots = self._records.candidates(categories, actions)
            return bool(self._vectors.has_vector[slots].all())

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
                slots = self._records.candidates(categories, actions)
            self._vectors.ensure(slots)
            qvec = self._vectors.query_vector(query)
        else:
            qvec = None
        with self._lock:
            slots = self._records.candidates(categories, actions)
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
            return [self._records.at(s).entry for s in slot_list(chosen)], total

    def _boost_exact(
        self, query: str, slots: npt.NDArray[np.intp], fused: npt.NDArray[np.float32]
    ) -> None:
        """Put first the tools one of whose examples is exactly ``query``. Call with
        the lock held."""
        examples = self._vectors.examples
        tools = examples.exact(query) if examples else []
        if not tools:
            return
        records = self._records.records
        wanted = {records[t].slot for t in tools if t in records}
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
        vectors, has_vector = self._vectors.vectors, self._vectors.has_vector
        examples = self._vectors.examples
        bm25 = self.bm25.scores(tokenize(query), len(self._records.slots))[slots]
        if qvec is None:
            return CatalogScores(names=names, bm25=bm25, description=None, name=None)
        size, width = len(self._records.slots), vectors.shape[1]
        # One row-wise dot product over a 2-D view (no copy). np.vecdot, not ``@``:
        # OpenBLAS runs a product this size on all its threads, which then spin and take
        # the cores the next query's embedding needs (CPU per discovery went from 6 to
        # 15 ms on 2 cores); vecdot stays on this thread and is as fast (bench/README.md).
        flat = np.vecdot(vectors[:size].reshape(size * width, -1), qvec)
        cosine = flat.reshape(size, width)[slots].astype(np.float32, copy=False)
        cosine[~has_vector[slots]] = 0.0
        description = cosine[:, 0].copy()
        example = None
        if examples:
            full = flat.reshape(size, width)[:, 0].astype(np.float32)
            full[~has_vector[:size]] = 0.0
            best = examples.scores(qvec, self._records.slot_of, full)
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
        if self._vectors.embedder is not None:
            with self._lock:
                slots = self._records.candidates((), ())
            self._vectors.ensure(slots)
            qvec = self._vectors.query_vector(query)
        with self._lock:
            slots = self._records.candidates((), ())
            scores = self._scores(query, slots, qvec)
            scores.names.extend(self._records.slots[s] or "" for s in slot_list(slots))
            return scores
