"""``GatedStore.merge_agents``: one person's memory split under two names brought
together, on both backends: nothing lost, shares kept, one transaction."""

from __future__ import annotations

import pytest

from satchel._errors import InvalidInputError, NotFoundError, VersionConflictError
from satchel.memory import BlockKind, Domain, GatedStore, MemoryStore, Permission
from satchel.memory._merge import join_lines, plan_merge

pytestmark = pytest.mark.anyio


def _gated(store: MemoryStore) -> GatedStore:
    assert isinstance(store, GatedStore)
    return store


async def _split_person(store: MemoryStore) -> None:
    """``default`` (the editors) and ``me`` (Claude Desktop): one person, two names."""
    await store.ensure_agent("default")
    await store.ensure_agent("me")
    await store.append_to_block("default", "human", "Uses tabs.")
    await store.append_to_block("default", "human", "Lives in Oslo.")
    await store.append_to_block("me", "human", "Lives in Oslo.")
    await store.append_to_block("me", "human", "Likes green tea.")
    await store.create_block(
        "default", "dentist", "Dr Lee, Tuesdays.", kind=BlockKind.ARCHIVAL, tags=["health"]
    )
    await store.add_message("default", "user", "Remember the dentist.", conversation_id="c1")
    await store.share_block("default", "human", "project:app", Permission.READ_WRITE)
    await store.create_block("project:app", "project", "Builds with make.")
    await store.share_block("project:app", "project", "default", Permission.APPEND)


async def test_merging_joins_same_labels_and_moves_the_rest_losing_nothing(
    store: MemoryStore,
) -> None:
    await _split_person(store)
    human_before = await store.get_block("me", "human")

    report = await _gated(store).merge_agents("default", "me")

    human = await store.get_block("me", "human")
    assert human.value.splitlines() == ["Lives in Oslo.", "Likes green tea.", "Uses tabs."]
    assert human.id == human_before.id
    assert human.version == human_before.version + 1
    assert human.shares == {"project:app": Permission.READ_WRITE}  # the project keeps it
    in_project = await store.get_block("project:app", "me/human")
    assert "Uses tabs." in in_project.value
    dentist = await store.get_block("me", "dentist")
    assert (dentist.value, dentist.tags, dentist.kind) == (
        "Dr Lee, Tuesdays.",
        ("health",),
        BlockKind.ARCHIVAL,
    )
    [message] = await store.list_messages("me", conversation_id="c1")
    assert message.content == "Remember the dentist."
    shared_in = await store.get_block("me", "project:app/project")
    assert shared_in.shares == {"me": Permission.APPEND}
    assert await store.list_blocks("default") == []
    assert await store.list_messages("default") == []
    hits = await store.search("me", "dentist Lee", domains=Domain.ARCHIVAL_MEMORY)
    assert [hit.label for hit in hits][:1] == ["dentist"]
    assert [j.label for j in report.joined] == ["human", "persona"]
    assert report.joined[0].lines_added == 1
    assert report.moved == ["dentist"]
    assert (report.messages, report.reshared, report.dry_run) == (1, 1, False)
    history = await _gated(store).block_history("me", "human")
    assert history[-1].value == human_before.value  # the joined block's history is kept


async def test_a_dry_run_reports_the_same_and_writes_nothing(store: MemoryStore) -> None:
    await _split_person(store)
    human = await store.get_block("default", "human")

    preview = await _gated(store).merge_agents("default", "me", dry_run=True)
    done = await _gated(store).merge_agents("default", "me")

    assert preview.model_dump(exclude={"dry_run"}) == done.model_dump(exclude={"dry_run"})
    assert preview.dry_run
    assert not done.dry_run
    with pytest.raises(NotFoundError):
        await store.get_block("default", "human")
    assert human.value != ""


async def test_a_merge_that_meets_a_write_made_meanwhile_writes_nothing(
    store: MemoryStore,
) -> None:
    await _split_person(store)
    gated = _gated(store)
    owned = [b for b in await store.list_blocks("default") if b.agent == "default"]
    theirs = [b for b in await store.list_blocks("me") if b.agent == "me"]
    steps, _, _ = plan_merge("default", "me", owned, theirs)
    await store.append_to_block("me", "human", "Written meanwhile.")

    with pytest.raises(VersionConflictError):
        await gated.backend.merge_agents(steps)

    assert "Uses tabs." in (await store.get_block("default", "human")).value
    assert (await store.get_block("me", "human")).value.endswith("Written meanwhile.")
    assert len(await store.list_messages("default")) == 1


async def test_merging_an_agent_into_itself_is_refused(store: MemoryStore) -> None:
    with pytest.raises(InvalidInputError):
        await _gated(store).merge_agents("me", "me")


def test_joining_adds_only_the_lines_the_kept_text_lacks() -> None:
    assert join_lines("", "a\n\nb") == ("a\nb", 2)
    assert join_lines("a\n", "  a  \nc") == ("a\nc", 1)
    assert join_lines("a", "a") == ("a", 0)
