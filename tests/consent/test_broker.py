"""The broker: asking, deciding, waiting, timing out, grants and one-time use."""

from __future__ import annotations

import anyio
import pytest

from consent.conftest import Clock
from satchel.consent import (
    ApprovalError,
    ApprovalRequest,
    ConsentScope,
    Decision,
    PermissionBroker,
)

pytestmark = pytest.mark.anyio

SCOPE = ConsentScope.tool_execution("delete_file", {"path": "a.txt"}, agent="ada")


async def ask(broker: PermissionBroker, scope: ConsentScope = SCOPE) -> ApprovalRequest:
    return await broker.request(scope, "delete a.txt", "cli", agent="ada", wait=False)


async def test_a_request_without_waiting_is_pending_and_listed(broker: PermissionBroker) -> None:
    request = await ask(broker)
    assert request.status == "pending"
    assert len(request.id) >= 20
    assert [r.id for r in await broker.pending()] == [request.id]
    assert [r.id for r in await broker.list(status="pending")] == [request.id]
    assert (await broker.get(request.id)) == request


async def test_request_ids_are_unguessable_and_distinct(broker: PermissionBroker) -> None:
    ids = {
        (await ask(broker, ConsentScope.tool_execution("t", {"n": n}, agent="ada"))).id
        for n in range(20)
    }
    assert len(ids) == 20


async def test_asking_twice_for_the_same_scope_reuses_the_pending_request(
    broker: PermissionBroker,
) -> None:
    first = await ask(broker)
    again = await ask(broker)
    assert again.id == first.id
    assert len(await broker.pending()) == 1


async def test_resolving_wakes_a_waiter_with_the_decision(broker: PermissionBroker) -> None:
    request = await ask(broker)
    results: list[ApprovalRequest] = []

    async def waiter() -> None:
        results.append(await broker.wait(request.id))

    with anyio.fail_after(30):  # a hang guard: the machine may be busy
        async with anyio.create_task_group() as group:
            group.start_soon(waiter)
            await anyio.wait_all_tasks_blocked()
            await broker.resolve(request.id, Decision.approve_once(), by="ada")
    assert results[0].status == "approved"
    assert results[0].decided_by == "ada"
    assert await broker.pending() == []


async def test_a_waiting_request_returns_when_a_human_decides(broker: PermissionBroker) -> None:
    seen: list[ApprovalRequest] = []
    unsubscribe = broker.subscribe(seen.append)
    answer: list[ApprovalRequest] = []

    async def ask_and_wait() -> None:
        answer.append(await broker.request(SCOPE, "delete a.txt", "discord:42", agent="ada"))

    with anyio.fail_after(5):
        async with anyio.create_task_group() as group:
            group.start_soon(ask_and_wait)
            while not seen:
                await anyio.wait_all_tasks_blocked()
            assert seen[0].origin == "discord:42"
            await broker.resolve(seen[0].id, Decision.deny(), by="ada")
    unsubscribe()
    assert answer[0].status == "denied"
    assert answer[0].decision == Decision.deny()


async def test_a_request_that_nobody_decides_times_out_as_a_refusal() -> None:
    broker = PermissionBroker(poll_interval=0.05)
    with anyio.fail_after(5):
        answer = await broker.request(SCOPE, "delete", "cli", timeout=0.05)
    assert answer.status == "expired"
    assert answer.decision == Decision.deny()
    assert answer.decided_by == "timeout"


async def test_an_expired_request_can_no_longer_be_decided(
    broker: PermissionBroker, clock: Clock
) -> None:
    request = await broker.request(SCOPE, "delete", "cli", timeout=60, wait=False)
    clock.advance(61)
    with pytest.raises(ApprovalError) as caught:
        await broker.resolve(request.id, Decision.approve_once(), by="ada")
    assert caught.value.reason == "expired"
    assert (await broker.get(request.id)).status == "expired"  # type: ignore[union-attr]
    assert await broker.pending() == []


async def test_a_decided_request_cannot_be_decided_again(broker: PermissionBroker) -> None:
    request = await ask(broker)
    await broker.resolve(request.id, Decision.deny(), by="ada")
    with pytest.raises(ApprovalError):
        await broker.resolve(request.id, Decision.approve_once(), by="mallory")
    assert (await broker.get(request.id)).status == "denied"  # type: ignore[union-attr]


async def test_resolving_an_unknown_id_is_an_error(broker: PermissionBroker) -> None:
    with pytest.raises(ApprovalError) as caught:
        await broker.resolve("nope", Decision.approve_once(), by="ada")
    assert caught.value.reason == "unknown"


async def test_a_one_time_approval_is_spent_by_its_first_use(broker: PermissionBroker) -> None:
    request = await ask(broker)
    await broker.resolve(request.id, Decision.approve_once(), by="ada")
    assert await broker.check(SCOPE) is None  # a one-time approval is no standing grant
    spent = await broker.consume(request.id, SCOPE)
    assert spent.status == "used"
    with pytest.raises(ApprovalError) as caught:
        await broker.consume(request.id, SCOPE)
    assert caught.value.reason == "used"


async def test_an_approval_is_refused_for_another_scope(broker: PermissionBroker) -> None:
    request = await ask(broker)
    await broker.resolve(request.id, Decision.approve_once(), by="ada")
    other = ConsentScope.tool_execution("delete_file", {"path": "b.txt"}, agent="ada")
    with pytest.raises(ApprovalError) as caught:
        await broker.consume(request.id, other)
    assert caught.value.reason == "mismatch"
    assert (await broker.consume(request.id, SCOPE)).status == "used"


async def test_a_pending_or_denied_approval_cannot_be_consumed(broker: PermissionBroker) -> None:
    request = await ask(broker)
    with pytest.raises(ApprovalError) as pending:
        await broker.consume(request.id, SCOPE)
    assert pending.value.reason == "pending"
    await broker.resolve(request.id, Decision.deny(), by="ada")
    with pytest.raises(ApprovalError) as denied:
        await broker.consume(request.id, SCOPE)
    assert denied.value.reason == "denied"


async def test_a_one_time_approval_not_used_in_time_expires(
    broker: PermissionBroker, clock: Clock
) -> None:
    request = await ask(broker)
    await broker.resolve(request.id, Decision.approve_once(), by="ada")
    clock.advance((broker.approval_ttl or 0) + 1)
    with pytest.raises(ApprovalError) as caught:
        await broker.consume(request.id, SCOPE)
    assert caught.value.reason == "expired"


async def test_an_approval_for_a_duration_covers_the_scope_until_it_runs_out(
    broker: PermissionBroker, clock: Clock
) -> None:
    request = await ask(broker)
    await broker.resolve(request.id, Decision.approve_for(300), by="ada")
    grant = await broker.check(SCOPE)
    assert grant is not None
    assert grant.id == request.id
    again = await broker.request(SCOPE, "delete again", "cli", wait=False)
    assert again.id == request.id
    assert again.status == "approved"
    assert (await broker.consume(request.id, SCOPE)).status == "approved"  # reusable
    clock.advance(301)
    assert await broker.check(SCOPE) is None
    assert (await broker.get(request.id)).status == "expired"  # type: ignore[union-attr]
    fresh = await broker.request(SCOPE, "delete once more", "cli", wait=False)
    assert fresh.status == "pending"
    assert fresh.id != request.id


async def test_an_approval_for_the_scope_never_runs_out_but_covers_only_that_scope(
    broker: PermissionBroker, clock: Clock
) -> None:
    request = await ask(broker)
    await broker.resolve(request.id, Decision.approve_scope(), by="ada")
    clock.advance(10**8)
    assert await broker.check(SCOPE) is not None
    assert (
        await broker.check(ConsentScope.tool_execution("delete_file", {"path": "b"}, agent="ada"))
        is None
    )


async def test_a_failing_listener_does_not_lose_the_request(broker: PermissionBroker) -> None:
    def broken(request: ApprovalRequest) -> None:
        raise RuntimeError("front end down")

    broker.subscribe(broken)
    request = await ask(broker)
    assert [r.id for r in await broker.pending()] == [request.id]


async def test_an_agent_cannot_file_a_request_bound_to_another_agent(
    broker: PermissionBroker,
) -> None:
    from satchel import SatchelUsageError

    bobs = ConsentScope.tool_execution("delete_file", {"path": "a.txt"}, agent="bob")
    with pytest.raises(SatchelUsageError, match="bound to agent 'bob'"):
        await broker.request(bobs, "delete a.txt", "cli", agent="default", wait=False)
    filed = await broker.request(bobs, "delete a.txt", "cli", wait=False)
    assert filed.agent == "bob"
