"""Neighbouring-entry context in hybrid search (issue 15 §5), on both backends, with
the real local embedder: a turn is read with the turns around it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from satchel.embed import default_embedder
from satchel.memory import (
    BlockKind,
    Domain,
    GatedStore,
    MemoryStore,
    Permission,
    SearchFilters,
    SearchHit,
)
from satchel.memory._context_window import DEFAULT_NEIGHBOURS, NO_NEIGHBOURS, context_coverage
from satchel.retrieval import NEIGHBOUR_LEND_SHARE, term_coverage

from .conftest import StoreFactory

pytestmark = pytest.mark.anyio

START = datetime(2024, 3, 2, 18, 0, tzinfo=UTC)

# The answer ("a little blue bowl") is in a reply that names neither the pottery nor
# the workshop: only the question before it does.
QUESTION_TURN = "Did you finally go to that pottery workshop in Leeds on Saturday?"
ANSWER_TURN = "Yes! It was so much fun, I came home with a little blue bowl for my mum."
FILLER = [
    "The weather has been awful all week, rain every single day.",
    "Work is busy, we are launching the new payroll system next month.",
    "I started reading a novel about a lighthouse keeper.",
    "My brother is moving to Spain with his family in the summer.",
    "We should try the new Thai place near the station.",
    "I have a dentist appointment on Tuesday morning.",
    "The kids want a puppy but the flat is too small.",
    "I finally fixed the leaking tap in the bathroom.",
    "Are you still training for the half marathon?",
    "My laptop battery barely lasts an hour now.",
    "We watched a documentary about octopuses last night.",
    "The garden needs weeding before the party.",
    "I am thinking about learning Italian this year.",
    "The train was cancelled again this morning.",
    "Let us plan a picnic when the sun comes back.",
    "Did you see the football match on Sunday?",
    # Decoys: each names one of the question's words, in another sense.
    "The car is back at the workshop, the brakes keep squeaking.",
    "My aunt sells her pottery at the Sunday market.",
    "There is a writing workshop at the library in Leeds next week.",
    "I watched a video about Japanese pottery glazes.",
]
ASKED = "What did I make at the pottery workshop?"


def rank_of(hits: list[SearchHit], text: str) -> int:
    """The 1-based rank of the hit with ``text``, or one past the end."""
    return next((i for i, h in enumerate(hits, start=1) if h.text == text), len(hits) + 1)


def gated(store: MemoryStore) -> GatedStore:
    assert isinstance(store, GatedStore)
    return store


async def conversation(store: MemoryStore, *, split: bool = False) -> None:
    """The filler chat with the question and its answer in the middle, a turn every
    minute; with ``split`` the answer sits in another conversation."""
    turns = [*FILLER[:8], QUESTION_TURN, ANSWER_TURN, *FILLER[8:]]
    for minute, text in enumerate(turns):
        await store.add_message(
            "me",
            "user" if minute % 2 == 0 else "assistant",
            text,
            conversation_id="other" if split and text == ANSWER_TURN else "default",
            created_at=START + timedelta(minutes=minute),
        )


async def search_both(store: MemoryStore, domain: Domain, **options: object) -> tuple[int, int]:
    """The answer's rank with neighbour context, then without it."""
    with_context = await store.search("me", ASKED, domains=domain, limit=20, **options)  # type: ignore[arg-type]
    gated(store).neighbours = NO_NEIGHBOURS
    without = await store.search("me", ASKED, domains=domain, limit=20, **options)  # type: ignore[arg-type]
    gated(store).neighbours = DEFAULT_NEIGHBOURS
    return rank_of(with_context, ANSWER_TURN), rank_of(without, ANSWER_TURN)


async def test_a_reply_is_found_through_the_question_before_it(make_store: StoreFactory) -> None:
    store = await make_store(embedder=default_embedder())
    await conversation(store)
    found, before = await search_both(store, Domain.CONVERSATIONS)
    assert found < before


async def test_an_archival_note_is_found_through_the_note_saved_before_it(
    make_store: StoreFactory,
) -> None:
    # 62 notes: "pottery" and "workshop" are each in 3, rare enough (under 1 in 20)
    # for the question's note to lend them to the answer saved after it.
    store = await make_store(embedder=default_embedder())
    earlier = [f"Note {i}: {FILLER[i % 16]}" for i in range(40)]
    turns = [*earlier, *FILLER[:8], QUESTION_TURN, ANSWER_TURN, *FILLER[8:]]
    for number, text in enumerate(turns, start=1):
        await store.create_block("me", f"note-{number}", text, kind=BlockKind.ARCHIVAL)
    found, before = await search_both(store, Domain.ARCHIVAL_MEMORY)
    assert found < before


async def test_a_small_archive_lends_no_common_word(make_store: StoreFactory) -> None:
    # 22 notes: "pottery" and "workshop" are in 3 each (over 1 in 20), so the answer's
    # neighbour lends it nothing, as in a personal-facts store where side-by-side facts
    # are unrelated; the same words in a conversation are lent (the first test).
    store = await make_store(embedder=default_embedder())
    turns = [*FILLER[:8], QUESTION_TURN, ANSWER_TURN, *FILLER[8:]]
    for number, text in enumerate(turns, start=1):
        await store.create_block("me", f"note-{number}", text, kind=BlockKind.ARCHIVAL)
    with_context = await store.search("me", ASKED, domains=Domain.ARCHIVAL_MEMORY, limit=20)
    gated(store).neighbours = NO_NEIGHBOURS
    without = await store.search("me", ASKED, domains=Domain.ARCHIVAL_MEMORY, limit=20)
    assert rank_of(with_context, ANSWER_TURN) == rank_of(without, ANSWER_TURN)
    assert [h.text for h in with_context][:3] == [h.text for h in without][:3]


async def test_another_conversation_lends_no_context(make_store: StoreFactory) -> None:
    store = await make_store(embedder=default_embedder())
    await conversation(store, split=True)
    found, before = await search_both(store, Domain.CONVERSATIONS)
    assert found == before


async def test_bm25_and_vector_modes_ignore_neighbours(make_store: StoreFactory) -> None:
    store = await make_store(embedder=default_embedder())
    await conversation(store)
    for mode in ("bm25", "vector"):
        found, before = await search_both(store, Domain.CONVERSATIONS, mode=mode)
        assert found == before


async def test_a_neighbour_that_fails_the_filters_is_never_returned(
    make_store: StoreFactory,
) -> None:
    # The answer is an assistant turn; asking for user turns only must not let it in
    # as a neighbour of the user's question.
    store = await make_store(embedder=default_embedder())
    await conversation(store)
    hits = await store.search(
        "me", ASKED, domains=Domain.CONVERSATIONS, limit=20, filters=SearchFilters(role="user")
    )
    assert hits
    assert all(h.role == "user" for h in hits)
    assert ANSWER_TURN not in [h.text for h in hits]


async def test_another_agents_shared_note_takes_no_context_from_its_owner(
    make_store: StoreFactory,
) -> None:
    # Bob's notes around the shared one are not shared: they must not colour Ada's
    # search, so the shared note scores as it would with context off.
    store = await make_store(embedder=default_embedder())
    await store.create_block("bob", "q", QUESTION_TURN, kind=BlockKind.ARCHIVAL)
    shared = await store.create_block("bob", "a", ANSWER_TURN, kind=BlockKind.ARCHIVAL)
    await store.create_block("bob", "z", FILLER[0], kind=BlockKind.ARCHIVAL)
    await store.share_block("bob", shared.label, "ada", Permission.READ_ONLY)
    for number, text in enumerate(FILLER[1:6], start=1):
        await store.create_block("ada", f"note-{number}", text, kind=BlockKind.ARCHIVAL)
    with_context = await store.search("ada", ASKED, domains=Domain.ARCHIVAL_MEMORY)
    gated(store).neighbours = NO_NEIGHBOURS
    without = await store.search("ada", ASKED, domains=Domain.ARCHIVAL_MEMORY)
    assert [(h.text, round(h.score, 6)) for h in with_context] == [
        (h.text, round(h.score, 6)) for h in without
    ]
    assert ANSWER_TURN in [h.text for h in with_context]
    assert QUESTION_TURN not in [h.text for h in with_context]


async def test_deleting_a_neighbour_leaves_search_consistent(make_store: StoreFactory) -> None:
    store = await make_store(embedder=default_embedder())
    for number, text in enumerate([QUESTION_TURN, ANSWER_TURN, *FILLER[:4]], start=1):
        await store.create_block(
            "me", f"note-{number}", text, kind=BlockKind.ARCHIVAL, permission=Permission.ADMIN
        )
    await store.delete_block("me", "note-1")
    hits = await store.search("me", ASKED, domains=Domain.ARCHIVAL_MEMORY)
    assert QUESTION_TURN not in [h.text for h in hits]
    assert ANSWER_TURN in [h.text for h in hits]


# --- the pure scoring ------------------------------------------------------------------

TERMS = st.sampled_from(["ada", "job", "tea", "kyoto", "cello"])
TERM_SETS = st.lists(TERMS, max_size=5)


@given(
    own=st.dictionaries(st.integers(0, 5), TERM_SETS, min_size=1),
    around=st.dictionaries(
        st.integers(0, 5), st.lists(st.tuples(TERM_SETS, st.floats(-1.0, 1.0)), max_size=2)
    ),
    frequency=st.dictionaries(TERMS, st.integers(0, 20).map(float), min_size=1),
    weight=st.floats(0.0, 1.0),
)
def test_context_coverage_lies_between_own_coverage_and_one(
    own: dict[int, list[str]],
    around: dict[int, list[tuple[list[str], float]]],
    frequency: dict[str, float],
    weight: float,
) -> None:
    documents = 20.0
    plain = term_coverage(own, frequency, documents)
    context = context_coverage(own, around, frequency, documents, weight)
    off = context_coverage(own, around, frequency, documents, 0.0)
    assert context.keys() == plain.keys()
    for key in own:
        assert plain[key] - 1e-9 <= context[key] <= 1.0
        assert off[key] == pytest.approx(plain[key])


def test_a_closer_neighbour_lends_more_and_own_terms_count_fully() -> None:
    frequency = {"ada": 1.0, "job": 1.0}
    own = {"a": ["ada"], "b": ["ada"], "c": ["ada", "job"]}
    around = {"a": [(["job"], 0.9)], "b": [(["job"], 0.3)], "c": [(["job"], 0.1)]}
    cover = context_coverage(own, around, frequency, 10, 0.75, lend_share=1.0)
    assert cover["a"] > cover["b"] > term_coverage({"x": ["ada"]}, frequency, 10)["x"]
    assert cover["c"] == pytest.approx(1.0)


def test_only_a_term_rare_enough_is_lent() -> None:
    own = {"a": ["ada"]}
    around = {"a": [(["job", "tea"], 1.0)]}
    frequency = {"ada": 1.0, "job": 5.0, "tea": 6.0}  # of 100 entries
    plain = term_coverage(own, frequency, 100)["a"]
    both = context_coverage(own, around, frequency, 100, 1.0, lend_share=0.06)["a"]
    job_only = context_coverage(own, around, frequency, 100, 1.0, lend_share=0.05)["a"]
    none = context_coverage(own, around, frequency, 100, 1.0, lend_share=0.04)["a"]
    assert both == pytest.approx(1.0)
    assert plain < job_only < both
    assert none == pytest.approx(plain)


def test_archival_entries_lend_rare_terms_and_messages_any_by_default() -> None:
    assert DEFAULT_NEIGHBOURS.of(archival=False) == (1.0, 1.0)
    assert DEFAULT_NEIGHBOURS.of(archival=True) == (1.0, NEIGHBOUR_LEND_SHARE)
    assert NO_NEIGHBOURS.of(archival=True)[0] == NO_NEIGHBOURS.of(archival=False)[0] == 0.0
