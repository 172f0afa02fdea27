"""Which calls satchel's approval gate holds: the policy, memory tools left to the
block's permission, and tools declared with a ``delete`` action."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

import pytest
from pydantic import BaseModel, Field

from satchel import Tool, ToolContext, ToolRegistry, tool
from satchel.builtin import memory_toolset
from satchel.consent import (
    ApprovalPolicy,
    PermissionBroker,
    needs_approval,
    with_approval,
)
from satchel.memory import Permission, SQLiteStore

pytestmark = pytest.mark.anyio


@tool(actions=["delete"])
def delete_event(event_id: str) -> str:
    """Delete a calendar event.

    Args:
        event_id: The event.
    """
    return f"deleted {event_id}"


@tool(actions=["delete"], destructive=False)
def clear_draft(draft_id: str) -> str:
    """Throw away an unsent draft (nothing of value is lost).

    Args:
        draft_id: The draft.
    """
    return "cleared"


@tool(actions=["create"])
def create_event(title: str) -> str:
    """Create a calendar event.

    Args:
        title: Its title.
    """
    return "created"


@tool(read_only=True, actions=["read"])
def list_events() -> list[str]:
    """List calendar events."""
    return []


class Show(BaseModel):
    operation: Literal["show"]
    title: str


class Remove(BaseModel):
    operation: Literal["remove"]
    title: str


class Rename(BaseModel):
    operation: Literal["rename"]
    title: str
    new: str


class Notes(Tool[Annotated[Show | Remove | Rename, Field(discriminator="operation")], str]):
    """Show, rename or remove notes."""

    name = "notes"
    actions = ("read", "update", "delete")

    async def execute(self, params: Any, ctx: ToolContext) -> str:
        return "ok"


def test_a_tool_with_a_delete_action_and_no_destructive_flag_is_destructive() -> None:
    assert delete_event.spec.annotations.destructive is True
    assert clear_draft.spec.annotations.destructive is False  # said so explicitly
    assert create_event.spec.annotations.destructive is None


def test_a_raw_tool_with_a_delete_action_is_destructive() -> None:
    registry = ToolRegistry()
    raw = registry.register_raw(
        name="delete_mail",
        description="Delete a mail.",
        parameters={"type": "object", "properties": {"id": {"type": "string"}}},
        run=lambda args: "gone",
        actions=["delete"],
    )
    assert raw.spec.is_destructive({"id": "1"})


def test_a_multi_operation_tool_with_a_delete_action_marks_its_deleting_operation() -> None:
    spec = Notes().spec
    assert spec.is_destructive({"operation": "remove", "title": "x"})
    assert not spec.is_destructive({"operation": "rename", "title": "x", "new": "y"})
    assert not spec.is_destructive({"operation": "show", "title": "x"})


def test_the_policy_decides_which_calls_of_user_tools_are_held() -> None:
    for policy, expected in [
        (ApprovalPolicy.DESTRUCTIVE, {"delete_event"}),
        (ApprovalPolicy.WRITES, {"delete_event", "clear_draft", "create_event"}),
        (ApprovalPolicy.NONE, set[str]()),
    ]:
        held = {
            t.spec.name
            for t in (delete_event, clear_draft, create_event, list_events)
            if needs_approval(t.spec, {}, policy)
        }
        assert held == expected, policy


async def test_memory_tools_are_never_held_whatever_the_policy(tmp_path: Path) -> None:
    async with await SQLiteStore.open(tmp_path / "m.db", embedder=None) as store:
        tools = memory_toolset(store)
        for policy in ApprovalPolicy:
            for name in ("context", "recall", "search"):
                assert not needs_approval(tools.get(name).spec, None, policy)  # type: ignore[union-attr]
        assert needs_approval(tools.get("send_message").spec, None, ApprovalPolicy.WRITES)  # type: ignore[union-attr]


async def test_the_gate_lets_memory_writes_through_to_the_block_permission(
    tmp_path: Path,
) -> None:
    async with (
        await SQLiteStore.open(tmp_path / "m.db", embedder=None) as store,
        PermissionBroker() as broker,
    ):
        await store.create_block("ada", "notes", "a", permission=Permission.READ_WRITE)
        await store.create_block("ada", "rules", "b", permission=Permission.READ_ONLY)
        gated = with_approval(memory_toolset(store), broker, policy=ApprovalPolicy.WRITES)
        ctx = ToolContext(agent="ada")
        replaced = await gated.call(
            "context", {"operation": "replace", "label": "notes", "old": "a", "new": "z"}, ctx
        )
        denied = await gated.call(
            "context", {"operation": "set", "label": "rules", "value": "x"}, ctx
        )
        assert await broker.pending() == []
    assert replaced.ok, replaced.to_text()
    assert denied.error is not None
    assert denied.error.kind == "denied"
