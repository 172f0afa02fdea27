"""Contract: an operator changes a block's permission, char limit and description with
``configure_block``, for the owner only, keeping its text, shares and vector."""

from __future__ import annotations

import pytest

from satchel import CharLimitError, NotFoundError, PermissionDeniedError
from satchel.memory import BlockKind, Domain, MemoryStore, Permission, Unset

pytestmark = pytest.mark.anyio


async def test_a_block_made_read_only_denies_an_agents_append(store: MemoryStore) -> None:
    await store.create_block("ada", "rules", "Be kind.")

    block = await store.configure_block("ada", "rules", permission=Permission.READ_ONLY)

    assert block.permission is Permission.READ_ONLY
    with pytest.raises(PermissionDeniedError):
        await store.append_to_block("ada", "rules", "Be mean.")
    assert (await store.get_block("ada", "rules")).value == "Be kind."


async def test_configure_passes_no_gate_so_a_read_only_block_can_be_opened_again(
    store: MemoryStore,
) -> None:
    await store.create_block("ada", "rules", "Be kind.", permission=Permission.READ_ONLY)

    await store.configure_block("ada", "rules", permission=Permission.READ_WRITE)

    assert (await store.append_to_block("ada", "rules", "Be brief.")).value == (
        "Be kind.\nBe brief."
    )


async def test_raising_then_removing_the_limit_lets_longer_writes_through(
    store: MemoryStore,
) -> None:
    await store.create_block("ada", "notes", "12345", char_limit=5)
    with pytest.raises(CharLimitError):
        await store.append_to_block("ada", "notes", "678", separator="")

    raised = await store.configure_block("ada", "notes", char_limit=8)
    assert raised.char_limit == 8
    assert (await store.append_to_block("ada", "notes", "678", separator="")).chars == 8

    removed = await store.configure_block("ada", "notes", char_limit=None)
    assert removed.char_limit is None
    long = await store.update_block_text("ada", "notes", "x" * 1000)
    assert long.chars == 1000


async def test_a_limit_below_the_current_length_is_refused_and_changes_nothing(
    store: MemoryStore,
) -> None:
    before = await store.create_block("ada", "notes", "0123456789", char_limit=20)

    with pytest.raises(CharLimitError) as info:
        await store.configure_block(
            "ada", "notes", char_limit=4, permission=Permission.READ_ONLY, description="new"
        )

    assert info.value.details == {"label": "notes", "chars": 10, "char_limit": 4}
    assert "10" in info.value.message
    assert "4" in info.value.message
    assert "summarise" in info.value.message.lower()
    assert await store.get_block("ada", "notes") == before


async def test_a_limit_equal_to_the_current_length_is_accepted(store: MemoryStore) -> None:
    await store.create_block("ada", "notes", "0123456789")

    assert (await store.configure_block("ada", "notes", char_limit=10)).char_limit == 10


async def test_a_negative_limit_is_a_value_error(store: MemoryStore) -> None:
    await store.create_block("ada", "notes", "x")

    with pytest.raises(ValueError, match="char_limit"):
        await store.configure_block("ada", "notes", char_limit=-1)


async def test_configure_bumps_the_version_once_and_keeps_the_text_and_kind(
    store: MemoryStore,
) -> None:
    before = await store.create_block(
        "ada", "trip", "Kyoto in April", kind=BlockKind.ARCHIVAL, tags=["travel"]
    )

    after = await store.configure_block(
        "ada", "trip", permission=Permission.ADMIN, char_limit=100, description="the trip"
    )

    assert after.version == before.version + 1
    assert after.updated_at >= before.updated_at
    assert (after.permission, after.char_limit, after.description) == (
        Permission.ADMIN,
        100,
        "the trip",
    )
    assert (after.value, after.kind, after.tags, after.id) == (
        before.value,
        before.kind,
        before.tags,
        before.id,
    )
    assert await store.get_block("ada", "trip") == after


async def test_the_vector_is_kept(store: MemoryStore) -> None:
    await store.create_block("ada", "trip", "Kyoto in April", kind=BlockKind.ARCHIVAL)

    await store.configure_block("ada", "trip", description="travel plans")
    hits = await store.search("ada", "Kyoto April", domains=Domain.ARCHIVAL_MEMORY, mode="vector")

    assert [hit.label for hit in hits] == ["trip"]


async def test_nothing_to_change_returns_the_block_without_a_new_version(
    store: MemoryStore,
) -> None:
    before = await store.create_block(
        "ada", "notes", "x", description="d", permission=Permission.APPEND, char_limit=5
    )

    assert await store.configure_block("ada", "notes") == before
    assert await store.configure_block("ada", "notes", char_limit=Unset.UNSET) == before
    same = await store.configure_block(
        "ada", "notes", permission=Permission.APPEND, char_limit=5, description="d"
    )
    assert same == before
    assert await store.get_block("ada", "notes") == before


async def test_an_unknown_label_is_not_found(store: MemoryStore) -> None:
    await store.create_block("ada", "notes", "x")

    with pytest.raises(NotFoundError):
        await store.configure_block("ada", "nope", permission=Permission.READ_ONLY)
    with pytest.raises(NotFoundError):
        await store.configure_block("bob", "notes", permission=Permission.READ_ONLY)


async def test_a_share_recipient_cannot_configure_the_block(store: MemoryStore) -> None:
    before = await store.create_block("ada", "plan", "the plan")
    shared = await store.share_block("ada", "plan", "bob", Permission.READ_WRITE)

    for label in ("plan", "ada/plan"):
        with pytest.raises(PermissionDeniedError, match="owner"):
            await store.configure_block("bob", label, permission=Permission.ADMIN)
        with pytest.raises(PermissionDeniedError):
            await store.configure_block("bob", label)

    assert (await store.get_block("ada", "plan")).version == shared.version
    assert (await store.get_block("ada", "plan")).permission == before.permission


async def test_shares_stay_and_are_lowered_to_a_new_permission(store: MemoryStore) -> None:
    await store.create_block("ada", "plan", "step 1")
    await store.share_block("ada", "plan", "bob", Permission.READ_WRITE)
    await store.share_block("ada", "plan", "cy", Permission.READ_ONLY)

    block = await store.configure_block("ada", "plan", permission=Permission.APPEND)

    assert block.shares == {"bob": Permission.APPEND, "cy": Permission.READ_ONLY}
    assert (await store.get_block("bob", "plan")).shares == {"bob": Permission.APPEND}
    with pytest.raises(PermissionDeniedError):
        await store.update_block_text("bob", "plan", "overwritten")
    assert (await store.append_to_block("bob", "plan", "step 2")).value == "step 1\nstep 2"

    raised = await store.configure_block("ada", "plan", permission=Permission.ADMIN)
    assert raised.shares == {"bob": Permission.APPEND, "cy": Permission.READ_ONLY}


async def test_a_description_with_a_nul_character_round_trips(store: MemoryStore) -> None:
    await store.create_block("ada", "odd", "x")

    block = await store.configure_block("ada", "odd", description="a\x00b")

    assert block.description == "a\x00b"
    assert (await store.get_block("ada", "odd")).description == "a\x00b"
