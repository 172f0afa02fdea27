"""The approval gate: destructive calls run only with an approval of exactly their
arguments, and only once."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

import pytest
from pydantic import BaseModel, Field

from consent.conftest import Clock
from satchel import Tool, ToolAnnotations, ToolContext, ToolRegistry, ToolResult, tool
from satchel.consent import Decision, PermissionBroker, with_approval

pytestmark = pytest.mark.anyio


class Disk:
    """What the tools below did."""

    def __init__(self) -> None:
        self.deleted: list[str] = []
        self.read: list[str] = []


class Read(BaseModel):
    operation: Literal["read"]
    path: str


class Remove(BaseModel):
    operation: Literal["remove"]
    path: str


FileOp = Annotated[Read | Remove, Field(discriminator="operation")]


def make_registry(disk: Disk) -> ToolRegistry:
    @tool(destructive=True)
    def delete_file(path: str, force: bool = False) -> str:
        """Delete a file.

        Args:
            path: The file.
            force: Even if read-only.
        """
        disk.deleted.append(path)
        return f"deleted {path}"

    @tool(read_only=True)
    def read_file(path: str) -> str:
        """Read a file."""
        disk.read.append(path)
        return "text"

    class Files(Tool[FileOp, str]):
        name = "files"
        description = "Read or remove files."
        operation_annotations: ClassVar[dict[str, ToolAnnotations]] = {
            "remove": ToolAnnotations(destructive=True)
        }

        async def execute(self, params: Any, ctx: ToolContext) -> str:
            if isinstance(params, Remove):
                disk.deleted.append(params.path)
                return "removed"
            disk.read.append(params.path)
            return "text"

    return ToolRegistry([delete_file, read_file, Files()], context=ToolContext(agent="ada"))


@pytest.fixture
def disk() -> Disk:
    return Disk()


@pytest.fixture
def gated(disk: Disk, broker: PermissionBroker) -> ToolRegistry:
    return with_approval(make_registry(disk), broker)


def approval_id(result: ToolResult) -> str:
    assert result.error is not None, result
    assert result.error.kind == "needs_approval", result
    return str(result.error.details["approval_id"])


def with_id(approval: str) -> ToolContext:
    return ToolContext(approval_id=approval, agent="ada", origin="cli")


async def test_a_destructive_call_without_approval_runs_nothing_and_asks(
    gated: ToolRegistry, broker: PermissionBroker, disk: Disk
) -> None:
    result = await gated.call("delete_file", {"path": "a.txt"}, ToolContext(origin="mcp"))
    assert disk.deleted == []
    assert result.error is not None
    assert result.error.kind == "needs_approval"
    details = result.error.details
    assert details["status"] == "pending_confirmation"
    assert details["tool"] == "delete_file"
    assert details["arguments"] == {"path": "a.txt"}
    [pending] = await broker.pending()
    assert pending.id == details["approval_id"]
    assert pending.origin == "mcp"
    assert pending.arguments == {"path": "a.txt"}
    assert "cannot approve it yourself" in result.error.message


async def test_an_approved_call_runs_exactly_once(
    gated: ToolRegistry, broker: PermissionBroker, disk: Disk
) -> None:
    approval = approval_id(await gated.call("delete_file", {"path": "a.txt"}))
    await broker.resolve(approval, Decision.approve_once(), by="ada")
    first = await gated.call("delete_file", {"path": "a.txt"}, with_id(approval))
    assert first.ok
    assert first.output == "deleted a.txt"
    second = await gated.call("delete_file", {"path": "a.txt"}, with_id(approval))
    assert second.error is not None
    assert second.error.kind == "denied"
    assert second.error.details["reason"] == "used"
    assert disk.deleted == ["a.txt"]


async def test_an_approval_does_not_stretch_to_other_arguments(
    gated: ToolRegistry, broker: PermissionBroker, disk: Disk
) -> None:
    approval = approval_id(await gated.call("delete_file", {"path": "a.txt"}))
    await broker.resolve(approval, Decision.approve_once(), by="ada")
    for other in ({"path": "b.txt"}, {"path": "a.txt", "force": True}):
        result = await gated.call("delete_file", other, with_id(approval))
        assert result.error is not None
        assert result.error.kind == "denied"
        assert result.error.details["reason"] == "mismatch"
    assert disk.deleted == []
    assert (await gated.call("delete_file", {"path": "a.txt"}, with_id(approval))).ok


async def test_argument_order_does_not_matter_to_an_approval(
    gated: ToolRegistry, broker: PermissionBroker, disk: Disk
) -> None:
    approval = approval_id(await gated.call("delete_file", {"path": "a", "force": True}))
    await broker.resolve(approval, Decision.approve_once(), by="ada")
    result = await gated.call("delete_file", {"force": True, "path": "a"}, with_id(approval))
    assert result.ok
    assert disk.deleted == ["a"]


async def test_a_denied_approval_is_refused(
    gated: ToolRegistry, broker: PermissionBroker, disk: Disk
) -> None:
    approval = approval_id(await gated.call("delete_file", {"path": "a.txt"}))
    await broker.resolve(approval, Decision.deny(), by="ada")
    result = await gated.call("delete_file", {"path": "a.txt"}, with_id(approval))
    assert result.error is not None
    assert result.error.kind == "denied"
    assert result.error.details["reason"] == "denied"
    assert disk.deleted == []


async def test_an_expired_approval_request_is_refused(
    gated: ToolRegistry, broker: PermissionBroker, disk: Disk, clock: Clock
) -> None:
    approval = approval_id(await gated.call("delete_file", {"path": "a.txt"}))
    clock.advance(broker.default_timeout + 1)
    result = await gated.call("delete_file", {"path": "a.txt"}, with_id(approval))
    assert result.error is not None
    assert result.error.kind == "denied"
    assert result.error.details["reason"] == "expired"
    assert disk.deleted == []


async def test_an_undecided_approval_still_needs_approval(gated: ToolRegistry, disk: Disk) -> None:
    approval = approval_id(await gated.call("delete_file", {"path": "a.txt"}))
    result = await gated.call("delete_file", {"path": "a.txt"}, with_id(approval))
    assert approval_id(result) == approval
    assert "still waiting" in (result.error.message if result.error else "")
    assert disk.deleted == []


async def test_a_made_up_approval_id_is_refused(gated: ToolRegistry, disk: Disk) -> None:
    result = await gated.call("delete_file", {"path": "a.txt"}, with_id("guessed"))
    assert result.error is not None
    assert result.error.kind == "denied"
    assert result.error.details["reason"] == "unknown"
    assert disk.deleted == []


async def test_read_only_calls_pass_straight_through(
    gated: ToolRegistry, broker: PermissionBroker, disk: Disk
) -> None:
    assert (await gated.call("read_file", {"path": "a"})).ok
    assert (await gated.call("files", {"operation": "read", "path": "b"})).ok
    assert disk.read == ["a", "b"]
    assert await broker.pending() == []


async def test_only_the_destructive_operation_of_a_tool_is_gated(
    gated: ToolRegistry, broker: PermissionBroker, disk: Disk
) -> None:
    args = {"operation": "remove", "path": "x"}
    approval = approval_id(await gated.call("files", args))
    assert disk.deleted == []
    await broker.resolve(approval, Decision.approve_once(), by="ada")
    assert (await gated.call("files", args, with_id(approval))).ok
    assert disk.deleted == ["x"]


async def test_a_standing_grant_runs_the_same_call_without_an_id(
    gated: ToolRegistry, broker: PermissionBroker, disk: Disk
) -> None:
    approval = approval_id(await gated.call("delete_file", {"path": "tmp"}))
    await broker.resolve(approval, Decision.approve_for(600), by="ada")
    for _ in range(2):
        assert (await gated.call("delete_file", {"path": "tmp"})).ok
    assert disk.deleted == ["tmp", "tmp"]
    assert approval_id(await gated.call("delete_file", {"path": "other"}))


async def test_invalid_arguments_are_refused_before_anyone_is_asked(
    gated: ToolRegistry, broker: PermissionBroker
) -> None:
    result = await gated.call("delete_file", {"path": 3})
    assert result.error is not None
    assert result.error.kind == "invalid_arguments"
    assert await broker.pending() == []


async def test_a_registry_wrapped_twice_spends_one_approval_once(
    disk: Disk, broker: PermissionBroker
) -> None:
    twice = with_approval(with_approval(make_registry(disk), broker), broker)
    approval = approval_id(await twice.call("delete_file", {"path": "a"}))
    await broker.resolve(approval, Decision.approve_once(), by="ada")
    assert (await twice.call("delete_file", {"path": "a"}, with_id(approval))).ok
    assert disk.deleted == ["a"]


async def test_a_single_tool_can_be_wrapped(disk: Disk, broker: PermissionBroker) -> None:
    gated_tool = with_approval(make_registry(disk).get("delete_file"), broker)  # type: ignore[arg-type]
    result = await gated_tool.call({"path": "a"}, ToolContext())
    assert approval_id(result)
    assert gated_tool.spec.name == "delete_file"
