"""Contract: conversation messages."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from satchel.memory import MemoryStore, Message

pytestmark = pytest.mark.anyio

T0 = datetime(2024, 1, 1, 12, 0, tzinfo=UTC)


async def test_an_added_message_reads_back_with_every_field(store: MemoryStore) -> None:
    message = await store.add_message(
        "ada",
        "user",
        "hello there",
        conversation_id="c1",
        created_at=T0,
        tags=["greeting"],
        metadata={"dia_id": "D1:1"},
    )
    assert isinstance(message, Message)
    assert (message.agent, message.role, message.content) == ("ada", "user", "hello there")
    assert (message.conversation_id, message.created_at) == ("c1", T0)
    assert message.tags == ("greeting",)
    assert message.metadata == {"dia_id": "D1:1"}
    assert await store.list_messages("ada") == [message]


async def test_list_messages_returns_the_latest_oldest_first(store: MemoryStore) -> None:
    for i in range(5):
        await store.add_message(
            "ada", "user" if i % 2 else "assistant", f"m{i}", created_at=T0 + timedelta(minutes=i)
        )
    latest = await store.list_messages("ada", limit=3)
    assert [m.content for m in latest] == ["m2", "m3", "m4"]
    earlier = await store.list_messages("ada", limit=10, before=T0 + timedelta(minutes=2))
    assert [m.content for m in earlier] == ["m0", "m1"]


async def test_list_messages_filters_by_conversation_and_agent(store: MemoryStore) -> None:
    await store.add_message("ada", "user", "in one", conversation_id="one")
    await store.add_message("ada", "user", "in two", conversation_id="two")
    await store.add_message("bob", "user", "bob's")
    assert [m.content for m in await store.list_messages("ada", conversation_id="two")] == [
        "in two"
    ]
    assert [m.content for m in await store.list_messages("bob")] == ["bob's"]
    assert await store.list_messages("nobody") == []


async def test_messages_with_equal_times_keep_insertion_order(store: MemoryStore) -> None:
    for i in range(4):
        await store.add_message("ada", "user", f"m{i}", created_at=T0)
    assert [m.content for m in await store.list_messages("ada")] == ["m0", "m1", "m2", "m3"]


async def test_an_unknown_role_or_naive_time_is_rejected(store: MemoryStore) -> None:
    with pytest.raises(ValueError, match="role"):
        await store.add_message("ada", "robot", "x")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="timezone"):
        await store.add_message("ada", "user", "x", created_at=datetime(2024, 1, 1))
