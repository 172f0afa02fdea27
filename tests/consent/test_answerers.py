"""Waiting where the person answers: with an answerer registered for a call's origin
(``satchel up`` on Telegram), a held tool call or memory write waits for the answer and
runs once; without one, everything goes as before."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from anyio.abc import TaskStatus

from satchel import ToolContext, ToolRegistry, tool
from satchel._errors import ConsentRequiredError, PermissionDeniedError
from satchel.consent import (
    AnsweredConsent,
    ApprovalRequest,
    Decision,
    InMemoryApprovalStore,
    PermissionBroker,
    memory_arguments,
    with_approval,
)
from satchel.mcp import MemoryConsent
from satchel.memory import (
    ConsentRequest,
    Operation,
    Permission,
    RequestOrigin,
    SQLiteStore,
)
from satchel.registry import BaseRegistry

pytestmark = pytest.mark.anyio


def _telegram(origin: str) -> float | None:
    return 30.0 if origin.startswith("telegram:") else None


def _gated(deleted: list[str], broker: PermissionBroker) -> BaseRegistry:
    @tool(destructive=True)
    def delete_file(path: str) -> str:
        """Delete a file."""
        deleted.append(path)
        return f"deleted {path}"

    return with_approval(ToolRegistry([delete_file]), broker)


async def _decide_first(
    broker: PermissionBroker,
    decision: Decision,
    decided: list[str] | None = None,
    *,
    task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
) -> None:
    """Once listening (``await group.start``), wait for the first request filed, then
    decide it as the person on Telegram, and note its id in ``decided``."""
    filed: list[ApprovalRequest] = []
    ready = anyio.Event()

    def listen(request: ApprovalRequest) -> None:
        filed.append(request)
        ready.set()

    unsubscribe = broker.subscribe(listen)
    task_status.started()
    try:
        with anyio.fail_after(30):
            await ready.wait()
    finally:
        unsubscribe()
    await broker.resolve(filed[0].id, decision, by="telegram:7")
    if decided is not None:
        decided.append(filed[0].id)


def test_answer_wait_is_the_longest_offer_and_goes_away_when_removed() -> None:
    broker = PermissionBroker()
    remove = broker.add_answerer(_telegram)
    broker.add_answerer(lambda origin: 90.0 if origin == "telegram:1" else None)

    assert (broker.answer_wait("telegram:1"), broker.answer_wait("telegram:2")) == (90.0, 30.0)
    assert broker.answer_wait("mcp") is None
    assert broker.answer_wait(None) is None
    remove()
    assert broker.answer_wait("telegram:2") is None


@pytest.mark.parametrize("decision", [Decision.approve_once(), Decision.deny()])
async def test_a_held_call_from_an_answered_origin_waits_and_runs_once_if_approved(
    decision: Decision,
) -> None:
    deleted: list[str] = []
    async with PermissionBroker(InMemoryApprovalStore(), poll_interval=0.05) as broker:
        broker.add_answerer(_telegram)
        tools = _gated(deleted, broker)
        ctx = ToolContext(agent="ada", origin="telegram:42")
        async with anyio.create_task_group() as group:
            decided: list[str] = []
            await group.start(_decide_first, broker, decision, decided)
            result = await tools.call("delete_file", {"path": "a.txt"}, ctx)
        [request] = await broker.list()

    assert request.origin == "telegram:42"
    assert (request.expires_at - request.created_at).total_seconds() == 30.0
    if decision.approved:
        assert (result.ok, result.output, deleted) == (True, "deleted a.txt", ["a.txt"])
        assert request.status == "used"
    else:
        assert result.error is not None
        assert (result.error.kind, result.error.details["approval_id"]) == ("denied", decided[0])
        assert deleted == []


async def test_a_held_call_nobody_answers_in_time_is_denied_and_nothing_runs() -> None:
    deleted: list[str] = []
    async with PermissionBroker(InMemoryApprovalStore(), poll_interval=0.05) as broker:
        broker.add_answerer(lambda origin: 0.2)
        result = await _gated(deleted, broker).call(
            "delete_file", {"path": "a.txt"}, ToolContext(agent="ada", origin="telegram:42")
        )
        [request] = await broker.list()

    assert result.error is not None
    assert result.error.kind == "denied"
    assert "Nobody answered" in result.error.message
    assert request.status == "expired"
    assert deleted == []


async def test_a_held_call_from_an_origin_nobody_answers_returns_needs_approval_at_once() -> None:
    deleted: list[str] = []
    async with PermissionBroker(InMemoryApprovalStore(), default_timeout=600) as broker:
        broker.add_answerer(_telegram)
        result = await _gated(deleted, broker).call(
            "delete_file", {"path": "a.txt"}, ToolContext(agent="ada", origin="mcp")
        )
        [request] = await broker.list()

    assert result.error is not None
    assert result.error.kind == "needs_approval"
    assert request.status == "pending"
    assert (request.expires_at - request.created_at).total_seconds() == 600.0
    assert deleted == []


@pytest.mark.parametrize("handler", ["memory-consent", "broker"])
async def test_a_memory_write_from_an_answered_origin_waits_for_the_answer(
    tmp_path: Path, handler: str
) -> None:
    async with PermissionBroker(InMemoryApprovalStore(), poll_interval=0.05) as broker:
        broker.add_answerer(_telegram)
        consent = MemoryConsent(broker, wait=0) if handler == "memory-consent" else broker
        async with SQLiteStore(tmp_path / "m.db", embedder=None, consent=consent) as store:
            await store.create_block("ada", "notes", "Plans.", permission=Permission.HUMAN)
            origin = RequestOrigin(channel="telegram:42")
            async with anyio.create_task_group() as group:
                await group.start(_decide_first, broker, Decision.approve_once())
                block = await store.append_to_block("ada", "notes", "Tea.", origin=origin)
            [request] = await broker.list()

    assert block.value == "Plans.\nTea."
    assert (request.origin, request.status) == ("telegram:42", "used")
    assert request.arguments == {"text": "Tea.", "separator": "\n"}


async def test_a_memory_write_from_elsewhere_keeps_memory_consents_short_wait(
    tmp_path: Path,
) -> None:
    async with PermissionBroker(InMemoryApprovalStore()) as broker:
        broker.add_answerer(_telegram)
        async with SQLiteStore(
            tmp_path / "m.db", embedder=None, consent=MemoryConsent(broker, wait=0)
        ) as store:
            await store.create_block("ada", "notes", "Plans.", permission=Permission.HUMAN)
            with pytest.raises(PermissionDeniedError, match="refused"):
                await store.append_to_block(
                    "ada", "notes", "Tea.", origin=RequestOrigin(channel="mcp")
                )
            [request] = await broker.list()

    assert (request.status, request.arguments) == ("pending", None)


def test_memory_arguments_are_the_writes_content() -> None:
    def request(content: object) -> ConsentRequest:
        return ConsentRequest(
            label="notes",
            owner="ada",
            agent="ada",
            operation=Operation.APPEND,
            permission=Permission.HUMAN,
            reason="append",
            content=content,
        )

    assert memory_arguments(request({"text": "Tea."})) == {"text": "Tea."}
    assert memory_arguments(request("archival")) == {"content": "archival"}
    assert memory_arguments(request(None)) is None
    assert "content" not in request({"text": "Tea."}).model_dump()


async def test_answered_consent_fails_like_no_handler_where_nobody_answers(
    tmp_path: Path,
) -> None:
    async with PermissionBroker(InMemoryApprovalStore()) as broker:
        broker.add_answerer(_telegram)
        async with (
            SQLiteStore(tmp_path / "a.db", embedder=None) as bare,
            SQLiteStore(tmp_path / "b.db", embedder=None, consent=AnsweredConsent(broker)) as store,
        ):
            errors: list[ConsentRequiredError] = []
            for each in (bare, store):
                await each.create_block("ada", "notes", "Plans.", permission=Permission.HUMAN)
                with pytest.raises(ConsentRequiredError) as caught:
                    await each.append_to_block(
                        "ada", "notes", "Tea.", origin=RequestOrigin(channel="agent:ada")
                    )
                errors.append(caught.value)
        filed = await broker.list()

    assert [e.message for e in errors] == [errors[0].message] * 2
    assert errors[1].details == errors[0].details
    assert filed == []


async def test_answered_consent_waits_for_the_answer_where_someone_answers(
    tmp_path: Path,
) -> None:
    asked: list[str] = []

    async def fallback(request: ConsentRequest, /) -> bool:
        asked.append(request.origin)
        return True

    async with PermissionBroker(InMemoryApprovalStore(), poll_interval=0.05) as broker:
        broker.add_answerer(_telegram)
        consent = AnsweredConsent(broker, fallback)
        async with SQLiteStore(tmp_path / "m.db", embedder=None, consent=consent) as store:
            await store.create_block("ada", "notes", "Plans.", permission=Permission.HUMAN)
            async with anyio.create_task_group() as group:
                await group.start(_decide_first, broker, Decision.deny())
                with pytest.raises(PermissionDeniedError, match="refused"):
                    await store.append_to_block(
                        "ada", "notes", "Tea.", origin=RequestOrigin(channel="telegram:42")
                    )
            block = await store.append_to_block(
                "ada", "notes", "Cake.", origin=RequestOrigin(channel="chat")
            )
        [request] = await broker.list()

    assert (request.origin, request.status, request.decided_by) == (
        "telegram:42", "denied", "telegram:7"
    )  # fmt: skip
    assert asked == ["chat"]
    assert block.value == "Plans.\nCake."
