"""Contract: block CRUD, optimistic versions, char limits and kind changes."""

from __future__ import annotations

import pytest

from satchel import (
    AlreadyExistsError,
    CharLimitError,
    MemoryStoreError,
    NotFoundError,
    VersionConflictError,
)
from satchel.memory import Block, BlockKind, MemoryStore, Permission

from .conftest import StoreFactory

pytestmark = pytest.mark.anyio


async def test_created_block_reads_back_with_every_field(store: MemoryStore) -> None:
    created = await store.create_block(
        "ada",
        "persona",
        "I am Ada.",
        description="Who I am",
        kind=BlockKind.CORE,
        permission=Permission.APPEND,
        char_limit=500,
        pinned=True,
        tags=["me", "me", "identity"],
        metadata={"source": "test", "n": 1},
    )
    read = await store.get_block("ada", "persona")
    assert read == created
    assert read.agent == "ada"
    assert read.value == "I am Ada."
    assert read.description == "Who I am"
    assert read.kind is BlockKind.CORE
    assert read.permission is Permission.APPEND
    assert read.char_limit == 500
    assert read.pinned is True
    assert read.version == 1
    assert read.tags == ("me", "identity")
    assert read.metadata == {"source": "test", "n": 1}
    assert read.shares == {}
    assert read.created_at == read.updated_at
    assert read.created_at.tzinfo is not None


async def test_creating_a_block_with_a_taken_label_is_refused(store: MemoryStore) -> None:
    await store.create_block("ada", "persona", "one")
    with pytest.raises(AlreadyExistsError):
        await store.create_block("ada", "persona", "two")
    assert (await store.get_block("ada", "persona")).value == "one"


async def test_two_agents_may_use_the_same_label(store: MemoryStore) -> None:
    await store.create_block("ada", "persona", "Ada")
    await store.create_block("bob", "persona", "Bob")
    assert (await store.get_block("ada", "persona")).value == "Ada"
    assert (await store.get_block("bob", "persona")).value == "Bob"


@pytest.mark.parametrize(
    "label",
    [
        "",
        "a/b",
        " padded",
        "tab\there",
        "x" * 129,
        "nul\x00",
        "evil\u202etxt.exe",  # shows as another label
        "two\u2028lines",
        "para\u2029graph",
        "next\x85line",
        "isolate\u2066x\u2069",
    ],
)
async def test_invalid_labels_are_rejected(store: MemoryStore, label: str) -> None:
    with pytest.raises(ValueError, match="label"):
        await store.create_block("ada", label, "v")


async def test_getting_a_missing_block_raises_not_found(store: MemoryStore) -> None:
    with pytest.raises(NotFoundError):
        await store.get_block("ada", "nothing")
    await store.create_block("ada", "x", "v")
    with pytest.raises(NotFoundError):
        await store.get_block("ada", "nothing")


async def test_list_blocks_orders_by_kind_then_label_and_filters_kinds(
    store: MemoryStore,
) -> None:
    await store.create_block("ada", "zeta", "z", kind=BlockKind.ARCHIVAL)
    await store.create_block("ada", "beta", "b", kind=BlockKind.WORKING)
    await store.create_block("ada", "alpha", "a", kind=BlockKind.CORE)
    await store.create_block("ada", "gamma", "g", kind=BlockKind.CORE)
    await store.create_block("bob", "other", "o")
    labels = [b.label for b in await store.list_blocks("ada")]
    assert labels == ["alpha", "gamma", "beta", "zeta"]
    in_context = await store.list_blocks("ada", kinds=[BlockKind.CORE, BlockKind.WORKING])
    assert [b.label for b in in_context] == ["alpha", "gamma", "beta"]
    assert await store.list_blocks("nobody") == []


async def test_update_block_text_overwrites_and_bumps_the_version(store: MemoryStore) -> None:
    await store.create_block("ada", "notes", "old", description="d1")
    updated = await store.update_block_text("ada", "notes", "new")
    assert (updated.value, updated.version, updated.description) == ("new", 2, "d1")
    updated = await store.update_block_text("ada", "notes", "newer", description="d2")
    assert (updated.value, updated.version, updated.description) == ("newer", 3, "d2")
    assert updated.updated_at >= updated.created_at


async def test_update_with_the_current_version_succeeds(store: MemoryStore) -> None:
    block = await store.create_block("ada", "notes", "v1")
    updated = await store.update_block_text("ada", "notes", "v2", expected_version=block.version)
    assert updated.version == block.version + 1


async def test_update_with_a_stale_version_is_a_conflict_and_changes_nothing(
    store: MemoryStore,
) -> None:
    block = await store.create_block("ada", "notes", "v1")
    await store.update_block_text("ada", "notes", "someone else")
    with pytest.raises(VersionConflictError) as info:
        await store.update_block_text("ada", "notes", "mine", expected_version=block.version)
    assert info.value.details["current_version"] == 2
    assert info.value.error_kind == "retry"
    assert (await store.get_block("ada", "notes")).value == "someone else"


async def test_append_adds_a_separator_only_after_existing_text(store: MemoryStore) -> None:
    await store.create_block("ada", "log", "")
    first = await store.append_to_block("ada", "log", "one")
    assert first.value == "one"
    second = await store.append_to_block("ada", "log", "two")
    assert second.value == "one\ntwo"
    third = await store.append_to_block("ada", "log", "three", separator=" | ")
    assert third.value == "one\ntwo | three"
    assert third.version == 4


async def test_replace_swaps_the_single_occurrence(store: MemoryStore) -> None:
    await store.create_block("ada", "facts", "Bob likes tea. Ada likes coffee.")
    block = await store.replace_in_block("ada", "facts", "tea", "green tea")
    assert block.value == "Bob likes green tea. Ada likes coffee."
    assert block.version == 2


async def test_replace_of_missing_text_says_zero_matches(store: MemoryStore) -> None:
    await store.create_block("ada", "facts", "Bob likes tea.")
    with pytest.raises(NotFoundError) as info:
        await store.replace_in_block("ada", "facts", "coffee", "x")
    assert info.value.details["matches"] == 0


async def test_replace_of_ambiguous_text_says_how_many_matches(store: MemoryStore) -> None:
    await store.create_block("ada", "facts", "likes tea, likes cake, likes jam")
    with pytest.raises(MemoryStoreError) as info:
        await store.replace_in_block("ada", "facts", "likes", "loves")
    assert info.value.details["matches"] == 3
    assert "3 times" in info.value.message
    assert (await store.get_block("ada", "facts")).value == "likes tea, likes cake, likes jam"


async def test_replace_honours_the_expected_version(store: MemoryStore) -> None:
    await store.create_block("ada", "facts", "a b c")
    with pytest.raises(VersionConflictError):
        await store.replace_in_block("ada", "facts", "b", "x", expected_version=7)


async def test_delete_returns_the_block_and_removes_it(make_store: StoreFactory) -> None:
    store = await make_store()
    await store.create_block("ada", "tmp", "bye", permission=Permission.ADMIN)
    deleted = await store.delete_block("ada", "tmp")
    assert deleted.value == "bye"
    with pytest.raises(NotFoundError):
        await store.get_block("ada", "tmp")
    again = await store.create_block("ada", "tmp", "back", permission=Permission.ADMIN)
    assert again.version == 1


async def test_delete_with_a_stale_version_is_a_conflict(store: MemoryStore) -> None:
    await store.create_block("ada", "tmp", "x", permission=Permission.ADMIN)
    with pytest.raises(VersionConflictError):
        await store.delete_block("ada", "tmp", expected_version=5)
    assert (await store.get_block("ada", "tmp")).value == "x"


async def test_create_over_the_char_limit_is_refused_with_numbers(store: MemoryStore) -> None:
    with pytest.raises(CharLimitError) as info:
        await store.create_block("ada", "small", "x" * 11, char_limit=10)
    assert info.value.details == {"label": "small", "attempted_chars": 11, "char_limit": 10}


async def test_append_past_the_char_limit_is_refused_with_numbers_and_a_hint(
    store: MemoryStore,
) -> None:
    await store.create_block("ada", "small", "12345", char_limit=10)
    await store.append_to_block("ada", "small", "678", separator="")
    with pytest.raises(CharLimitError) as info:
        await store.append_to_block("ada", "small", "abc", separator="")
    error = info.value
    assert error.details["chars"] == 8
    assert error.details["attempted_chars"] == 11
    assert error.details["char_limit"] == 10
    assert "11" in error.message
    assert "10" in error.message
    assert "archive" in error.message.lower()
    assert "summarise" in error.message.lower()
    assert (await store.get_block("ada", "small")).value == "12345678"


async def test_the_separator_counts_towards_the_char_limit(store: MemoryStore) -> None:
    await store.create_block("ada", "small", "12345", char_limit=10)
    with pytest.raises(CharLimitError):
        await store.append_to_block("ada", "small", "abcde")  # 5 + 1 + 5 = 11
    block = await store.append_to_block("ada", "small", "abcd")  # exactly 10
    assert block.chars == 10


async def test_overwrite_and_replace_past_the_char_limit_are_refused(
    store: MemoryStore,
) -> None:
    await store.create_block("ada", "small", "abc", char_limit=5)
    with pytest.raises(CharLimitError):
        await store.update_block_text("ada", "small", "abcdef")
    with pytest.raises(CharLimitError):
        await store.replace_in_block("ada", "small", "b", "bbbb")
    assert (await store.get_block("ada", "small")).value == "abc"


async def test_a_soft_char_limit_accepts_the_write(make_store: StoreFactory) -> None:
    store = await make_store(char_limit_mode="soft")
    await store.create_block("ada", "small", "abc", char_limit=5)
    block = await store.append_to_block("ada", "small", "defgh")
    assert block.value == "abc\ndefgh"
    assert block.chars > (block.char_limit or 0)


async def test_char_counts_include_nul_and_astral_characters(store: MemoryStore) -> None:
    await store.create_block("ada", "odd", "a\x00b", char_limit=6)
    block = await store.append_to_block("ada", "odd", "🙂\x00", separator="")
    assert block.value == "a\x00b🙂\x00"
    assert block.chars == 5
    with pytest.raises(CharLimitError):
        await store.append_to_block("ada", "odd", "xy", separator="")


async def test_archive_and_load_change_only_the_kind(store: MemoryStore) -> None:
    await store.create_block("ada", "project", "details", kind=BlockKind.WORKING)
    archived = await store.set_kind("ada", "project", BlockKind.ARCHIVAL)
    assert (archived.kind, archived.value, archived.version) == (
        BlockKind.ARCHIVAL,
        "details",
        2,
    )
    loaded = await store.set_kind("ada", "project", BlockKind.WORKING)
    assert loaded.kind is BlockKind.WORKING
    with pytest.raises(VersionConflictError):
        await store.set_kind("ada", "project", BlockKind.ARCHIVAL, expected_version=1)


async def test_swap_archives_one_block_and_loads_the_other(store: MemoryStore) -> None:
    await store.create_block("ada", "current", "now", kind=BlockKind.WORKING)
    await store.create_block("ada", "old", "then", kind=BlockKind.ARCHIVAL)
    archived, loaded = await store.swap_blocks("ada", "current", "old")
    assert (archived.label, archived.kind) == ("current", BlockKind.ARCHIVAL)
    assert (loaded.label, loaded.kind) == ("old", BlockKind.WORKING)


async def test_swap_is_atomic_when_the_second_block_is_missing(store: MemoryStore) -> None:
    await store.create_block("ada", "current", "now", kind=BlockKind.WORKING)
    with pytest.raises(NotFoundError):
        await store.swap_blocks("ada", "current", "missing")
    assert (await store.get_block("ada", "current")).kind is BlockKind.WORKING


async def test_swap_is_atomic_when_the_second_block_is_denied(store: MemoryStore) -> None:
    await store.create_block("ada", "current", "now", kind=BlockKind.WORKING)
    await store.create_block(
        "ada", "locked", "x", kind=BlockKind.ARCHIVAL, permission=Permission.READ_ONLY
    )
    with pytest.raises(MemoryStoreError):
        await store.swap_blocks("ada", "current", "locked")
    assert (await store.get_block("ada", "current")).kind is BlockKind.WORKING
    assert (await store.get_block("ada", "locked")).kind is BlockKind.ARCHIVAL


async def test_blocks_are_frozen_records(store: MemoryStore) -> None:
    block = await store.create_block("ada", "persona", "x")
    assert isinstance(block, Block)
    with pytest.raises(ValueError, match="frozen"):
        block.value = "y"  # type: ignore[misc]
