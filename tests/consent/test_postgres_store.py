"""Approvals in PostgreSQL: shared between processes, migrated on their own."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import anyio
import psycopg
import pytest

from postgres_server import PostgresServer
from satchel import StorageError
from satchel.consent import (
    ApprovalError,
    ApprovalRequest,
    ApprovalStore,
    ConsentScope,
    Decision,
    PermissionBroker,
    PostgresApprovalStore,
)
from satchel.consent._postgres import MIGRATIONS

pytestmark = [pytest.mark.anyio, pytest.mark.postgres]

SCOPE = ConsentScope.tool_execution("drop_table", {"table": "users"}, agent="ada")
OTHER = ConsentScope.tool_execution("drop_table", {"table": "orders"}, agent="ada")
T0 = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)


@pytest.fixture
def url(postgres_server: PostgresServer) -> Iterator[str]:
    made = postgres_server.create_database()
    yield made
    postgres_server.drop_database(made)


def broker_on(url: str) -> PermissionBroker:
    """A broker with its own pool on ``url``, as another process would have."""
    return PermissionBroker(PostgresApprovalStore(url), poll_interval=0.02)


def record(rid: str, *, scope: ConsentScope = SCOPE, seconds: float = 0) -> ApprovalRequest:
    created = T0 + timedelta(seconds=seconds)
    return ApprovalRequest(
        id=rid,
        scope=scope,
        reason="drop users",
        origin="cli",
        agent="ada",
        created_at=created,
        expires_at=created + timedelta(minutes=5),
    )


def query(url: str, sql: str) -> list[tuple[object, ...]]:
    with psycopg.connect(url) as conn:
        return conn.execute(sql.encode()).fetchall()


async def test_it_is_an_approval_store(url: str) -> None:
    store = PostgresApprovalStore(url)
    assert isinstance(store, ApprovalStore)
    await store.close()


def test_connection_counts_are_checked() -> None:
    with pytest.raises(ValueError, match="min_connections"):
        PostgresApprovalStore("postgresql://x/y", min_connections=3, max_connections=2)
    with pytest.raises(ValueError, match="min_connections"):
        PostgresApprovalStore("postgresql://x/y", min_connections=0, max_connections=0)


async def test_records_round_trip_and_list_oldest_first(url: str) -> None:
    store = PostgresApprovalStore(url, min_connections=0, max_connections=2)
    late, early = record("late", seconds=10), record("early", scope=OTHER)
    odd = record("odd", seconds=5).model_copy(
        update={"arguments": {"text": "nul\x00 and ünïcode 🎉", "n": 1.0}}
    )
    for item in (late, early, odd):
        await store.insert(item)
    assert await store.get("late") == late
    assert await store.get("odd") == odd
    assert await store.get("missing") is None
    assert [r.id for r in await store.list()] == ["early", "odd", "late"]
    assert [r.id for r in await store.list("pending")] == ["early", "odd", "late"]
    assert await store.list("approved") == []
    assert [r.id for r in await store.by_scope(SCOPE.key, "pending")] == ["odd", "late"]
    assert [r.id for r in await store.by_scope(OTHER.key, "pending")] == ["early"]
    assert await store.by_scope(SCOPE.key, "approved") == []
    await store.close()


async def test_equal_creation_times_keep_insertion_order(url: str) -> None:
    store = PostgresApprovalStore(url)
    for rid in ("c", "a", "b"):
        await store.insert(record(rid))
    assert [r.id for r in await store.list()] == ["c", "a", "b"]
    await store.close()


async def test_a_duplicate_id_is_a_storage_error(url: str) -> None:
    store = PostgresApprovalStore(url)
    await store.insert(record("x"))
    with pytest.raises(StorageError) as caught:
        await store.insert(record("x", seconds=1))
    assert caught.value.details["sqlstate"] == "23505"
    await store.close()


async def test_swap_replaces_only_when_the_status_is_as_expected(url: str) -> None:
    store = PostgresApprovalStore(url)
    pending = record("x")
    await store.insert(pending)
    approved = pending.model_copy(update={"status": "approved", "decided_by": "ada"})
    assert await store.swap(approved, expect="denied") is False
    assert await store.get("x") == pending
    assert await store.swap(approved, expect="pending") is True
    assert await store.get("x") == approved
    assert await store.swap(approved, expect="pending") is False
    assert [r.id for r in await store.by_scope(SCOPE.key, "approved")] == ["x"]
    assert await store.list("pending") == []
    assert await store.swap(record("unknown"), expect="pending") is False
    await store.close()


async def test_many_racing_swaps_have_exactly_one_winner(url: str) -> None:
    stores = [PostgresApprovalStore(url) for _ in range(8)]
    await stores[0].insert(record("x"))
    won: list[int] = []

    async def decide(index: int) -> None:
        update = record("x").model_copy(update={"status": "approved", "decided_by": str(index)})
        if await stores[index].swap(update, expect="pending"):
            won.append(index)

    with anyio.fail_after(20):
        async with anyio.create_task_group() as group:
            for index in range(len(stores)):
                group.start_soon(decide, index)
    assert len(won) == 1
    stored = await stores[0].get("x")
    assert stored is not None
    assert stored.decided_by == str(won[0])
    for store in stores:
        await store.close()


async def test_a_request_made_by_one_broker_is_listed_and_resolved_by_another(
    url: str,
) -> None:
    server, cli = broker_on(url), broker_on(url)
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
    with pytest.raises(ApprovalError):
        await cli.consume(request.id, SCOPE)
    await server.close()
    await cli.close()


async def test_only_one_of_two_brokers_can_decide_a_request(url: str) -> None:
    first, second = broker_on(url), broker_on(url)
    request = await first.request(SCOPE, "drop users", "mcp", wait=False)
    outcomes: list[str] = []

    async def decide(broker: PermissionBroker, decision: Decision) -> None:
        try:
            await broker.resolve(request.id, decision, by="someone")
            outcomes.append(decision.kind)
        except ApprovalError as exc:
            outcomes.append(type(exc).__name__)

    with anyio.fail_after(10):
        async with anyio.create_task_group() as group:
            group.start_soon(decide, first, Decision.approve_once())
            group.start_soon(decide, second, Decision.deny())
    assert len(outcomes) == 2
    assert outcomes.count("ApprovalError") == 1
    winner = next(o for o in outcomes if o != "ApprovalError")
    stored = await second.get(request.id)
    assert stored is not None
    assert stored.status == ("approved" if winner == "approve_once" else "denied")
    await first.close()
    await second.close()


async def test_requests_survive_closing_and_reopening(url: str) -> None:
    async with broker_on(url) as broker:
        request = await broker.request(SCOPE, "drop users", "cli", wait=False)
        await broker.resolve(request.id, Decision.approve_scope(), by="ada")
    async with broker_on(url) as again:
        grant = await again.check(SCOPE)
        assert grant is not None
        assert grant.id == request.id
        assert await again.check(OTHER) is None


async def test_migrations_are_recorded_once_in_the_one_migrations_table(url: str) -> None:
    store = PostgresApprovalStore(url)
    async with PermissionBroker(store) as broker:
        await broker.request(SCOPE, "drop users", "cli", wait=False)
    assert store.applied_migrations == [m.name for m in MIGRATIONS]
    recorded = query(url, "SELECT component, position, name FROM satchel_migrations ORDER BY 2")
    assert recorded == [("consent", i, m.name) for i, m in enumerate(MIGRATIONS, start=1)]
    assert query(url, "SELECT count(*) FROM satchel_consent_approvals") == [(1,)]
    tables = query(url, "SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
    assert "satchel_blocks" not in {t[0] for t in tables}  # no memory table is made
    again = PostgresApprovalStore(url)
    assert len(await again.list()) == 1
    assert again.applied_migrations == []
    await again.close()
    assert query(url, "SELECT count(*) FROM satchel_migrations") == [(len(MIGRATIONS),)]


async def test_many_stores_opening_a_new_database_at_once_migrate_it_once(url: str) -> None:
    stores = [PostgresApprovalStore(url) for _ in range(6)]
    with anyio.fail_after(20):
        async with anyio.create_task_group() as group:
            for store in stores:
                group.start_soon(store.list)
    applied = [store.applied_migrations for store in stores]
    assert applied.count([m.name for m in MIGRATIONS]) == 1
    assert applied.count([]) == len(stores) - 1
    assert query(url, "SELECT count(*) FROM satchel_migrations") == [(len(MIGRATIONS),)]
    for store in stores:
        await store.close()


async def test_concurrent_first_calls_on_one_store_open_one_pool(url: str) -> None:
    store = PostgresApprovalStore(url)
    with anyio.fail_after(20):
        async with anyio.create_task_group() as group:
            for index in range(5):
                group.start_soon(store.insert, record(f"r{index}", seconds=index))
    assert [r.id for r in await store.list()] == [f"r{i}" for i in range(5)]
    assert store.applied_migrations == [m.name for m in MIGRATIONS]
    await store.close()


async def test_a_closed_store_refuses_work(url: str) -> None:
    store = PostgresApprovalStore(url)
    await store.insert(record("x"))
    await store.close()
    await store.close()  # idempotent
    with pytest.raises(StorageError, match="closed"):
        await store.list()
    never_opened = PostgresApprovalStore(url)
    await never_opened.close()
    with pytest.raises(StorageError, match="closed"):
        await never_opened.get("x")


async def test_an_unreachable_database_is_a_storage_error_without_the_password(
    postgres_server: PostgresServer,
) -> None:
    bad = f"postgresql://nobody:s3cret@127.0.0.1:{postgres_server.port}/no_such_database"
    store = PostgresApprovalStore(bad, min_connections=0)
    with anyio.fail_after(60), pytest.raises(StorageError) as caught:
        await store.list()
    assert "s3cret" not in str(caught.value)
    assert store.safe_url in str(caught.value)
    await store.close()
