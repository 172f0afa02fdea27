"""Approvals are bound: to the agent that asked, the tool and its exact arguments, and for
memory to the block, the operation and (one-time consent) the content. Nothing one
agent was granted can be spent by another, or on another write. On both approval
stores (SQLite, PostgreSQL), each with its memory backend."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest

from postgres_server import PostgresServer
from satchel import PermissionDeniedError, ToolContext, ToolRegistry, ToolResult, tool
from satchel.consent import (
    ApprovalRequest,
    ApprovalStore,
    Decision,
    PermissionBroker,
    PostgresApprovalStore,
    SQLiteApprovalStore,
    with_approval,
)
from satchel.mcp import MemoryConsent
from satchel.memory import BlockKind, MemoryStore, Permission, SQLiteStore
from satchel.memory.postgres import PostgresStore

pytestmark = pytest.mark.anyio


@dataclass(kw_only=True)
class Backend:
    """One database: an approval store and a memory store on it, as opened by each of
    several processes."""

    approvals: Callable[[], ApprovalStore]
    memory: Callable[[MemoryConsent], Any]


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    if request.param == "sqlite":
        path = tmp_path / "satchel.db"
        yield Backend(
            approvals=lambda: SQLiteApprovalStore(path),
            memory=lambda consent: SQLiteStore.open(path, embedder=None, consent=consent),
        )
        return
    server: PostgresServer = request.getfixturevalue("postgres_server")
    url = server.create_database()
    yield Backend(
        approvals=lambda: PostgresApprovalStore(url),
        memory=lambda consent: PostgresStore.open(url, embedder=None, consent=consent),
    )
    server.drop_database(url)


def deleting_registry(deleted: list[str]) -> ToolRegistry:
    @tool(destructive=True)
    def delete_file(path: str) -> str:
        """Delete a file.

        Args:
            path: The file.
        """
        deleted.append(path)
        return f"deleted {path}"

    return ToolRegistry([delete_file])


def as_agent(agent: str, approval_id: str | None = None) -> ToolContext:
    return ToolContext(agent=agent, approval_id=approval_id, origin="mcp")


def pending_id(result: ToolResult) -> str:
    assert result.error is not None, result
    assert result.error.kind == "needs_approval", result.error
    return str(result.error.details["approval_id"])


ARGS = {"path": "notes.txt"}


async def test_an_approval_given_to_bob_is_refused_when_another_agent_presents_it(
    backend: Backend,
) -> None:
    deleted: list[str] = []
    async with (
        PermissionBroker(backend.approvals()) as bob_side,
        PermissionBroker(backend.approvals()) as default_side,
    ):
        bob = with_approval(deleting_registry(deleted), bob_side)
        default = with_approval(deleting_registry(deleted), default_side)
        approval = pending_id(await bob.call("delete_file", ARGS, as_agent("bob")))
        await default_side.resolve(approval, Decision.approve_once(), by="human")

        stolen = await default.call("delete_file", ARGS, as_agent("default", approval))
        assert deleted == []
        assert stolen.error is not None
        assert stolen.error.kind == "denied"
        assert "another agent" in stolen.error.message

        ran = await bob.call("delete_file", ARGS, as_agent("bob", approval))
    assert ran.ok, ran.error
    assert deleted == ["notes.txt"]  # bob's approval was still there for bob


async def test_a_grant_given_to_bob_does_not_let_another_agent_run_the_same_call(
    backend: Backend,
) -> None:
    deleted: list[str] = []
    async with (
        PermissionBroker(backend.approvals()) as bob_side,
        PermissionBroker(backend.approvals()) as default_side,
    ):
        bob = with_approval(deleting_registry(deleted), bob_side)
        default = with_approval(deleting_registry(deleted), default_side)
        approval = pending_id(await bob.call("delete_file", ARGS, as_agent("bob")))
        await bob_side.resolve(approval, Decision.approve_for(600), by="human")

        asked = await default.call("delete_file", ARGS, as_agent("default"))
        assert deleted == []
        assert pending_id(asked) != approval  # default must ask a human itself

        for _ in range(2):  # bob's grant covers bob, again and again
            assert (await bob.call("delete_file", ARGS, as_agent("bob"))).ok
    assert deleted == ["notes.txt", "notes.txt"]


@asynccontextmanager
async def bobs_memory(backend: Backend) -> AsyncIterator[tuple[MemoryStore, PermissionBroker]]:
    """Bob's store, whose block ``pb`` asks a human for every write, and the broker a
    human decides with (another process's)."""
    async with PermissionBroker(backend.approvals()) as serving:
        consent = MemoryConsent(serving, wait=0)
        async with (
            await backend.memory(consent) as store,
            PermissionBroker(backend.approvals()) as human,
        ):
            await store.create_block("bob", "pb", "hello", permission=Permission.HUMAN)
            yield store, human


async def refused_then_pending(human: PermissionBroker, write: Any) -> ApprovalRequest:
    with pytest.raises(PermissionDeniedError):
        await write
    [pending] = await human.pending()
    return pending


async def test_consent_to_append_to_a_block_cannot_be_spent_on_archiving_it(
    backend: Backend,
) -> None:
    with anyio.fail_after(60):
        async with bobs_memory(backend) as (store, human):
            asked = await refused_then_pending(human, store.append_to_block("bob", "pb", "hi"))
            assert "append 2 characters" in asked.reason
            await human.resolve(asked.id, Decision.approve_once(), by="human")

            with pytest.raises(PermissionDeniedError):
                await store.set_kind("bob", "pb", BlockKind.ARCHIVAL)
            assert (await store.get_block("bob", "pb")).kind is BlockKind.CORE

            appended = await store.append_to_block("bob", "pb", "hi")
    assert appended.value == "hello\nhi"


async def test_one_time_consent_to_a_memory_write_binds_its_content(backend: Backend) -> None:
    with anyio.fail_after(60):
        async with bobs_memory(backend) as (store, human):
            asked = await refused_then_pending(human, store.append_to_block("bob", "pb", "hi"))
            await human.resolve(asked.id, Decision.approve_once(), by="human")

            with pytest.raises(PermissionDeniedError):
                await store.append_to_block("bob", "pb", "something else entirely")
            assert (await store.get_block("bob", "pb")).value == "hello"
            assert (await store.append_to_block("bob", "pb", "hi")).value == "hello\nhi"


async def test_a_memory_grant_covers_the_operation_on_the_block_and_nothing_else(
    backend: Backend,
) -> None:
    with anyio.fail_after(60):
        async with bobs_memory(backend) as (store, human):
            asked = await refused_then_pending(human, store.append_to_block("bob", "pb", "a"))
            await human.resolve(asked.id, Decision.approve_for(600), by="human")

            await store.append_to_block("bob", "pb", "b")
            await store.append_to_block("bob", "pb", "c")  # any content, for a while
            with pytest.raises(PermissionDeniedError):
                await store.update_block_text("bob", "pb", "overwritten")
            block = await store.get_block("bob", "pb")
    assert block.value == "hello\nb\nc"
