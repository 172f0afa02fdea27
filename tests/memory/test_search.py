"""Contract: search scope, domains, filters, limits and modes."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from satchel.memory import (
    BlockKind,
    Domain,
    MemoryStore,
    Permission,
    SearchFilters,
    SearchHit,
)

pytestmark = pytest.mark.anyio

T0 = datetime(2024, 3, 1, tzinfo=UTC)


@pytest.fixture
async def filled(store: MemoryStore) -> MemoryStore:
    """ada: three archival blocks, a core block, five messages; bob: his own block."""
    await store.create_block(
        "ada",
        "garden",
        "the tomato plants need water",
        kind=BlockKind.ARCHIVAL,
        tags=["home", "plants"],
    )
    await store.create_block(
        "ada",
        "work",
        "the quarterly report on tomato sales",
        kind=BlockKind.ARCHIVAL,
        tags=["work"],
    )
    await store.create_block(
        "ada",
        "trip",
        "flight to Lisbon on Friday",
        kind=BlockKind.ARCHIVAL,
        tags=["travel", "home"],
    )
    await store.create_block("ada", "persona", "I love tomato soup", kind=BlockKind.CORE)
    conversation = [
        ("user", "should I water the tomato plants today?", "c1", ["home"]),
        ("assistant", "yes, the tomato plants look dry", "c1", []),
        ("user", "book the flight to Lisbon", "c2", ["travel"]),
        ("assistant", "the Lisbon flight is booked", "c2", []),
        ("system", "tomato reminder", "c3", ["home", "plants"]),
    ]
    for i, (role, text, conversation_id, tags) in enumerate(conversation):
        await store.add_message(
            "ada",
            role,  # type: ignore[arg-type]
            text,
            conversation_id=conversation_id,
            created_at=T0 + timedelta(days=i),
            tags=tags,
        )
    await store.create_block("bob", "bobs", "bob grows tomato plants", kind=BlockKind.ARCHIVAL)
    return store


def texts(hits: list[SearchHit]) -> set[str]:
    return {hit.text for hit in hits}


@pytest.mark.parametrize("mode", ["hybrid", "bm25", "vector"])
async def test_search_sees_only_the_agents_own_blocks_and_messages(
    filled: MemoryStore, mode: str
) -> None:
    hits = await filled.search("ada", "tomato", limit=100, mode=mode)  # type: ignore[arg-type]
    found = texts(hits)
    assert "bob grows tomato plants" not in found
    expected = {
        "I love tomato soup",
        "the tomato plants need water",
        "the quarterly report on tomato sales",
        "should I water the tomato plants today?",
        "yes, the tomato plants look dry",
        "tomato reminder",
    }
    if mode == "bm25":
        assert found == expected
    elif mode == "hybrid":
        assert expected <= found


async def test_hits_carry_label_full_text_and_diagnostics(filled: MemoryStore) -> None:
    hits = await filled.search("ada", "tomato plants water", domains=Domain.ARCHIVAL_MEMORY)
    top = hits[0]
    assert top.domain == "archival_memory"
    assert (top.label, top.owner, top.text) == ("garden", "ada", "the tomato plants need water")
    assert top.tags == ("home", "plants")
    assert top.bm25_rank == 1
    assert top.bm25_score is not None
    assert top.bm25_score > 0
    assert top.vector_rank is not None
    assert top.vector_score is not None
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


async def test_message_hits_carry_role_conversation_and_time(filled: MemoryStore) -> None:
    hits = await filled.search("ada", "Lisbon flight booked", domains=Domain.CONVERSATIONS)
    top = hits[0]
    assert top.domain == "conversations"
    assert (top.label, top.role, top.conversation_id) == (None, "assistant", "c2")
    assert top.created_at == T0 + timedelta(days=3)


async def test_domains_select_blocks_or_messages(filled: MemoryStore) -> None:
    archival = await filled.search("ada", "tomato", domains=Domain.ARCHIVAL_MEMORY, limit=50)
    assert {h.domain for h in archival} == {"archival_memory"}
    conversations = await filled.search("ada", "tomato", domains=Domain.CONVERSATIONS, limit=50)
    assert {h.domain for h in conversations} == {"conversations"}
    both = await filled.search("ada", "tomato", domains=Domain.ALL, limit=50)
    assert {h.domain for h in both} == {"archival_memory", "core_memory", "conversations"}


@pytest.mark.parametrize("limit", [1, 2, 3])
async def test_limit_caps_the_number_of_hits(filled: MemoryStore, limit: int) -> None:
    assert len(await filled.search("ada", "tomato", limit=limit)) == limit


@pytest.mark.parametrize("limit", [0, -1, 1001])
async def test_a_limit_out_of_range_is_rejected(filled: MemoryStore, limit: int) -> None:
    with pytest.raises(ValueError, match="limit"):
        await filled.search("ada", "tomato", limit=limit)


@pytest.mark.parametrize("mode", ["hybrid", "bm25", "vector"])
async def test_role_filter_keeps_only_messages_of_that_role(filled: MemoryStore, mode: str) -> None:
    hits = await filled.search(
        "ada",
        "tomato plants",
        filters=SearchFilters(role="user"),
        limit=50,
        mode=mode,  # type: ignore[arg-type]
    )
    assert hits
    assert {(h.domain, h.role) for h in hits} == {("conversations", "user")}


@pytest.mark.parametrize("mode", ["hybrid", "bm25", "vector"])
async def test_time_range_filter_is_inclusive(filled: MemoryStore, mode: str) -> None:
    window = SearchFilters(start_time=T0 + timedelta(days=1), end_time=T0 + timedelta(days=3))
    hits = await filled.search(
        "ada",
        "tomato flight Lisbon",
        domains=Domain.CONVERSATIONS,
        filters=window,
        limit=50,
        mode=mode,  # type: ignore[arg-type]
    )
    assert {h.created_at for h in hits} <= {T0 + timedelta(days=d) for d in (1, 2, 3)}
    if mode != "vector":
        assert len(hits) == 3


async def test_time_filter_applies_to_blocks_by_creation_time(filled: MemoryStore) -> None:
    future = SearchFilters(start_time=datetime.now(UTC) + timedelta(days=1))
    assert (
        await filled.search("ada", "tomato", domains=Domain.ARCHIVAL_MEMORY, filters=future) == []
    )
    past = SearchFilters(end_time=datetime.now(UTC) + timedelta(seconds=5))
    assert await filled.search("ada", "tomato", domains=Domain.ARCHIVAL_MEMORY, filters=past)


@pytest.mark.parametrize("mode", ["hybrid", "bm25", "vector"])
async def test_tags_filter_matches_any_tag_by_default(filled: MemoryStore, mode: str) -> None:
    hits = await filled.search(
        "ada",
        "tomato flight Lisbon plants",
        filters=SearchFilters(tags=("travel", "plants")),
        limit=50,
        mode=mode,  # type: ignore[arg-type]
    )
    assert texts(hits) == {
        "the tomato plants need water",
        "flight to Lisbon on Friday",
        "book the flight to Lisbon",
        "tomato reminder",
    }


@pytest.mark.parametrize("mode", ["hybrid", "bm25", "vector"])
async def test_tags_filter_can_require_all_tags(filled: MemoryStore, mode: str) -> None:
    both = SearchFilters(tags=("home", "plants"), tags_match="all")
    hits = await filled.search("ada", "tomato flight plants", filters=both, limit=50, mode=mode)  # type: ignore[arg-type]
    assert texts(hits) == {"the tomato plants need water", "tomato reminder"}


@pytest.mark.parametrize("mode", ["hybrid", "bm25", "vector"])
async def test_labels_filter_keeps_only_those_blocks(filled: MemoryStore, mode: str) -> None:
    hits = await filled.search(
        "ada",
        "tomato",
        filters=SearchFilters(labels=("work", "trip")),
        limit=50,
        mode=mode,  # type: ignore[arg-type]
    )
    assert {h.label for h in hits} <= {"work", "trip"}
    assert "work" in {h.label for h in hits}
    assert {h.domain for h in hits} == {"archival_memory"}


async def test_labels_filter_accepts_owner_label_for_shared_blocks(filled: MemoryStore) -> None:
    await filled.share_block("bob", "bobs", "ada", Permission.READ_ONLY)
    hits = await filled.search("ada", "tomato", filters=SearchFilters(labels=("bob/bobs",)))
    assert [(h.label, h.owner) for h in hits] == [("bob/bobs", "bob")]


async def test_conversation_filter_keeps_only_that_conversation(filled: MemoryStore) -> None:
    hits = await filled.search(
        "ada", "tomato Lisbon", filters=SearchFilters(conversation_id="c2"), limit=50
    )
    assert {h.conversation_id for h in hits} == {"c2"}
    assert len(hits) == 2


async def test_filters_combine(filled: MemoryStore) -> None:
    combined = SearchFilters(role="user", tags=("home",), end_time=T0 + timedelta(days=1))
    hits = await filled.search("ada", "tomato", filters=combined, limit=50)
    assert texts(hits) == {"should I water the tomato plants today?"}


async def test_an_inverted_time_range_is_rejected() -> None:
    with pytest.raises(ValueError, match="after"):
        SearchFilters(start_time=T0 + timedelta(days=1), end_time=T0)


async def test_archiving_and_loading_a_block_moves_it_between_domains(
    store: MemoryStore,
) -> None:
    await store.create_block("ada", "project", "migrate the zebra database", kind=BlockKind.WORKING)
    archival = Domain.ARCHIVAL_MEMORY
    assert await store.search("ada", "zebra", domains=archival) == []
    assert [(h.label, h.domain) for h in await store.search("ada", "zebra")] == [
        ("project", "core_memory")
    ]
    await store.set_kind("ada", "project", BlockKind.ARCHIVAL)
    assert [h.label for h in await store.search("ada", "zebra", domains=archival)] == ["project"]
    await store.set_kind("ada", "project", BlockKind.WORKING)
    assert await store.search("ada", "zebra", domains=archival) == []
    hits = await store.search("ada", "zebra")
    assert [(h.domain, h.kind) for h in hits] == [("core_memory", BlockKind.WORKING)]


@pytest.mark.parametrize("mode", ["hybrid", "bm25", "vector"])
async def test_search_follows_edits_and_deletes(store: MemoryStore, mode: str) -> None:
    await store.create_block(
        "ada", "note", "alpha bravo", kind=BlockKind.ARCHIVAL, permission=Permission.ADMIN
    )
    assert [h.text for h in await store.search("ada", "alpha bravo", mode=mode)] == ["alpha bravo"]  # type: ignore[arg-type]
    await store.update_block_text("ada", "note", "charlie delta")
    hits = await store.search("ada", "charlie delta", mode=mode)  # type: ignore[arg-type]
    assert [h.text for h in hits] == ["charlie delta"]
    await store.append_to_block("ada", "note", "echo foxtrot")
    hits = await store.search("ada", "echo foxtrot", mode=mode)  # type: ignore[arg-type]
    assert [h.text for h in hits] == ["charlie delta\necho foxtrot"]
    await store.delete_block("ada", "note")
    assert await store.search("ada", "charlie delta echo", mode=mode) == []  # type: ignore[arg-type]


async def test_a_query_of_only_stop_words_still_searches(store: MemoryStore) -> None:
    await store.create_block("ada", "song", "let it be", kind=BlockKind.ARCHIVAL)
    hits = await store.search("ada", "let it be", mode="bm25")
    assert [h.text for h in hits] == ["let it be"]


@pytest.mark.parametrize("count", [1, 1_000, 10_000])
async def test_a_labels_filter_of_any_size_works(filled: MemoryStore, count: int) -> None:
    await filled.share_block("bob", "bobs", "ada", Permission.READ_ONLY)
    bare = ("work", *(f"decoy-{i}" for i in range(count - 1)))
    owned = ("bob/bobs", *(f"bob/decoy-{i}" for i in range(count - 1)))

    by_label = await filled.search("ada", "tomato", filters=SearchFilters(labels=bare), limit=50)
    by_owner = await filled.search("ada", "tomato", filters=SearchFilters(labels=owned), limit=50)
    mixed = await filled.search(
        "ada", "tomato", filters=SearchFilters(labels=bare + owned), limit=50
    )

    assert {h.label for h in by_label} == {"work"}
    assert {(h.label, h.owner) for h in by_owner} == {("bob/bobs", "bob")}
    assert {h.label for h in mixed} == {"work", "bob/bobs"}


@pytest.mark.parametrize("count", [1, 1_000, 10_000])
async def test_a_tags_filter_of_any_size_works(filled: MemoryStore, count: int) -> None:
    many = ("home", *(f"decoy-{i}" for i in range(count - 1)))
    home = SearchFilters(tags=("home",))

    expected = await filled.search("ada", "tomato", filters=home, limit=50)
    any_of = await filled.search("ada", "tomato", filters=SearchFilters(tags=many), limit=50)
    all_of = await filled.search(
        "ada", "tomato", filters=SearchFilters(tags=many, tags_match="all"), limit=50
    )

    assert "tomato reminder" in texts(expected)
    assert texts(any_of) == texts(expected)
    assert texts(all_of) == (texts(expected) if count == 1 else set())
