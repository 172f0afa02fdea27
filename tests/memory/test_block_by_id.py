"""Contract: :meth:`MemoryStore.get_block_by_id` reads exactly the blocks
:meth:`MemoryStore.get_block` reads by label: the agent's own and those shared with it,
as the agent sees them; bad ids are refused clearly."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from satchel import InvalidInputError, NotFoundError
from satchel.memory import AgentMemory, BlockKind, MemoryStore, Permission

pytestmark = pytest.mark.anyio


async def test_an_agent_reads_its_own_block_by_id(store: MemoryStore) -> None:
    created = await store.create_block("ada", "notes", "tea", kind=BlockKind.ARCHIVAL)
    found = await store.get_block_by_id("ada", created.id)
    assert found == await store.get_block("ada", "notes")
    assert (found.label, found.value, found.kind) == ("notes", "tea", BlockKind.ARCHIVAL)


async def test_a_shared_block_reads_by_id_at_the_share_and_hides_other_shares(
    store: MemoryStore,
) -> None:
    created = await store.create_block("ada", "plan", "step 1")
    await store.share_block("ada", "plan", "bob", Permission.READ_ONLY)
    await store.share_block("ada", "plan", "cy", Permission.READ_WRITE)
    seen = await store.get_block_by_id("bob", created.id)
    assert seen == await store.get_block("bob", "ada/plan")
    assert seen.shares == {"bob": Permission.READ_ONLY}  # not who else it is shared with


async def test_another_agent_s_unshared_block_is_not_found_by_id(store: MemoryStore) -> None:
    secret = await store.create_block("ada", "diary", "private", kind=BlockKind.ARCHIVAL)
    await store.create_block("bob", "notes", "bob's")
    with pytest.raises(NotFoundError) as caught:
        await store.get_block_by_id("bob", secret.id)
    assert "private" not in str(caught.value)
    with pytest.raises(NotFoundError):  # an agent no one used yet
        await store.get_block_by_id("nobody", secret.id)


async def test_an_unshared_block_is_not_found_by_id_any_more(store: MemoryStore) -> None:
    created = await store.create_block("ada", "plan", "step 1")
    await store.share_block("ada", "plan", "bob", Permission.READ_ONLY)
    await store.unshare_block("ada", "plan", "bob")
    with pytest.raises(NotFoundError):
        await store.get_block_by_id("bob", created.id)


async def test_a_deleted_block_is_not_found_by_id(store: MemoryStore) -> None:
    created = await store.create_block("ada", "gone", "x", permission=Permission.ADMIN)
    await store.delete_block("ada", "gone")
    with pytest.raises(NotFoundError):
        await store.get_block_by_id("ada", created.id)


@pytest.mark.parametrize("bad", ["", "x" * 257, "a\x00b", "line\nbreak"])
async def test_an_impossible_id_is_invalid_input(store: MemoryStore, bad: str) -> None:
    with pytest.raises(InvalidInputError, match="an id is 1-256 characters"):
        await store.get_block_by_id("ada", bad)


async def test_agent_memory_reads_by_id_for_its_agent(store: MemoryStore) -> None:
    created = await store.create_block("ada", "notes", "tea")
    assert (await AgentMemory(store, "ada").get_block_by_id(created.id)).value == "tea"
    with pytest.raises(NotFoundError):
        await AgentMemory(store, "bob").get_block_by_id(created.id)


@settings(max_examples=25, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(st.characters(min_codepoint=0x20, exclude_categories=("Cs",)), max_size=256))
async def test_any_text_is_found_only_as_a_visible_block_s_id(
    store: MemoryStore, probe: str
) -> None:
    if not await store.list_blocks("ada"):
        await store.create_block("ada", "notes", "tea")
    own = {b.id for b in await store.list_blocks("ada")}
    try:
        found = await store.get_block_by_id("ada", probe)
    except NotFoundError:
        assert probe not in own
    except InvalidInputError:
        assert probe == "" or "\x7f" in probe
    else:
        assert found.id == probe
        assert probe in own
