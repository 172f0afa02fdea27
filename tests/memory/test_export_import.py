"""Contract: export streams every record exactly as stored, import restores it exactly
(ids, versions, times, shares) without the permission gate but never sharing above a
block's permission, conflicts follow ``on_conflict``, a bad record or a conflict
anywhere leaves nothing of the import written, and list_agents names every owner. Plus
one move from SQLite to PostgreSQL."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from satchel import AlreadyExistsError, CharLimitError, InvalidInputError, PermissionDeniedError
from satchel.memory import (
    Block,
    BlockKind,
    Domain,
    ImportReport,
    MemoryStore,
    Message,
    OnConflict,
    Permission,
    SQLiteStore,
)
from satchel.memory.postgres import PostgresStore

from .conftest import HashEmbedder, PostgresDatabases, StoreFactory

pytestmark = pytest.mark.anyio

T0 = datetime(2024, 5, 1, 12, 0, 0, 123456, tzinfo=UTC)


async def populate(store: MemoryStore) -> None:
    """Blocks of every shape (shares, tags, metadata, kinds, edits, a NUL) and messages."""
    await store.create_block(
        "ada",
        "persona",
        "I am Ada.",
        description="who I am",
        pinned=True,
        char_limit=500,
        tags=("me", "core"),
        metadata={"source": "seed", "n": [1, 2]},
    )
    await store.append_to_block("ada", "persona", "I like compilers.")
    await store.create_block(
        "ada",
        "trip",
        "Kyoto in April, cherry blossoms",
        kind=BlockKind.ARCHIVAL,
        permission=Permission.ADMIN,
    )
    await store.share_block("ada", "trip", "bob", Permission.APPEND)
    await store.share_block("ada", "trip", "cyd", Permission.READ_ONLY)
    await store.create_block("bob", "odd", "nul \x00 inside", permission=Permission.READ_ONLY)
    await store.create_block("bob", "empty")
    for i, (who, conversation) in enumerate(
        [("ada", "c1"), ("ada", "c2"), ("bob", "default"), ("ada", "c1")]
    ):
        await store.add_message(
            who,
            "user" if i % 2 == 0 else "assistant",
            f"message {i} about the harbour ferry",
            conversation_id=conversation,
            created_at=T0 + timedelta(minutes=i),
            tags=("t",) if i else (),
            metadata={"i": i},
        )
    await store.add_message("ada", "tool", "same moment", created_at=T0)


async def export_all(store: MemoryStore, agent: str | None = None) -> list[Block | Message]:
    return [record async for record in store.export_records(agent)]


async def test_list_agents_names_every_owner_but_not_agents_that_only_receive_shares(
    store: MemoryStore,
) -> None:
    assert await store.list_agents() == []
    await store.create_block("bob", "notes", "x")
    await store.share_block("bob", "notes", "zed", Permission.READ_ONLY)
    await store.add_message("ada", "user", "hi")
    assert await store.list_agents() == ["ada", "bob"]


async def test_export_streams_blocks_by_owner_and_label_then_messages_by_owner_and_time(
    store: MemoryStore,
) -> None:
    await populate(store)
    records = await export_all(store)
    blocks = [r for r in records if isinstance(r, Block)]
    messages = [r for r in records if isinstance(r, Message)]
    assert records == [*blocks, *messages]
    assert [(b.agent, b.label) for b in blocks] == [
        ("ada", "persona"),
        ("ada", "trip"),
        ("bob", "empty"),
        ("bob", "odd"),
    ]
    assert blocks[1].shares == {"bob": Permission.APPEND, "cyd": Permission.READ_ONLY}
    assert blocks[0].version == 2
    assert [(m.agent, m.created_at) for m in messages] == sorted(
        (m.agent, m.created_at) for m in messages
    )
    assert [m.content for m in messages if m.created_at == T0] == [
        "message 0 about the harbour ferry",
        "same moment",
    ]
    assert await export_all(store) == records
    only_bob = await export_all(store, "bob")
    assert only_bob == [r for r in records if r.agent == "bob"]


async def test_import_into_an_empty_store_restores_every_record_exactly(
    make_store: StoreFactory,
) -> None:
    source, target = await make_store(), await make_store()
    await populate(source)
    records = await export_all(source)
    report = await target.import_records(records, batch_size=3)
    assert report == ImportReport(blocks=4, messages=5, skipped=0)
    assert await export_all(target) == records
    assert await target.list_agents() == ["ada", "bob"]
    assert (await target.get_block("bob", "ada/trip")).value.startswith("Kyoto")
    hits = await target.search("ada", "cherry blossoms Kyoto", mode="vector")
    assert hits
    assert hits[0].label == "trip"
    hits = await target.search("bob", "harbour ferry", domains=Domain.CONVERSATIONS)
    assert [h.text for h in hits] == ["message 2 about the harbour ferry"]


async def test_import_conflicts_raise_by_default_and_write_nothing_of_the_batch(
    store: MemoryStore,
) -> None:
    await populate(store)
    before = await export_all(store)
    fresh = before[0].model_copy(update={"id": "new-id", "label": "fresh"})
    clash = before[1].model_copy(update={"id": "other-id"})  # same owner and label
    with pytest.raises(AlreadyExistsError):
        await store.import_records([fresh, clash])
    with pytest.raises(AlreadyExistsError):
        await store.import_records([before[-1]])  # same message id
    assert await export_all(store) == before


async def test_import_skip_keeps_the_stored_records(store: MemoryStore) -> None:
    await populate(store)
    before = await export_all(store)
    changed = [
        before[0].model_copy(update={"value": "changed", "version": 9}),
        before[-1].model_copy(update={"content": "changed"}),
    ]
    new = Message(id="m-new", agent="eve", role="user", content="new one", created_at=T0)
    report = await store.import_records([*changed, new], on_conflict="skip")
    assert report == ImportReport(blocks=0, messages=1, skipped=2)
    after = await export_all(store)
    assert [r for r in after if r.agent != "eve"] == before
    assert [r for r in after if r.agent == "eve"] == [new]


async def test_import_replace_overwrites_by_id_or_label_without_the_permission_gate(
    store: MemoryStore,
) -> None:
    await populate(store)
    before = await export_all(store)
    odd = next(r for r in before if isinstance(r, Block) and r.label == "odd")  # read_only
    new_odd = odd.model_copy(update={"value": "restored", "version": 7, "tags": ("x",)})
    by_label = odd.model_copy(update={"id": "renamed", "label": "empty", "value": "by label"})
    report = await store.import_records([new_odd, by_label], on_conflict="replace")
    assert report == ImportReport(blocks=2, messages=0, skipped=0)
    blocks = {b.label: b for b in await export_all(store, "bob") if isinstance(b, Block)}
    assert blocks["odd"] == new_odd
    assert blocks["empty"] == by_label
    assert (await store.get_block("bob", "odd")).value == "restored"


@pytest.mark.parametrize("on_conflict", ["error", "skip", "replace"])
async def test_an_import_never_takes_another_agents_record_by_its_id(
    store: MemoryStore, on_conflict: OnConflict
) -> None:
    await populate(store)
    before = await export_all(store)
    odd = next(r for r in before if isinstance(r, Block) and r.label == "odd")  # bob's
    said = next(r for r in before if isinstance(r, Message) and r.agent == "ada")
    stolen = odd.model_copy(update={"agent": "eve", "label": "stolen", "value": "mine"})
    echoed = said.model_copy(update={"agent": "eve", "content": "mine"})
    refusals: list[str] = []
    for record in (stolen, echoed):
        with pytest.raises(InvalidInputError) as refused:
            await store.import_records([record], on_conflict=on_conflict)
        refusals.append(refused.value.message)
    assert await export_all(store) == before
    for message in refusals:
        assert "cannot be used for 'eve'" in message
        assert "bob" not in message  # neither whose it is, nor that it exists
        assert "ada" not in message
        assert "already" not in message


async def test_import_refuses_a_value_over_its_char_limit_and_writes_nothing(
    store: MemoryStore,
) -> None:
    await populate(store)
    before = await export_all(store)
    good = Block(id="g", agent="ada", label="good", value="v", created_at=T0, updated_at=T0)
    big = Block(
        id="b1", agent="ada", label="big", value="x" * 20, char_limit=5,
        created_at=T0, updated_at=T0 + timedelta(days=1), version=3,
    )  # fmt: skip
    for mode in ("error", "skip", "replace"):
        with pytest.raises(CharLimitError) as refused:
            await store.import_records([good, big], on_conflict=mode)
        assert "block 'big'" in refused.value.message
        assert "20 characters, over its char_limit of 5" in refused.value.message
        assert "Nothing was imported" in refused.value.message
        assert refused.value.details == {
            "position": 1, "id": "b1", "agent": "ada", "label": "big",
            "chars": 20, "char_limit": 5,
        }  # fmt: skip
        assert await export_all(store) == before
    at_limit = big.model_copy(update={"char_limit": 20})
    await store.import_records([at_limit])
    assert await store.get_block("ada", "big") == at_limit


async def test_a_soft_store_keeps_a_value_over_its_char_limit_and_its_export_restores_exactly(
    make_store: StoreFactory,
) -> None:
    soft = await make_store(char_limit_mode="soft")
    await soft.create_block("ada", "small", "abc", char_limit=5)
    await soft.append_to_block("ada", "small", "defgh")  # soft: over its limit, kept
    exported = await export_all(soft)
    restored = await make_store(char_limit_mode="soft")
    await restored.import_records(exported)
    assert await export_all(restored) == exported
    hard = await make_store()
    with pytest.raises(CharLimitError, match="'small'"):
        await hard.import_records(exported)
    assert await export_all(hard) == []


@pytest.mark.parametrize(
    "bad",
    [
        {"label": "a/b"},
        {"agent": " ada"},
        {"created_at": datetime(2024, 1, 1)},  # naive
        {"tags": ("t", "t")},
        {"version": 0},
        {"char_limit": -1},
        {"shares": {"ada": Permission.READ_ONLY}},  # shared with its owner
        {"metadata": {"x": float("nan")}},
        {"id": ""},
    ],
)
async def test_a_bad_record_is_refused_and_leaves_the_store_unchanged(
    store: MemoryStore, bad: dict[str, object]
) -> None:
    await populate(store)
    before = await export_all(store)
    good = Block(id="g", agent="ada", label="good", value="v", created_at=T0, updated_at=T0)
    broken = good.model_copy(update={"id": "b", "label": "other", **bad})
    with pytest.raises(ValueError, match="import record 1"):
        await store.import_records([good, broken])
    assert await export_all(store) == before


async def test_import_rejects_what_is_not_a_record(store: MemoryStore) -> None:
    with pytest.raises(ValueError, match="not a Block or Message"):
        await store.import_records(["text"])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="on_conflict"):
        await store.import_records([], on_conflict="merge")  # type: ignore[arg-type]
    assert await store.import_records([]) == ImportReport()


@pytest.mark.postgres
async def test_records_move_from_sqlite_to_postgres_unchanged(
    tmp_path: Path, postgres_databases: PostgresDatabases
) -> None:
    async with await SQLiteStore.open(tmp_path / "m.db", embedder=HashEmbedder()) as source:
        await populate(source)
        records = await export_all(source)
    async with await PostgresStore.open(
        postgres_databases.fresh(), embedder=HashEmbedder()
    ) as target:
        report = await target.import_records(records)
        assert report == ImportReport(blocks=4, messages=5, skipped=0)
        assert await export_all(target) == records
        assert await target.list_agents() == ["ada", "bob"]
        hits = await target.search("ada", "cherry blossoms in Kyoto")
        assert hits
        assert hits[0].label == "trip"
        assert hits[0].vector_rank is not None
        hits = await target.search("bob", "ferry", domains=Domain.CONVERSATIONS)
        assert [h.text for h in hits] == ["message 2 about the harbour ferry"]


# --- issue 11: imports cannot grant more than the gate, and are all or nothing ----------


async def test_an_import_cannot_share_a_block_above_its_own_permission(
    store: MemoryStore,
) -> None:
    await populate(store)
    before = await export_all(store)
    hostile = Block(
        id="h1", agent="ada", label="locked", value="do not delete",
        permission=Permission.READ_ONLY, shares={"bob": Permission.ADMIN},
        created_at=T0, updated_at=T0,
    )  # fmt: skip
    with pytest.raises(ValueError, match="above the block's own permission 'read_only'"):
        await store.import_records([hostile])
    assert await export_all(store) == before
    at_most = hostile.model_copy(update={"shares": {"bob": Permission.READ_ONLY}})
    await store.import_records([at_most])
    with pytest.raises(PermissionDeniedError):
        await store.delete_block("bob", "ada/locked")


def _deep(levels: int) -> dict[str, object]:
    value: dict[str, object] = {}
    for _ in range(levels):
        value = {"a": value}
    return value


_BLOCK = Block(id="b-new", agent="ada", label="new", value="v", created_at=T0, updated_at=T0)
_MESSAGE = Message(id="m-new", agent="ada", role="user", content="hi", created_at=T0)


@pytest.mark.parametrize(
    ("record", "problem"),
    [
        (_BLOCK.model_copy(update={"value": "half \ud800 a pair"}), "value holds a lone surrogate"),
        (_MESSAGE.model_copy(update={"content": "\udfff"}), "content holds a lone surrogate"),
        (_BLOCK.model_copy(update={"tags": ("ok", "\ud83d")}), "a tag holds a lone surrogate"),
        (_MESSAGE.model_copy(update={"metadata": {"k": ["\udc00"]}}), "metadata holds a lone"),
        (_BLOCK.model_copy(update={"version": 2**70}), "version must be from 1 to 2147483647"),
        (_BLOCK.model_copy(update={"version": 2**31}), "version must be from 1"),
        (_BLOCK.model_copy(update={"char_limit": 2**70}), "char_limit must be from 0"),
        (_BLOCK.model_copy(update={"metadata": _deep(5_000)}), "metadata is nested too deeply"),
    ],
)
async def test_an_unstorable_record_is_refused_with_a_value_error_and_nothing_is_written(
    store: MemoryStore, record: Block | Message, problem: str
) -> None:
    await populate(store)
    before = await export_all(store)
    with pytest.raises(ValueError, match=f"import record 1 .*{re.escape(problem)}"):
        await store.import_records([_MESSAGE.model_copy(update={"id": "first"}), record])
    assert await export_all(store) == before


async def test_a_conflict_in_a_later_batch_leaves_nothing_of_the_earlier_batches(
    store: MemoryStore,
) -> None:
    await populate(store)
    before = await export_all(store)
    fresh = [
        Message(id=f"new-{i}", agent="eve", role="user", content=f"m {i}", created_at=T0)
        for i in range(5)
    ]
    with pytest.raises(AlreadyExistsError):
        await store.import_records([*fresh, before[-1]], batch_size=2)
    with pytest.raises(ValueError, match="import record 5"):
        await store.import_records([*fresh, _BLOCK.model_copy(update={"version": 0})], batch_size=2)
    assert await export_all(store) == before
    assert await store.list_agents() == ["ada", "bob"]


async def test_a_source_that_breaks_midway_leaves_nothing_written(store: MemoryStore) -> None:
    pulled: list[int] = []

    def records() -> Iterator[Message]:
        for i in range(10):
            pulled.append(i)
            yield Message(id=f"s-{i}", agent="eve", role="user", content=f"{i}", created_at=T0)
        raise RuntimeError("the source broke after 10 records")

    with pytest.raises(RuntimeError, match="source broke"):
        await store.import_records(records(), batch_size=4)
    assert pulled == list(range(10))
    assert await export_all(store) == []
