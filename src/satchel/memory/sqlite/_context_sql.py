"""Blocking SQL for neighbouring-entry context (:mod:`satchel.memory._context_window`):
which rows sit just before and after each candidate in its owner's sequence, and the
coverage shares that count the terms they lend.

:func:`context_shares` reads neighbours lazily: the BM25 candidates' neighbours
(which join the candidates) always, every other candidate's only where
:func:`~satchel.memory._context_window.could_gain` says they could change the top
results, and a cosine only for a pair where the neighbour holds a query term the
entry lacks (no other pair changes a share). The shares that decide the results are
those reading every neighbour would give; ``tests/memory/test_search_context_lazy.py``
compares the two on LoCoMo."""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np
import numpy.typing as npt

from satchel.memory._context_window import context_coverage, could_gain
from satchel.memory.sqlite._messages import BLOCKS
from satchel.memory.sqlite._rows import placeholders
from satchel.memory.sqlite._search_sql import keep_matching, term_statistics
from satchel.memory.sqlite._term_match import matched_terms
from satchel.retrieval import AnnIndex, term_coverage

__all__ = ["ContextQuery", "closeness", "context_shares", "neighbour_pks"]

_BLOCK_NEIGHBOURS = """
    SELECT b.pk,
        (SELECT max(x.pk) FROM blocks AS x
            WHERE x.agent_id = b.agent_id AND x.kind = 'archival' AND x.pk < b.pk),
        (SELECT min(x.pk) FROM blocks AS x
            WHERE x.agent_id = b.agent_id AND x.kind = 'archival' AND x.pk > b.pk)
    FROM blocks AS b WHERE b.agent_id = ? AND b.kind = 'archival' AND b.pk IN ({marks})
"""

_MESSAGE_NEIGHBOURS = """
    SELECT m.pk,
        (SELECT x.pk FROM messages AS x
            WHERE x.agent_id = m.agent_id AND x.conversation_id IS m.conversation_id
            AND (x.created_at, x.pk) < (m.created_at, m.pk)
            ORDER BY x.created_at DESC, x.pk DESC LIMIT 1),
        (SELECT x.pk FROM messages AS x
            WHERE x.agent_id = m.agent_id AND x.conversation_id IS m.conversation_id
            AND (x.created_at, x.pk) > (m.created_at, m.pk)
            ORDER BY x.created_at, x.pk LIMIT 1)
    FROM messages AS m WHERE +m.agent_id = ? AND m.pk IN ({marks})
"""
"""(``+m.agent_id``: each candidate is looked up by ``pk``, not found by reading every
message of the agent.)"""


def neighbour_pks(
    conn: sqlite3.Connection, domain: int, me: int, pks: Sequence[int]
) -> dict[int, tuple[int, ...]]:
    """The entries just before and after each of ``pks`` that agent id ``me`` owns.

    Archival blocks: the owner's previous and next archival block in insertion order.
    Messages: the previous and next message of the same conversation (``conversation_id``,
    ``NULL`` being one conversation) in ``created_at`` order, ties in insertion order.
    Rows ``me`` does not own (shared blocks) get no neighbours: another agent's entries
    never colour a search.
    """
    sql = _BLOCK_NEIGHBOURS if domain == BLOCKS else _MESSAGE_NEIGHBOURS
    out: dict[int, tuple[int, ...]] = {}
    for start in range(0, len(pks), 900):
        chunk = pks[start : start + 900]
        rows = conn.execute(sql.format(marks=placeholders(len(chunk))), (me, *chunk))
        for pk, before, after in rows:
            # Spelt out: a generator per row costs more than the lookup itself.
            if before is None:
                out[pk] = () if after is None else (after,)
            else:
                out[pk] = (before,) if after is None else (before, after)
    return out


def closeness(
    index: AnnIndex, around: Mapping[int, Sequence[int]]
) -> dict[int, list[tuple[int, float]]]:
    """Each row's neighbours with their cosine to it, from the domain's vector
    ``index`` (a pair where either row has no vector is left out)."""
    wanted = np.asarray(sorted(set(around) | {n for ns in around.values() for n in ns}), np.int64)
    ids, matrix = index.vectors(wanted)
    if len(ids) == 0:
        return {}
    row = {int(item): position for position, item in enumerate(ids.tolist())}
    pairs = [(pk, n) for pk, ns in around.items() if pk in row for n in ns if n in row]
    left = np.fromiter((row[pk] for pk, _ in pairs), np.int64, len(pairs))
    right = np.fromiter((row[n] for _, n in pairs), np.int64, len(pairs))
    cosines = np.einsum("ij,ij->i", matrix[left], matrix[right]).tolist()
    out: dict[int, list[tuple[int, float]]] = {pk: [] for pk in around if pk in row}
    for (pk, n), cosine in zip(pairs, cosines, strict=True):
        out[pk].append((n, float(cosine)))
    return out


@dataclass(kw_only=True, frozen=True)
class ContextQuery:
    """One domain's part of a hybrid search, as :func:`context_shares` needs it.

    Attributes:
        domain: ``BLOCKS`` or ``MESSAGES``.
        me: The searching agent's id.
        query: The query's unit vector.
        where: The scope and filter clause (see ``filter_clause``) and its
            ``params``.
        params: Its parameters.
        terms: Every query term.
        counts: Match counts ``bm25_query`` already took.
        weight: The neighbour weight of this domain.
        lend_share: The most entries (as a share) a term a neighbour lends may be in.
        vector_weight: The cosine's weight in the fusion.
        limit: How many results the search returns.
    """

    domain: int
    me: int
    query: npt.NDArray[np.float32]
    where: str
    params: list[Any]
    terms: Sequence[str]
    counts: Mapping[str, int] | None
    weight: float
    lend_share: float
    vector_weight: float
    limit: int


def context_shares(
    conn: sqlite3.Connection,
    index: AnnIndex,
    ask: ContextQuery,
    lexical: Mapping[int, float],
    semantic: dict[int, float],
) -> dict[int, float]:
    """Coverage shares with neighbouring-entry context for both sides' candidates
    and the BM25 candidates' neighbours that pass the filters (those join the
    candidates: their cosines are added to ``semantic``).

    An entry :func:`~satchel.memory._context_window.could_gain` leaves out keeps its
    own share, which is below the top ``limit`` either way."""
    around = neighbour_pks(conn, ask.domain, ask.me, list(lexical))
    pool = list(dict.fromkeys([*lexical, *semantic]))
    seen = set(pool)
    fresh = list(dict.fromkeys(n for pk in lexical for n in around.get(pk, ()) if n not in seen))
    keep = keep_matching(conn, ask.domain, fresh, ask.where, ask.params)
    extra = [pk for pk in fresh if pk in keep]
    if extra:
        ids, scores = index.scores_for(ask.query, np.asarray(extra, np.int64))
        semantic.update(zip(ids.tolist(), scores.tolist(), strict=True))
        pool += extra
    frequency, documents = term_statistics(conn, ask.domain, ask.terms, ask.counts)
    present = [term for term in ask.terms if frequency[term] > 0]
    if not present:
        return dict.fromkeys(pool, 0.0)
    matched = matched_terms(conn, ask.domain, present, pool)
    own = {pk: matched[pk] for pk in pool}
    shares = term_coverage(own, frequency, documents)
    bound = partial(
        could_gain,
        own,
        shares,
        frequency,
        documents,
        ask.weight,
        vector=semantic,
        vector_weight=ask.vector_weight,
        limit=ask.limit,
        lend_share=ask.lend_share,
    )
    wanted = bound()
    around.update(
        neighbour_pks(conn, ask.domain, ask.me, [pk for pk in wanted if pk not in around])
    )
    near = sorted({n for pk in wanted for n in around.get(pk, ())}.difference(matched))
    if near:
        matched.update(matched_terms(conn, ask.domain, present, near))
    lendable = {pk: {t for n in around.get(pk, ()) for t in matched[n]} for pk in wanted}
    wanted = bound(lendable=lendable)
    lending = {
        pk: [n for n in around.get(pk, ()) if set(matched[n]).difference(own[pk])] for pk in wanted
    }
    close = closeness(index, {pk: ns for pk, ns in lending.items() if ns})
    nearby = {pk: [(matched[n], c) for n, c in close.get(pk, ())] for pk in wanted}
    shares.update(
        context_coverage(
            {pk: own[pk] for pk in wanted},
            nearby,
            frequency,
            documents,
            ask.weight,
            ask.lend_share,
        )
    )
    return shares
