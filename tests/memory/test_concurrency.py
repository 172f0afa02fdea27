"""Contract: concurrent writers never lose or duplicate a write."""

from __future__ import annotations

import anyio
import pytest

from satchel import AlreadyExistsError, VersionConflictError
from satchel.memory import MemoryStore

pytestmark = pytest.mark.anyio

WRITERS = 8
APPENDS = 200


async def test_concurrent_appends_from_8_writers_all_land_exactly_once(
    store: MemoryStore,
) -> None:
    await store.create_block("ada", "log", "")

    async def writer(number: int) -> None:
        for i in range(APPENDS):
            await store.append_to_block("ada", "log", f"w{number}-{i}")

    with anyio.fail_after(60):
        async with anyio.create_task_group() as group:
            for number in range(WRITERS):
                group.start_soon(writer, number)

    block = await store.get_block("ada", "log")
    lines = block.value.split("\n")
    expected = {f"w{n}-{i}" for n in range(WRITERS) for i in range(APPENDS)}
    assert len(lines) == WRITERS * APPENDS
    assert set(lines) == expected
    assert block.version == 1 + WRITERS * APPENDS
    for number in range(WRITERS):  # each writer's own lines stay in its order
        mine = [line for line in lines if line.startswith(f"w{number}-")]
        assert mine == [f"w{number}-{i}" for i in range(APPENDS)]


async def test_concurrent_appends_from_8_threads_all_land_exactly_once(
    store: MemoryStore,
) -> None:
    await store.create_block("ada", "log", "")

    def writer(number: int) -> None:
        for i in range(APPENDS):
            anyio.from_thread.run(store.append_to_block, "ada", "log", f"t{number}-{i}")

    with anyio.fail_after(60):
        async with anyio.create_task_group() as group:
            for number in range(WRITERS):
                group.start_soon(anyio.to_thread.run_sync, writer, number)

    lines = (await store.get_block("ada", "log")).value.split("\n")
    assert sorted(lines) == sorted(f"t{n}-{i}" for n in range(WRITERS) for i in range(APPENDS))


async def test_racing_optimistic_updates_let_exactly_one_win(store: MemoryStore) -> None:
    block = await store.create_block("ada", "doc", "v1")
    outcomes: list[str] = []

    async def update(number: int) -> None:
        try:
            await store.update_block_text(
                "ada", "doc", f"from {number}", expected_version=block.version
            )
            outcomes.append("won")
        except VersionConflictError:
            outcomes.append("conflict")

    with anyio.fail_after(30):
        async with anyio.create_task_group() as group:
            for number in range(8):
                group.start_soon(update, number)
    assert sorted(outcomes) == ["conflict"] * 7 + ["won"]
    assert (await store.get_block("ada", "doc")).version == 2


async def test_racing_creates_of_one_label_let_exactly_one_win(store: MemoryStore) -> None:
    outcomes: list[str] = []

    async def create(number: int) -> None:
        try:
            await store.create_block("ada", "same", f"from {number}")
            outcomes.append("won")
        except AlreadyExistsError:
            outcomes.append("exists")

    with anyio.fail_after(30):
        async with anyio.create_task_group() as group:
            for number in range(8):
                group.start_soon(create, number)
    assert sorted(outcomes) == ["exists"] * 7 + ["won"]
