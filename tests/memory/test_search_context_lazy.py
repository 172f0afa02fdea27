"""Hybrid search reads neighbouring entries only where they can change the results
(:func:`~satchel.memory._context_window.could_gain`): the hits must be exactly those of
reading every candidate's neighbours, on a real conversation (LoCoMo) stored as
messages and as archival entries. SQLite only: the PostgreSQL backend reads every
candidate's neighbours in its SQL and does not use the bound."""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Hashable, Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, TypeVar

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from satchel.memory import BlockKind, Domain, MemoryStore, Neighbours, SearchHit, SQLiteStore
from satchel.memory._context_window import context_coverage, could_gain
from satchel.memory.sqlite import _context_sql
from satchel.retrieval import term_coverage

from .conftest import HashEmbedder

pytestmark = pytest.mark.anyio

_K = TypeVar("_K", bound=Hashable)

LOCOMO = next(
    (
        p / "shared" / "data" / "locomo" / "locomo.dev.json"
        for p in Path(__file__).resolve().parents
        if (p / "shared" / "data" / "locomo" / "locomo.dev.json").is_file()
    ),
    None,
)
FACTS = Path(__file__).parent / "data" / "personal_facts.json"


def conversation() -> tuple[list[tuple[str, datetime]], list[str]]:
    """The turns (text, time) and questions of LoCoMo's first dev conversation, or,
    where the benchmark data is not beside the checkout, the personal facts said one
    after another and their questions."""
    if LOCOMO is None:
        people = json.loads(FACTS.read_text())["people"]
        start = datetime(2024, 5, 1, 9, 0, tzinfo=UTC)
        said = [(f"{p['name']}: {f['fact']}", f["question"]) for p in people for f in p["facts"]]
        turns = [(text, start + timedelta(seconds=10 * i)) for i, (text, _) in enumerate(said)]
        return turns, [question for _, question in said]
    sample = json.loads(LOCOMO.read_text())[0]
    talk = sample["conversation"]
    turns: list[tuple[str, datetime]] = []
    for key, session in talk.items():
        if not re.fullmatch(r"session_\d+", key) or not isinstance(session, list):
            continue
        start = datetime.strptime(talk[f"{key}_date_time"], "%I:%M %p on %d %B, %Y")
        for position, turn in enumerate(session):
            when = start.replace(tzinfo=UTC) + timedelta(seconds=10 * position)
            turns.append((f"{turn['speaker']}: {turn['text']}", when))
    questions = [qa["question"] for qa in sample["qa"]]
    return turns, questions


def read_every(
    own: Mapping[_K, Collection[str]],
    alone: Mapping[_K, float],
    document_frequency: Mapping[str, float],
    documents: float,
    weight: float,
    **rest: Any,
) -> list[_K]:
    """The straightforward reading: every candidate's neighbours are read."""
    lendable: Mapping[_K, Collection[str]] | None = rest.get("lendable")
    return list(own) if lendable is None else list(lendable)


def fingerprint(hits: list[SearchHit]) -> list[tuple[Any, ...]]:
    return [(h.id, h.score, h.bm25_rank, h.vector_rank, h.bm25_score, h.vector_score) for h in hits]


async def loaded(path: Path) -> MemoryStore:
    store = await SQLiteStore.open(path, embedder=HashEmbedder())
    turns, _ = conversation()
    for position, (text, when) in enumerate(turns):
        role = "user" if position % 2 == 0 else "assistant"
        await store.add_message("me", role, text, created_at=when)
        await store.create_block("me", f"turn-{position}", text, kind=BlockKind.ARCHIVAL)
    return store


@pytest.mark.parametrize("domain", [Domain.CONVERSATIONS, Domain.ARCHIVAL_MEMORY, Domain.ALL])
async def test_lazy_neighbours_give_the_hits_of_reading_every_neighbour(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, domain: Domain
) -> None:
    store = await loaded(tmp_path / "locomo.db")
    _, questions = conversation()
    asks = [(q, limit) for q in questions[:60] for limit in (1, 5, 10)]
    for weights in (Neighbours(), Neighbours(messages=0.5, archival=1.0)):
        store.neighbours = weights  # type: ignore[attr-defined]
        lazy = [
            fingerprint(await store.search("me", q, domains=domain, limit=limit))
            for q, limit in asks
        ]
        with monkeypatch.context() as patch:
            patch.setattr(_context_sql, "could_gain", read_every)
            full = [
                fingerprint(await store.search("me", q, domains=domain, limit=limit))
                for q, limit in asks
            ]
        assert lazy == full
        assert sum(len(hits) for hits in lazy) > 0.9 * sum(limit for _, limit in asks)
    await store.close()


@st.composite
def candidates(draw: st.DrawFn) -> dict[str, Any]:
    terms = draw(st.lists(st.sampled_from("abcdefg"), min_size=1, max_size=5, unique=True))
    frequency = {t: draw(st.integers(0, 30)) for t in terms}
    keys = [f"e{i}" for i in range(draw(st.integers(1, 25)))]
    # An entry can only hold a term some entry holds (document frequency above 0).
    held = [t for t in terms if frequency[t] > 0] or [""]
    some = st.lists(st.sampled_from(held), max_size=len(held), unique=True).map(
        lambda found: [t for t in found if t]
    )
    return {
        "frequency": frequency,
        "own": {k: draw(some) for k in keys},
        "around": {k: draw(st.lists(st.tuples(some, st.floats(-1, 1)), max_size=2)) for k in keys},
        "vector": {k: draw(st.floats(-1, 1)) for k in keys},
        "weight": draw(st.sampled_from([0.25, 0.5, 1.0])),
        "limit": draw(st.integers(1, 12)),
    }


@settings(max_examples=300, deadline=None)
@given(candidates())
def test_entries_could_gain_leaves_out_never_reach_the_top(case: dict[str, Any]) -> None:
    own, around, vector = case["own"], case["around"], case["vector"]
    frequency, weight, limit = case["frequency"], case["weight"], case["limit"]
    documents = 30.0
    alone = term_coverage(own, frequency, documents)
    first = could_gain(
        own, alone, frequency, documents, weight, vector=vector, vector_weight=0.5, limit=limit
    )
    lendable = {k: {t for terms, _ in around[k] for t in terms} for k in first}
    second = could_gain(
        own,
        alone,
        frequency,
        documents,
        weight,
        vector=vector,
        vector_weight=0.5,
        limit=limit,
        lendable=lendable,
    )
    every = context_coverage(own, around, frequency, documents, weight)
    lazy = {
        **alone,
        **context_coverage({k: own[k] for k in second}, around, frequency, documents, weight),
    }

    def top(coverage: Mapping[str, float]) -> list[tuple[str, float]]:
        fused = {k: 0.5 * coverage[k] + 0.5 * vector[k] for k in own}
        return sorted(fused.items(), key=lambda item: -item[1])[:limit]

    assert top(lazy) == top(every)
    assert set(second) <= set(first)
    assert all(lazy[k] == every[k] for k in second)
