"""Neighbouring-entry context for coverage fusion: a turn is read with the turns around it.

In a conversation the words that answer a question are often split over two turns:
"What did you make at the pottery workshop?" is answered by "I came home with a little
blue bowl", right after the turn that named the workshop. Scored alone, the turn that
holds the answer lacks the question's rare words.

So coverage fusion (:func:`~satchel.retrieval.term_coverage`) reads every candidate
with its *neighbours*: the entry just before and just after it in its owner's sequence
(messages: the same conversation in time order; archival entries: the owner's archival
entries in insertion order; another agent's shared entry gets none). A query term that
the entry lacks but a neighbour contains counts ``weight x cosine(entry, neighbour)``
of its IDF weight instead of nothing; a term in the entry itself counts fully, as
before. Neighbours of the BM25 candidates join the candidates, so a turn whose own words
miss the query but whose neighbour matches can be found. The weight is 1.0 in both
domains (:class:`Neighbours`); a neighbouring archival entry lends only a *rare* term,
one that at most :data:`~satchel.retrieval.NEIGHBOUR_LEND_SHARE` (1 in 20) of the
archival entries hold.

Why the cosine, and why rare terms for archival entries. Counting neighbour terms at a
flat 0.5 lifted LoCoMo as much, but in a personal-facts store (unrelated facts that
happen to sit side by side) it lent a wrong lead's words to the facts beside it and
cost questions their top-3 place. Adjacent conversation turns are close in meaning
(median cosine 0.54 on LoCoMo), two unrelated facts about one person less so (0.41).
The cosine alone still let a fact borrow a word that many facts hold ("live" for
"living"); a word that 1 in 20 entries or more hold says little about which entry
answers. Archival entries sit side by side only by when they were saved, so they lend
rare words only (in a store of fewer than 20 entries none is that rare, so small
archives rank as without neighbours); messages answer one another, and limiting them
the same way cost small conversations (14-39 turns) 0.03 of recall@10.
Figures, variants and commands are in ``bench/README.md`` (offline replay:
``bench/memory_recall_experiments.py``).

Reading neighbours costs more than the rest of a hybrid search (their rows, terms and
vectors), so a backend reads them only for the candidates :func:`could_gain` names:
those that lack some query term and could, even if every neighbour lent every missing
term at full closeness, still reach the search's top ``limit``. The others keep their
own coverage, which cannot change the top ``limit`` (it only leaves out scores below it).

Pure functions, no store and no SQL.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Collection, Hashable, Mapping, Sequence
from typing import TypeVar

from pydantic import BaseModel, ConfigDict, Field

from satchel.retrieval import NEIGHBOUR_LEND_SHARE, idf

__all__ = [
    "DEFAULT_NEIGHBOURS",
    "NO_NEIGHBOURS",
    "Neighbours",
    "context_coverage",
    "could_gain",
]

_K = TypeVar("_K", bound=Hashable)


class Neighbours(BaseModel):
    """How much a query term that only a candidate's neighbouring entry contains
    counts in coverage fusion: this weight times the neighbour's cosine to the entry
    (0 turns neighbour context off for that domain).

    Attributes:
        messages: For conversation messages (neighbours: the same conversation's
            previous and next message in time).
        archival: For archival entries (neighbours: the owner's previous and next
            archival entry in insertion order).
        messages_lend_share: A neighbouring message lends only a query term that at
            most this share of the messages hold (1.0, the default: any term).
        archival_lend_share: A neighbouring archival entry lends only a query term that
            at most this share of the archival entries hold (default
            :data:`~satchel.retrieval.NEIGHBOUR_LEND_SHARE`, 0.05).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    messages: float = Field(default=1.0, ge=0.0, le=1.0)
    archival: float = Field(default=1.0, ge=0.0, le=1.0)
    messages_lend_share: float = Field(default=1.0, ge=0.0, le=1.0)
    archival_lend_share: float = Field(default=NEIGHBOUR_LEND_SHARE, ge=0.0, le=1.0)

    def of(self, archival: bool) -> tuple[float, float]:
        """``(weight, lend share)`` for archival entries or for messages."""
        if archival:
            return self.archival, self.archival_lend_share
        return self.messages, self.messages_lend_share


DEFAULT_NEIGHBOURS = Neighbours()
"""What satchel uses unless told otherwise: weight 1.0 in both domains; messages lend any
term, archival entries only rare ones (see the module doc and ``bench/README.md``)."""

NO_NEIGHBOURS = Neighbours(messages=0.0, archival=0.0)
"""Neighbour context off: coverage fusion as before issue 15."""


def context_coverage(
    own: Mapping[_K, Collection[str]],
    around: Mapping[_K, Sequence[tuple[Collection[str], float]]],
    document_frequency: Mapping[str, float],
    documents: float,
    weight: float = 1.0,
    lend_share: float = NEIGHBOUR_LEND_SHARE,
) -> dict[_K, float]:
    """Each entry's share of the query's IDF mass, in [0, 1], counting a rare term only
    its neighbours contain at ``weight`` times the closest such neighbour's closeness.

    With ``weight`` 0 (or no neighbour terms) this is exactly
    :func:`~satchel.retrieval.term_coverage`.

    Args:
        own: The query terms each entry contains.
        around: Each entry's neighbours, as (the query terms the neighbour contains,
            its closeness to the entry: their cosine, clamped to [0, 1]); a missing
            key: none.
        document_frequency: Every query term's document frequency (0 for a term in no
            entry); its keys are the query's terms.
        documents: How many entries there are.
        weight: The most a neighbour's term counts, in [0, 1].
        lend_share: A neighbour lends only a term held by at most this share of the
            ``documents``.

    Example:
        >>> cover = context_coverage(
        ...     {"a": ["ada"], "b": ["ada"]}, {"a": [(["job"], 1.0)], "b": [(["job"], 0.5)]},
        ...     {"ada": 1, "job": 1}, 100, weight=0.5,
        ... )
        >>> round(cover["a"], 3), round(cover["b"], 3)
        (0.75, 0.625)
        >>> frequency = {"ada": 1, "job": 10}  # "job" is in a tenth of 100 entries
        >>> common = context_coverage({"a": ["ada"]}, {"a": [(["job"], 1.0)]}, frequency, 100)
        >>> round(common["a"], 3)  # not lent: only "ada" counts
        0.65
    """
    weights = {term: idf(df, documents) for term, df in document_frequency.items()}
    total = sum(weights.values())
    if total <= 0:
        return dict.fromkeys(own, 0.0)
    lendable = {t for t, df in document_frequency.items() if df <= lend_share * documents}
    out: dict[_K, float] = {}
    for key, terms in own.items():
        inside = set(terms)
        near: dict[str, float] = {}
        for found, closeness in around.get(key, ()):
            share = min(1.0, max(0.0, closeness))
            for term in lendable.intersection(found) - inside:
                near[term] = max(near.get(term, 0.0), share)
        # Both sums in the query's term order, so a score is the same to the last bit
        # in every process (a set's order follows the string hash seed).
        mass = sum(w for term, w in weights.items() if term in inside)
        mass += weight * sum(w * near[term] for term, w in weights.items() if term in near)
        out[key] = min(1.0, mass / total)
    return out


_SLACK = 1e-9
"""Rounding room: an entry is left out only if even its bound (a sum taken in another
order than :func:`context_coverage` takes it) is below the threshold by more than this."""


def could_gain(
    own: Mapping[_K, Collection[str]],
    alone: Mapping[_K, float],
    document_frequency: Mapping[str, float],
    documents: float,
    weight: float,
    *,
    vector: Mapping[_K, float],
    vector_weight: float,
    limit: int,
    lendable: Mapping[_K, Collection[str]] | None = None,
    lend_share: float = 1.0,
) -> list[_K]:
    """The entries (keys of ``own``, in its order) whose neighbours could change the
    top ``limit`` of coverage fusion, ``(1 - vector_weight) * coverage + vector_weight
    * cosine``: those that lack a query term some entry holds and whose best possible
    score (every missing term lent at ``weight`` and full closeness) reaches the
    ``limit``-th best score without neighbours. Neighbour terms only ever add, so the
    ``limit`` entries with the best scores without them keep at least those scores,
    and every entry left out stays below all of them.

    Called twice by a backend: first before reading any neighbour (any term some entry
    holds could be lent), then with ``lendable``, the terms each remaining entry's
    neighbours hold, before reading their vectors.

    Args:
        own: The query terms each entry contains.
        alone: Each entry's coverage from its own terms
            (:func:`~satchel.retrieval.term_coverage` of ``own``).
        document_frequency: Every query term's document frequency, as for
            :func:`context_coverage`.
        documents: How many entries there are.
        weight: The most a neighbour's term counts, in [0, 1].
        vector: Each entry's cosine to the query (a missing key counts 0).
        vector_weight: The cosine's weight in the fusion.
        limit: How many results the search returns.
        lendable: The query terms each entry's neighbours hold, when known (an
            entry missing from it has nothing to gain).
        lend_share: Only a term held by at most this share of the ``documents`` can be
            lent (as for :func:`context_coverage`).

    Example:
        >>> from satchel.retrieval import term_coverage
        >>> own = {"a": ["ada", "job"], "b": ["ada"], "c": []}
        >>> frequency = {"ada": 1, "job": 1}
        >>> could_gain(
        ...     own, term_coverage(own, frequency, 10), frequency, 10, 0.5,
        ...     vector={"a": 0.9, "b": 0.2, "c": 0.1}, vector_weight=0.5, limit=2,
        ... )
        ['b']
    """
    weights = {term: idf(df, documents) for term, df in document_frequency.items()}
    total = sum(weights.values())
    if total <= 0 or weight <= 0:
        return []
    held = {term for term, df in document_frequency.items() if 0 < df <= lend_share * documents}
    keep, w = 1 - vector_weight, vector_weight
    floor = heapq.nlargest(
        limit, (keep * share + w * vector.get(key, 0.0) for key, share in alone.items())
    )
    threshold = floor[-1] if len(floor) >= limit else -math.inf
    out: list[_K] = []
    for key, terms in own.items():
        if lendable is None:
            missing = held.difference(terms)
        elif key in lendable:
            missing = held.intersection(lendable[key]).difference(terms)
        else:
            continue
        if not missing:
            continue
        best = min(1.0, alone[key] + weight * sum(weights[term] for term in missing) / total)
        if keep * best + w * vector.get(key, 0.0) + _SLACK >= threshold:
            out.append(key)
    return out
