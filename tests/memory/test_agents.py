"""Contract: a new agent starts with its template's blocks, once; agents are listed
with their counts."""

from __future__ import annotations

from collections.abc import Sequence

import anyio
import numpy as np
import numpy.typing as npt
import pytest

from satchel import NotFoundError
from satchel.memory import (
    AgentTemplate,
    BlockKind,
    BlockTemplate,
    Domain,
    MemoryStore,
    Permission,
    SQLiteStore,
    default_template,
    empty_template,
)
from satchel.memory.postgres import PostgresStore

from .conftest import HashEmbedder, StoreFactory

pytestmark = pytest.mark.anyio


async def _twin(store: MemoryStore) -> MemoryStore:
    """A second store on the same database, as another process would open it."""
    if isinstance(store, SQLiteStore):
        return await SQLiteStore.open(store.path, embedder=store.embedder)
    assert isinstance(store, PostgresStore)
    return await PostgresStore.open(store.backend._db.url, embedder=store.embedder)  # pyright: ignore[reportPrivateUsage]


async def test_a_new_agent_gets_persona_and_human_core_blocks_with_descriptions(
    store: MemoryStore,
) -> None:
    made = await store.ensure_agent("ada")

    assert [b.label for b in made] == ["persona", "human"]
    blocks = {b.label: b for b in await store.list_blocks("ada")}
    for label in ("persona", "human"):
        block = blocks[label]
        assert block.kind is BlockKind.CORE
        assert block.permission is Permission.READ_WRITE
        assert block.char_limit == 5000
        assert block.value == ""
        assert len(block.description) > 80
    assert "the person you talk with" in blocks["human"].description
    assert "you are" in blocks["persona"].description.lower()


async def test_the_first_append_to_human_on_a_new_agent_succeeds(store: MemoryStore) -> None:
    await store.ensure_agent("ada")

    block = await store.append_to_block("ada", "human", "Name: Ada Lovelace")

    assert block.value == "Name: Ada Lovelace"


async def test_a_deleted_or_archived_starting_block_does_not_come_back(
    store: MemoryStore,
) -> None:
    await store.ensure_agent("ada")
    await store.configure_block("ada", "human", permission=Permission.ADMIN)
    await store.delete_block("ada", "human")
    await store.set_kind("ada", "persona", BlockKind.ARCHIVAL)

    again = await store.ensure_agent("ada")

    assert again == []
    with pytest.raises(NotFoundError):
        await store.get_block("ada", "human")
    assert (await store.get_block("ada", "persona")).kind is BlockKind.ARCHIVAL


async def test_setting_up_an_agent_keeps_blocks_it_already_owns(store: MemoryStore) -> None:
    await store.create_block("ada", "human", "Ada, 36, Lisbon", description="mine")

    made = await store.ensure_agent("ada")

    assert [b.label for b in made] == ["persona"]
    human = await store.get_block("ada", "human")
    assert (human.value, human.description, human.version) == ("Ada, 36, Lisbon", "mine", 1)


async def test_an_empty_template_sets_the_agent_up_with_no_blocks(store: MemoryStore) -> None:
    assert await store.ensure_agent("ada", empty_template()) == []

    assert await store.list_blocks("ada") == []
    assert await store.ensure_agent("ada") == []  # set up: the default does not apply later
    assert await store.list_blocks("ada") == []
    [summary] = await store.describe_agents()
    assert (summary.name, summary.initialised, summary.template) == ("ada", True, "none")


async def test_a_template_creates_its_blocks_with_every_field(store: MemoryStore) -> None:
    template = AgentTemplate(
        name="bakery",
        blocks=(
            BlockTemplate(
                label="persona",
                value="I am Sam.",
                description="Who you are.",
                char_limit=100,
                permission=Permission.APPEND,
                pinned=True,
            ),
            BlockTemplate(label="recipes", value="Rye: 1kg flour", kind=BlockKind.ARCHIVAL),
        ),
    )

    await store.ensure_agent("sam", template)

    persona = await store.get_block("sam", "persona")
    assert (persona.value, persona.description, persona.char_limit) == (
        "I am Sam.",
        "Who you are.",
        100,
    )
    assert (persona.permission, persona.pinned) == (Permission.APPEND, True)
    hits = await store.search("sam", "rye flour", domains=Domain.ARCHIVAL_MEMORY)
    assert [h.label for h in hits] == ["recipes"]


async def test_agents_are_set_up_independently(store: MemoryStore) -> None:
    await store.ensure_agent("ada", empty_template())

    made = await store.ensure_agent("bob")

    assert [b.label for b in made] == ["persona", "human"]
    assert await store.list_blocks("ada") == []


async def test_two_stores_setting_up_one_agent_at_once_create_each_block_once(
    store: MemoryStore,
) -> None:
    other = await _twin(store)
    results: list[list[str]] = []

    async def ensure(on: MemoryStore, agent: str) -> None:
        results.append([b.label for b in await on.ensure_agent(agent)])

    try:
        with anyio.fail_after(60):
            for round_ in range(5):
                async with anyio.create_task_group() as group:
                    for on in (store, other, store, other):
                        group.start_soon(ensure, on, f"agent{round_}")
    finally:
        await other.close()

    for round_ in range(5):
        labels = sorted(b.label for b in await store.list_blocks(f"agent{round_}"))
        assert labels == ["human", "persona"]
    assert sorted(map(tuple, results)) == [()] * 15 + [("persona", "human")] * 5


async def test_describe_agents_counts_blocks_archival_entries_and_messages(
    store: MemoryStore,
) -> None:
    await store.ensure_agent("ada")
    await store.create_block("ada", "trip", "Kyoto", kind=BlockKind.ARCHIVAL)
    await store.add_message("ada", "user", "hello")
    await store.add_message("ada", "assistant", "hi")
    await store.create_block("bob", "notes", "b")  # used, never set up
    await store.share_block("bob", "notes", "cyd", Permission.READ_ONLY)  # cyd only receives

    summaries = await store.describe_agents()

    assert [s.name for s in summaries] == ["ada", "bob"]
    ada, bob = summaries
    assert (ada.blocks, ada.archival, ada.messages) == (2, 1, 2)
    assert (ada.initialised, ada.template) == (True, "default")
    assert (bob.blocks, bob.archival, bob.messages) == (1, 0, 0)
    assert (bob.initialised, bob.template) == (False, None)
    for summary in summaries:
        assert summary.created_at is not None
        assert summary.last_active is not None
        assert summary.created_at <= summary.last_active
    [only] = await store.describe_agents("bob")
    assert only == bob
    assert await store.describe_agents("nobody") == []


async def test_the_default_template_is_letta_s_two_core_blocks() -> None:
    template = default_template()

    assert template.labels == ("persona", "human")
    assert template.name == "default"


class _CountingEmbedder(HashEmbedder):
    def __init__(self) -> None:
        self.texts: list[str] = []

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        self.texts.extend(texts)
        return super().embed(texts)


async def test_an_agent_set_up_before_costs_no_embedding_of_the_template(
    make_store: StoreFactory,
) -> None:
    embedder = _CountingEmbedder()
    store = await make_store(embedder=embedder)
    template = AgentTemplate(blocks=(BlockTemplate(label="persona", value="I am Sam."),))
    await store.ensure_agent("sam", template)
    embedded = len(embedder.texts)

    assert await store.ensure_agent("sam", template) == []

    assert embedded >= 1
    assert len(embedder.texts) == embedded
