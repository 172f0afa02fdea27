"""Contract: shared blocks are read and written at the share's level, addressed by
label or ``owner/label``, and nobody else ever sees them."""

from __future__ import annotations

import pytest

from satchel import NotFoundError, PermissionDeniedError
from satchel.memory import BlockKind, Domain, MemoryStore, Permission

pytestmark = pytest.mark.anyio


async def test_a_recipient_reads_a_shared_block_by_label_and_by_owner_label(
    store: MemoryStore,
) -> None:
    await store.create_block("ada", "plan", "the plan")
    shared = await store.share_block("ada", "plan", "bob", Permission.READ_ONLY)
    assert shared.shares == {"bob": Permission.READ_ONLY}
    assert (await store.get_block("bob", "plan")).value == "the plan"
    assert (await store.get_block("bob", "ada/plan")).value == "the plan"
    assert [b.label for b in await store.list_blocks("bob")] == ["plan"]
    assert (await store.list_blocks("bob"))[0].address_for("bob") == "ada/plan"


async def test_a_recipient_writes_at_its_share_level(store: MemoryStore) -> None:
    await store.create_block("ada", "plan", "step 1", permission=Permission.ADMIN)
    await store.share_block("ada", "plan", "bob", Permission.APPEND)
    block = await store.append_to_block("bob", "plan", "step 2")
    assert block.value == "step 1\nstep 2"
    with pytest.raises(PermissionDeniedError):
        await store.update_block_text("bob", "plan", "overwritten")
    await store.share_block("ada", "plan", "bob", Permission.READ_WRITE)
    assert (await store.update_block_text("bob", "ada/plan", "new")).value == "new"


async def test_the_recipients_own_block_wins_over_a_shared_one_of_the_same_label(
    store: MemoryStore,
) -> None:
    await store.create_block("ada", "notes", "ada's")
    await store.create_block("bob", "notes", "bob's")
    await store.share_block("ada", "notes", "bob", Permission.READ_WRITE)
    assert (await store.get_block("bob", "notes")).value == "bob's"
    assert (await store.get_block("bob", "ada/notes")).value == "ada's"


async def test_a_label_shared_by_two_owners_is_ambiguous_until_qualified(
    store: MemoryStore,
) -> None:
    for owner in ("ada", "cy"):
        await store.create_block(owner, "notes", f"{owner}'s")
        await store.share_block(owner, "notes", "bob", Permission.READ_ONLY)
    with pytest.raises(NotFoundError, match="ambiguous") as info:
        await store.get_block("bob", "notes")
    assert info.value.details["candidates"] == ["ada/notes", "cy/notes"]
    assert (await store.get_block("bob", "cy/notes")).value == "cy's"


async def test_unsharing_removes_access(store: MemoryStore) -> None:
    await store.create_block("ada", "plan", "secret plan", kind=BlockKind.ARCHIVAL)
    await store.share_block("ada", "plan", "bob", Permission.READ_ONLY)
    assert await store.search("bob", "secret plan", domains=Domain.ARCHIVAL_MEMORY)
    await store.unshare_block("ada", "plan", "bob")
    with pytest.raises(NotFoundError):
        await store.get_block("bob", "plan")
    assert await store.search("bob", "secret plan") == []
    with pytest.raises(NotFoundError):
        await store.unshare_block("ada", "plan", "bob")


async def test_another_agent_never_reads_or_searches_unshared_memory(
    store: MemoryStore,
) -> None:
    await store.create_block("ada", "diary", "I buried the treasure", kind=BlockKind.ARCHIVAL)
    await store.create_block("ada", "persona", "treasure hunter")
    await store.add_message("ada", "user", "where is the treasure buried?")
    await store.create_block("eve", "mine", "nothing here")
    for mode in ("hybrid", "bm25", "vector"):
        found = await store.search("eve", "treasure buried", mode=mode)  # type: ignore[arg-type]
        assert [(h.owner, h.label) for h in found] in ([], [("eve", "mine")])  # her own
        assert await store.search("nobody", "treasure", mode=mode) == []  # type: ignore[arg-type]
    assert [b.label for b in await store.list_blocks("eve")] == ["mine"]
    assert await store.list_messages("eve") == []
    with pytest.raises(NotFoundError):
        await store.get_block("eve", "diary")


async def test_a_recipient_finds_shared_archival_blocks_in_search_with_the_owner_label(
    store: MemoryStore,
) -> None:
    await store.create_block("ada", "recipe", "bake bread with rye flour", kind=BlockKind.ARCHIVAL)
    await store.share_block("ada", "recipe", "bob", Permission.READ_ONLY)
    for mode in ("hybrid", "bm25", "vector"):
        hits = await store.search("bob", "rye bread", mode=mode)
        assert [(h.label, h.owner) for h in hits] == [("ada/recipe", "ada")]
    own = await store.search("ada", "rye bread")
    assert [h.label for h in own] == ["recipe"]


async def test_a_block_cannot_be_shared_with_its_owner(store: MemoryStore) -> None:
    await store.create_block("ada", "plan", "x")
    with pytest.raises(ValueError, match="owner"):
        await store.share_block("ada", "plan", "ada", Permission.READ_ONLY)


async def test_a_recipient_sees_only_its_own_share(store: MemoryStore) -> None:
    await store.create_block("ada", "plan", "x")
    await store.share_block("ada", "plan", "bob", Permission.READ_ONLY)
    await store.share_block("ada", "plan", "cy", Permission.READ_WRITE)
    assert (await store.get_block("bob", "plan")).shares == {"bob": Permission.READ_ONLY}
    assert (await store.list_blocks("cy"))[0].shares == {"cy": Permission.READ_WRITE}
    assert (await store.get_block("ada", "plan")).shares == {
        "bob": Permission.READ_ONLY,
        "cy": Permission.READ_WRITE,
    }
