"""Approvals in the memory database: shared between processes, migrated on their own."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import anyio
import pytest

from satchel import PermissionDeniedError
from satchel.consent import (
    ApprovalRequest,
    ConsentScope,
    Decision,
    PermissionBroker,
    SQLiteApprovalStore,
)
from satchel.consent._sqlite import MIGRATIONS
from satchel.memory import Permission, SQLiteStore

pytestmark = pytest.mark.anyio

SCOPE = ConsentScope.tool_execution("drop_table", {"table": "users"}, agent="ada")


def broker_on(path: Path) -> PermissionBroker:
    """A broker on its own connection to ``path``, as another process would have."""
    return PermissionBroker(SQLiteApprovalStore(path), poll_interval=0.02)


async def test_a_request_made_by_one_broker_is_listed_and_resolved_by_another(
    tmp_path: Path,
) -> None:
    server, cli = broker_on(tmp_path / "s.db"), broker_on(tmp_path / "s.db")
    request = await server.request(
        SCOPE, "drop users", "mcp", agent="ada", arguments={"table": "users"}, wait=False
    )
    listed = await cli.pending()
    assert [(r.id, r.origin, r.arguments) for r in listed] == [
        (request.id, "mcp", {"table": "users"})
    ]
    answer: list[ApprovalRequest] = []

    async def wait_in_server() -> None:
        answer.append(await server.wait(request.id))

    with anyio.fail_after(10):
        async with anyio.create_task_group() as group:
            group.start_soon(wait_in_server)
            await anyio.wait_all_tasks_blocked()
            await cli.resolve(request.id, Decision.approve_once(), by="cli")
    assert answer[0].status == "approved"
    assert (await server.consume(request.id, SCOPE)).status == "used"
    assert (await cli.get(request.id)).status == "used"  # type: ignore[union-attr]
    await server.close()
    await cli.close()


async def test_only_one_of_two_brokers_can_decide_a_request(tmp_path: Path) -> None:
    first, second = broker_on(tmp_path / "s.db"), broker_on(tmp_path / "s.db")
    request = await first.request(SCOPE, "drop users", "mcp", wait=False)
    outcomes: list[str] = []

    async def decide(broker: PermissionBroker, decision: Decision) -> None:
        try:
            await broker.resolve(request.id, decision, by="someone")
            outcomes.append(decision.kind)
        except Exception as exc:
            outcomes.append(type(exc).__name__)

    with anyio.fail_after(10):
        async with anyio.create_task_group() as group:
            group.start_soon(decide, first, Decision.approve_once())
            group.start_soon(decide, second, Decision.deny())
    assert sorted(outcomes)[0] == "ApprovalError"
    assert len(outcomes) == 2
    await first.close()
    await second.close()


async def test_requests_survive_closing_and_reopening(tmp_path: Path) -> None:
    async with broker_on(tmp_path / "s.db") as broker:
        request = await broker.request(SCOPE, "drop users", "cli", wait=False)
        await broker.resolve(request.id, Decision.approve_scope(), by="ada")
    async with broker_on(tmp_path / "s.db") as again:
        grant = await again.check(SCOPE)
        assert grant is not None
        assert grant.id == request.id


async def test_consent_tables_live_beside_the_memory_tables_their_migrations_in_the_one_table(
    tmp_path: Path,
) -> None:
    path = tmp_path / "satchel.db"
    async with await SQLiteStore.open(path, embedder=None) as memory:
        store = SQLiteApprovalStore(path)
        async with PermissionBroker(store) as broker:
            await broker.request(SCOPE, "drop users", "cli", wait=False)
            await memory.create_block("ada", "persona", "kept")
        assert store.applied_migrations == [m.name for m in MIGRATIONS]
    with sqlite3.connect(path) as conn:
        recorded = conn.execute(
            "SELECT component, name FROM _satchel_migrations ORDER BY rowid"
        ).fetchall()
        assert [name for component, name in recorded if component == "consent"] == [
            m.name for m in MIGRATIONS
        ]
        assert {component for component, _ in recorded} == {"memory", "consent"}
        assert conn.execute("SELECT count(*) FROM consent_approvals").fetchone() == (1,)
        assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    again = SQLiteApprovalStore(path)
    assert len(await again.list()) == 1
    assert again.applied_migrations == []
    await again.close()


async def test_a_closed_store_refuses_work(tmp_path: Path) -> None:
    from satchel import StorageError

    store = SQLiteApprovalStore(tmp_path / "s.db")
    await store.close()
    with pytest.raises(StorageError):
        await store.list()


async def test_the_broker_decides_memory_writes_that_need_consent(tmp_path: Path) -> None:
    path = tmp_path / "satchel.db"
    broker = broker_on(path)
    asked: list[ApprovalRequest] = []
    broker.subscribe(asked.append)
    async with await SQLiteStore.open(path, embedder=None, consent=broker) as memory:
        await memory.create_block("ada", "diary", "day one", permission=Permission.HUMAN)

        async def decide(decision: Decision) -> None:
            while not asked:
                await anyio.wait_all_tasks_blocked()
            request = asked.pop()
            assert request.scope.kind == "memory_edit"
            assert request.scope.label == "diary"
            await broker.resolve(request.id, decision, by="ada")

        with anyio.fail_after(10):
            async with anyio.create_task_group() as group:
                group.start_soon(decide, Decision.approve_once())
                block = await memory.append_to_block("ada", "diary", "day two")
        assert block.value.endswith("day two")

        refused: list[PermissionDeniedError] = []

        async def write_refused() -> None:
            try:
                await memory.append_to_block("ada", "diary", "day three")
            except PermissionDeniedError as exc:
                refused.append(exc)

        with anyio.fail_after(10):
            async with anyio.create_task_group() as group:
                group.start_soon(decide, Decision.deny())
                group.start_soon(write_refused)
        assert len(refused) == 1
        assert "day three" not in (await memory.get_block("ada", "diary")).value
    await broker.close()


async def test_a_standing_grant_lets_memory_writes_through_without_asking(tmp_path: Path) -> None:
    path = tmp_path / "satchel.db"
    broker = broker_on(path)
    scope = ConsentScope.memory_edit("diary", owner="ada", agent="ada", operation="append")
    grant = await broker.request(scope, "keep a diary", "cli", agent="ada", wait=False)
    await broker.resolve(grant.id, Decision.approve_for(3600), by="ada")
    async with await SQLiteStore.open(path, embedder=None, consent=broker) as memory:
        await memory.create_block("ada", "diary", "", permission=Permission.PARTNER)
        with anyio.fail_after(10):
            for day in range(3):
                await memory.append_to_block("ada", "diary", f"day {day}")
    assert await broker.pending() == []
    await broker.close()
