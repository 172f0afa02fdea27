"""Contract: search serves the agent's own loop (issue 27): the turn in progress and tool
traffic are not hits, the lines of core and working blocks are, and relevance has a
floor."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from satchel.memory import (
    BlockKind,
    Domain,
    MemoryStore,
    Permission,
    SearchFilters,
    SearchHit,
    TurnInProgress,
    is_relevant,
)

pytestmark = pytest.mark.anyio

T0 = datetime(2026, 11, 1, tzinfo=UTC)
MODES = ["hybrid", "bm25", "vector"]


async def _say(
    store: MemoryStore,
    role: str,
    text: str,
    minutes: int,
    conversation: str = "c1",
    **metadata: object,
) -> None:
    await store.add_message(
        "ada",
        role,  # type: ignore[arg-type]
        text,
        conversation_id=conversation,
        created_at=T0 + timedelta(minutes=minutes),
        metadata=metadata or None,
    )


async def _told_and_asked(store: MemoryStore) -> None:
    """A fact told on an earlier turn, then the turn in progress that asks about it."""
    await _say(store, "user", "My zebra is called Stripes.", 0)
    await _say(
        store, "assistant", 'recall({"content": "zebra Stripes"})', 1, content_from_calls=True
    )
    await _say(store, "tool", '{"label": "archival_1", "zebra": "Stripes"}', 2)
    await _say(store, "assistant", "Noted, I will remember your zebra.", 3)
    await _say(store, "user", "What is my zebra called?", 10)  # the turn in progress
    await _say(store, "assistant", 'search({"query": "zebra name"})', 11, content_from_calls=True)


@pytest.mark.parametrize("mode", MODES)
async def test_tool_calls_and_results_are_left_out_unless_asked_for(
    store: MemoryStore, mode: str
) -> None:
    await _told_and_asked(store)
    plain = await store.search("ada", "zebra", domains=Domain.CONVERSATIONS, limit=50, mode=mode)  # type: ignore[arg-type]
    assert {h.role for h in plain} <= {"user", "assistant"}
    assert not any(h.metadata.get("content_from_calls") for h in plain)
    assert "Noted, I will remember your zebra." in {h.text for h in plain}
    traffic = await store.search(
        "ada",
        "zebra",
        domains=Domain.CONVERSATIONS,
        filters=SearchFilters(tool_traffic=True),
        limit=50,
        mode=mode,  # type: ignore[arg-type]
    )
    assert {h.role for h in traffic} == {"user", "assistant", "tool"}
    assert sum(bool(h.metadata.get("content_from_calls")) for h in traffic) == 2


async def test_the_tool_role_filter_finds_tool_results(store: MemoryStore) -> None:
    await _told_and_asked(store)
    hits = await store.search("ada", "zebra Stripes", filters=SearchFilters(role="tool"))
    assert [h.role for h in hits] == ["tool"]


@pytest.mark.parametrize("mode", MODES)
async def test_the_turn_in_progress_is_never_a_hit(store: MemoryStore, mode: str) -> None:
    await _told_and_asked(store)
    await _say(store, "user", "Another zebra question, in another chat?", 12, conversation="c2")
    turn = TurnInProgress(conversation_id="c1", started_at=T0 + timedelta(minutes=10))
    hits = await store.search(
        "ada",
        "What is my zebra called?",
        filters=SearchFilters(exclude_turn=turn),
        limit=50,
        mode=mode,  # type: ignore[arg-type]
    )
    texts = {h.text for h in hits}
    assert "What is my zebra called?" not in texts
    assert "My zebra is called Stripes." in texts
    assert "Another zebra question, in another chat?" in texts  # only that conversation


@pytest.mark.parametrize("mode", MODES)
async def test_leaving_out_a_long_turn_does_not_starve_the_limit(
    store: MemoryStore, mode: str
) -> None:
    for i in range(3):
        await _say(store, "user", f"The walrus fact number {i} from last week.", i)
    for i in range(40):  # a turn that echoed the question many times
        await _say(store, "user", f"walrus walrus fact {i}?", 100 + i)
    turn = TurnInProgress(conversation_id="c1", started_at=T0 + timedelta(minutes=100))
    hits = await store.search(
        "ada",
        "walrus fact",
        domains=Domain.CONVERSATIONS,
        filters=SearchFilters(exclude_turn=turn),
        limit=3,
        mode=mode,  # type: ignore[arg-type]
    )
    assert sorted(h.text for h in hits) == [
        f"The walrus fact number {i} from last week." for i in range(3)
    ]


async def test_a_turn_needs_a_timezone_aware_start() -> None:
    with pytest.raises(ValueError, match="timezone"):
        TurnInProgress(conversation_id="c1", started_at=datetime(2026, 11, 1))


async def _human(store: MemoryStore) -> None:
    await store.create_block(
        "ada",
        "human",
        "Name: Grace\nGrace's sister Ana is a violinist in Porto.\nGrace drinks green tea.",
        kind=BlockKind.CORE,
        permission=Permission.ADMIN,
    )


@pytest.mark.parametrize("mode", MODES)
async def test_the_line_of_a_core_block_that_answers_is_a_hit(
    store: MemoryStore, mode: str
) -> None:
    await _human(store)
    hits = await store.search("ada", "violinist sister Porto", mode=mode)  # type: ignore[arg-type]
    top = hits[0]
    assert (top.domain, top.label, top.kind) == ("core_memory", "human", BlockKind.CORE)
    assert top.text == "Grace's sister Ana is a violinist in Porto."


async def test_core_lines_are_not_archival_memory(store: MemoryStore) -> None:
    await _human(store)
    hits = await store.search("ada", "violinist sister Porto", domains=Domain.ARCHIVAL_MEMORY)
    assert all(h.domain == "archival_memory" for h in hits)
    assert await store.search("ada", "violinist", domains=Domain.CONVERSATIONS) == []


async def test_core_lines_follow_every_write_to_the_block(store: MemoryStore) -> None:
    await _human(store)

    async def lines(query: str) -> list[tuple[str, str]]:
        hits: list[SearchHit] = await store.search("ada", query, mode="bm25")
        return [(h.domain, h.text) for h in hits]

    await store.append_to_block("ada", "human", "Grace keeps bees on the roof.")
    assert lines_of(await lines("bees roof")) == ["Grace keeps bees on the roof."]
    await store.replace_in_block("ada", "human", "bees", "pigeons")
    assert await lines("bees") == []
    assert lines_of(await lines("pigeons")) == ["Grace keeps pigeons on the roof."]
    await store.update_block_text("ada", "human", "Grace moved to Oslo.")
    assert await lines("pigeons") == []
    assert lines_of(await lines("Oslo")) == ["Grace moved to Oslo."]
    await store.set_kind("ada", "human", BlockKind.ARCHIVAL)
    assert await lines("Oslo") == [("archival_memory", "Grace moved to Oslo.")]
    await store.set_kind("ada", "human", BlockKind.WORKING)
    assert await lines("Oslo") == [("core_memory", "Grace moved to Oslo.")]
    await store.delete_block("ada", "human")
    assert await lines("Oslo") == []


def lines_of(found: list[tuple[str, str]]) -> list[str]:
    assert {domain for domain, _ in found} == {"core_memory"}
    return [text for _, text in found]


async def test_core_lines_honour_label_and_tag_filters(store: MemoryStore) -> None:
    await _human(store)
    await store.create_block("ada", "persona", "I play the violin too.", tags=["me"])
    by_label = await store.search("ada", "violin", filters=SearchFilters(labels=("persona",)))
    assert [h.label for h in by_label] == ["persona"]
    by_tag = await store.search("ada", "violin", filters=SearchFilters(tags=("me",)))
    assert [h.label for h in by_tag] == ["persona"]


def _hit(coverage: float | None, cosine: float | None) -> SearchHit:
    return SearchHit(
        domain="conversations",
        id="m1",
        owner="ada",
        text="x",
        score=0.0,
        created_at=T0,
        coverage=coverage,
        vector_score=cosine,
    )


@given(
    coverage=st.none() | st.floats(min_value=0.0, max_value=1.0),
    cosine=st.none() | st.floats(min_value=-1.0, max_value=1.0),
)
def test_relevance_rises_with_either_signal(coverage: float | None, cosine: float | None) -> None:
    verdict = is_relevant(_hit(coverage, cosine))
    if verdict and coverage is not None and cosine is not None:
        assert is_relevant(_hit(min(1.0, coverage + 0.1), cosine))
        assert is_relevant(_hit(coverage, min(1.0, cosine + 0.1)))
    if coverage is None and cosine is None:
        assert verdict  # nothing to judge by


def test_an_entry_sharing_neither_words_nor_meaning_is_not_relevant() -> None:
    assert not is_relevant(_hit(0.0, 0.05))
    assert is_relevant(_hit(1.0, 0.05))
    assert is_relevant(_hit(0.0, 0.95))


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    value=st.text(st.characters(blacklist_categories=("Cs",)), max_size=300),
    query=st.text(max_size=60),
    mode=st.sampled_from(MODES),
)
async def test_any_core_block_text_is_searched_line_by_line_without_raising(
    store: MemoryStore, value: str, query: str, mode: str
) -> None:
    if await store.list_blocks("ada"):  # the store outlives one example
        await store.update_block_text("ada", "human", value)
    else:
        await store.create_block("ada", "human", value, permission=Permission.ADMIN)
    hits = await store.search("ada", query, limit=5, mode=mode)  # type: ignore[arg-type]
    lines = {line.strip() for line in value.splitlines()}
    assert len(hits) <= 5
    assert all(h.text in lines and h.text for h in hits if h.domain == "core_memory")
