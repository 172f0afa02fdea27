"""Neighbouring-entry context for coverage fusion: a turn is read with the turns around it.

In a conversation the words that answer a question are often split over two turns:
"What did Caroline research?" is answered by Caroline's "Researching adoption
agencies", right after Melanie asked about her plans, or by a reply ("That's great!
What made you choose them?") to the turn that names the subject. Scored alone, the turn
that holds the answer lacks half the question's rare words.

So coverage fusion (:func:`~satchel.memory._fusion.term_coverage`) reads every candidate
with its *neighbours*: the entry just before and just after it in its owner's sequence
(messages: the same conversation in time order; archival entries: insertion order). A
query term that the entry lacks but a neighbour contains counts
:data:`NEIGHBOUR_WEIGHT` of its IDF weight instead of nothing; a term in the entry
itself counts fully, as before. Neighbours of the BM25 candidates join the candidates,
so a turn whose own words miss the query but whose neighbour matches can be found.

Measured on LoCoMo dev (``bench/memory_recall_experiments.py`` replays the search
offline; ``bench/README.md`` has the store's figures): recall@10 0.704 → 0.772 with
each conversation as a store, 0.671 → 0.771 with both in one file. Adding the
neighbours' scores afterwards (score smoothing), embedding a turn with its neighbours'
text, or counting neighbour terms fully were measured too and are in the README.

Pure functions, no store and no SQL.
"""

from __future__ import annotations

from collections.abc import Collection, Hashable, Mapping, Sequence
from typing import TypeVar

from satchel.memory._fusion import idf

__all__ = ["NEIGHBOUR_WEIGHT", "context_coverage"]

_K = TypeVar("_K", bound=Hashable)

NEIGHBOUR_WEIGHT = 0.75
"""The share of a query term's IDF weight an entry gets when only a neighbour contains
the term (0 turns neighbour context off)."""


def context_coverage(
    own: Mapping[_K, Collection[str]],
    around: Mapping[_K, Sequence[tuple[Collection[str], float]]],
    document_frequency: Mapping[str, float],
    documents: float,
    weight: float = NEIGHBOUR_WEIGHT,
) -> dict[_K, float]:
    """Each entry's share of the query's IDF mass, in [0, 1], counting a term only its
    neighbours contain at ``weight`` times the closest such neighbour's closeness.

    With ``weight`` 0 (or no neighbour terms) this is exactly
    :func:`~satchel.memory._fusion.term_coverage`.

    Args:
        own: The query terms each entry contains.
        around: Each entry's neighbours, as (the query terms the neighbour contains,
            its closeness to the entry: their cosine, clamped to [0, 1]); a missing
            key: none.
        document_frequency: Every query term's document frequency (0 for a term in no
            entry); its keys are the query's terms.
        documents: How many entries there are.
        weight: The most a neighbour's term counts, in [0, 1].

    Example:
        >>> cover = context_coverage(
        ...     {"a": ["ada"], "b": ["ada"]}, {"a": [(["job"], 1.0)], "b": [(["job"], 0.5)]},
        ...     {"ada": 1, "job": 1}, 10, weight=0.5,
        ... )
        >>> round(cover["a"], 3), round(cover["b"], 3)
        (0.75, 0.625)
    """
    weights = {term: idf(df, documents) for term, df in document_frequency.items()}
    total = sum(weights.values())
    if total <= 0:
        return dict.fromkeys(own, 0.0)
    out: dict[_K, float] = {}
    for key, terms in own.items():
        inside = set(terms)
        mass = sum(weights.get(term, 0.0) for term in inside)
        near: dict[str, float] = {}
        for found, closeness in around.get(key, ()):
            share = min(1.0, max(0.0, closeness))
            for term in set(found) - inside:
                near[term] = max(near.get(term, 0.0), share)
        mass += weight * sum(weights.get(term, 0.0) * share for term, share in near.items())
        out[key] = min(1.0, mass / total)
    return out
