"""An incremental Okapi BM25 index over numbered slots, in numpy.

Why not a library such as ``bm25s``: a tool catalog is small (hundreds to a few
thousand documents of a few dozen terms each) and changes one tool at a time, while
``bm25s`` builds a static sparse matrix that must be rebuilt on every change and would
add scipy to the dependencies. Here a change touches only the changed tool's postings,
and a query costs one vectorised pass per query term (``bench/meta_latency.py`` times
it: BM25 is the cheap part of ``discover_tools``).

Scoring is the usual BM25 with Lucene's always-positive IDF (:func:`idf`, which
memory's coverage fusion uses too), and term frequency saturated by ``k1`` and
normalised by document length with ``b``.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from satchel.retrieval._settings import BM25_B, BM25_K1

__all__ = ["BM25Index", "idf"]

_Postings = tuple[npt.NDArray[np.intp], npt.NDArray[np.float32]]


def idf(document_frequency: float, documents: float) -> float:
    """BM25's inverse document frequency in its always-positive form,
    ``ln(1 + (N - df + 0.5) / (df + 0.5))``.

    Args:
        document_frequency: How many entries contain the term (``df``).
        documents: How many entries there are (``N``).

    Example:
        >>> round(idf(0, 10), 2), round(idf(10, 10), 2)
        (3.09, 0.05)
    """
    df = min(max(0.0, document_frequency), max(0.0, documents))
    return math.log(1.0 + (documents - df + 0.5) / (df + 0.5))


class BM25Index:
    """BM25 over documents stored at integer slots; not thread-safe on its own.

    Args:
        k1: Term-frequency saturation.
        b: Length normalisation, 0 (none) to 1 (full).
    """

    def __init__(self, *, k1: float = BM25_K1, b: float = BM25_B) -> None:
        self.k1 = k1
        self.b = b
        self._postings: dict[str, dict[int, int]] = {}
        self._arrays: dict[str, _Postings] = {}
        self._docs: dict[int, Counter[str]] = {}
        self._lengths: npt.NDArray[np.float32] = np.zeros(16, dtype=np.float32)
        self._total = 0

    def __len__(self) -> int:
        return len(self._docs)

    def set(self, slot: int, terms: Sequence[str]) -> None:
        """Index ``terms`` as the document at ``slot``, replacing what was there."""
        self.remove(slot)
        counts = Counter(terms)
        self._docs[slot] = counts
        if slot >= len(self._lengths):
            grown = np.zeros(max(slot + 1, 2 * len(self._lengths)), dtype=np.float32)
            grown[: len(self._lengths)] = self._lengths
            self._lengths = grown
        self._lengths[slot] = len(terms)
        self._total += len(terms)
        for term, tf in counts.items():
            self._postings.setdefault(term, {})[slot] = tf
            self._arrays.pop(term, None)

    def remove(self, slot: int) -> None:
        """Forget the document at ``slot`` (nothing happens if there is none)."""
        counts = self._docs.pop(slot, None)
        if counts is None:
            return
        self._total -= int(self._lengths[slot])
        self._lengths[slot] = 0
        for term in counts:
            posting = self._postings[term]
            del posting[slot]
            if not posting:
                del self._postings[term]
            self._arrays.pop(term, None)

    def _posting_arrays(self, term: str) -> _Postings | None:
        cached = self._arrays.get(term)
        if cached is None:
            posting = self._postings.get(term)
            if posting is None:
                return None
            slots = np.fromiter(posting.keys(), dtype=np.intp, count=len(posting))
            tfs = np.fromiter(posting.values(), dtype=np.float32, count=len(posting))
            cached = self._arrays[term] = (slots, tfs)
        return cached

    def scores(self, terms: Sequence[str], size: int) -> npt.NDArray[np.float32]:
        """BM25 scores of every slot below ``size`` for a query of ``terms`` (0 where a
        slot is empty or shares no term)."""
        out = np.zeros(size, dtype=np.float32)
        n = len(self._docs)
        if not n or not terms:
            return out
        average = self._total / n or 1.0
        lengths = self._lengths
        for term, qtf in Counter(terms).items():
            found = self._posting_arrays(term)
            if found is None:
                continue
            slots, tfs = found
            keep = slots < size
            slots, tfs = slots[keep], tfs[keep]
            df = len(self._postings[term])
            weight = idf(df, n)
            norm = self.k1 * (1.0 - self.b + self.b * lengths[slots] / average)
            out[slots] += qtf * weight * tfs * (self.k1 + 1.0) / (tfs + norm)
        return out
