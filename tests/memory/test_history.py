"""Block history (issue 17): each backend keeps, in the same transaction as the write,
the block as it was before every write that moved its version; the last
HISTORY_VERSIONS of them per block; a deleted block's history goes with it."""

from __future__ import annotations

import pytest

from satchel._errors import CharLimitError, NotFoundError, VersionConflictError
from satchel.memory import HISTORY_VERSIONS, BlockKind, GatedStore, MemoryStore, Permission

pytestmark = pytest.mark.anyio


async def test_every_write_keeps_the_version_it_replaced(store: MemoryStore) -> None:
    assert isinstance(store, GatedStore)
    await store.create_block("ada", "notes", "one", description="first")
    await store.update_block_text("ada", "notes", "two")
    await store.append_to_block("ada", "notes", "three")
    await store.set_kind("ada", "notes", BlockKind.WORKING)
    await store.configure_block("ada", "notes", permission=Permission.APPEND, char_limit=100)
    current = await store.get_block("ada", "notes")
    history = await store.block_history("ada", "notes")
    assert [v.version for v in history] == [1, 2, 3, 4]
    assert [v.value for v in history] == ["one", "two", "two\nthree", "two\nthree"]
    assert history[0].description == "first"
    assert (history[2].kind, history[3].kind) == (BlockKind.CORE, BlockKind.WORKING)
    assert (history[3].permission, history[3].char_limit) == (Permission.READ_WRITE, None)
    assert current.version == 5
    assert (current.permission, current.char_limit) == (Permission.APPEND, 100)
    assert all(v.agent == "ada" and v.label == "notes" for v in history)
    assert [v.changed_at for v in history] == sorted(v.changed_at for v in history)


async def test_a_refused_write_leaves_no_history(store: MemoryStore) -> None:
    assert isinstance(store, GatedStore)
    await store.create_block("ada", "notes", "short", char_limit=10)
    with pytest.raises(CharLimitError):
        await store.update_block_text("ada", "notes", "far too long for the limit")
    with pytest.raises(VersionConflictError):
        await store.update_block_text("ada", "notes", "x", expected_version=7)
    assert await store.block_history("ada", "notes") == []


async def test_the_history_is_bounded_to_the_latest_versions(store: MemoryStore) -> None:
    assert isinstance(store, GatedStore)
    await store.create_block("ada", "counter", "0")
    for n in range(1, HISTORY_VERSIONS + 6):
        await store.update_block_text("ada", "counter", str(n))
    history = await store.block_history("ada", "counter")
    assert len(history) == HISTORY_VERSIONS
    assert history[-1].value == str(HISTORY_VERSIONS + 4)
    assert history[0].version == 6


async def test_deleting_a_block_forgets_its_history(store: MemoryStore) -> None:
    assert isinstance(store, GatedStore)
    await store.create_block("ada", "gone", "a", permission=Permission.ADMIN)
    await store.update_block_text("ada", "gone", "b")
    await store.delete_block("ada", "gone")
    await store.create_block("ada", "gone", "new")
    assert await store.block_history("ada", "gone") == []
    with pytest.raises(NotFoundError):
        await store.block_history("ada", "never")


async def test_another_agent_reads_no_history_of_a_block_it_cannot_see(
    store: MemoryStore,
) -> None:
    assert isinstance(store, GatedStore)
    await store.create_block("ada", "secret", "a")
    await store.update_block_text("ada", "secret", "b")
    with pytest.raises(NotFoundError):
        await store.block_history("bob", "secret")


async def test_history_gives_back_text_exactly_as_it_was_written(store: MemoryStore) -> None:
    assert isinstance(store, GatedStore)
    odd = "tab\there, NUL \x00 and the escape \x1b kept"
    await store.create_block("ada", "raw", odd, description=f"desc {odd}")
    await store.update_block_text("ada", "raw", "plain now")

    (before,) = await store.block_history("ada", "raw")

    assert before.value == odd
    assert before.description == f"desc {odd}"
    assert before.changed_at.utcoffset() is not None
