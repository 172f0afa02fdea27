"""ToolRegistry: registration rules, lookups, calls, results and usage rules."""

from __future__ import annotations

import json
import logging

import anyio
import pytest

from satchel import (
    RegistryEvent,
    SatchelUsageError,
    ToolRegistry,
    tool,
)
from tool_fixtures import Files, WordCount, add, all_test_tools, flaky

pytestmark = pytest.mark.anyio


def test_duplicate_name_is_refused_with_a_hint() -> None:
    registry = ToolRegistry([WordCount()])
    with pytest.raises(SatchelUsageError, match="replace=True"):
        registry.register(WordCount())


def test_replace_keeps_the_registration_order() -> None:
    registry = ToolRegistry([WordCount(), add])
    registry.register(WordCount(), replace=True)
    assert registry.names() == ["word_count", "add"]


@pytest.mark.parametrize("name", ["", "has space", "x" * 65, "dot.name", "ünï"])
def test_invalid_names_are_refused(name: str) -> None:
    with pytest.raises(SatchelUsageError, match="Invalid tool name"):
        ToolRegistry().register_raw(
            name=name, description="d", parameters={"type": "object"}, run=lambda a: ""
        )


def test_registering_a_class_instead_of_an_instance_says_so() -> None:
    with pytest.raises(SatchelUsageError, match=r"register\(WordCount\(\)\)"):
        ToolRegistry().register(WordCount)  # type: ignore[arg-type]


def test_plain_functions_can_be_registered() -> None:
    def double(x: int) -> int:
        """Double a number.

        Args:
            x: The number.
        """
        return 2 * x

    registry = ToolRegistry([double])
    assert registry.names() == ["double"]


def test_unregister_removes_and_unknown_unregister_raises() -> None:
    registry = ToolRegistry([add])
    registry.unregister("add")
    assert registry.get("add") is None
    assert "add" not in registry
    with pytest.raises(SatchelUsageError, match="No tool named"):
        registry.unregister("add")


def test_listeners_hear_every_change() -> None:
    registry = ToolRegistry()
    events: list[RegistryEvent] = []
    unsubscribe = registry.subscribe(events.append)
    registry.register(add)
    registry.register(add, replace=True)
    registry.unregister("add")
    unsubscribe()
    registry.register(add)
    assert [(e.kind, e.name) for e in events] == [
        ("added", "add"),
        ("replaced", "add"),
        ("removed", "add"),
    ]


async def test_unknown_tool_suggests_close_names() -> None:
    result = await ToolRegistry([WordCount(), add]).call("word_cont", {"text": "x"})
    assert result.error is not None
    assert result.error.kind == "unknown_tool"
    assert result.error.details["suggestions"][0] == "word_count"
    assert "Did you mean 'word_count'" in result.error.message


async def test_arguments_given_as_json_text_are_accepted() -> None:
    result = await ToolRegistry([add]).call("add", '{"a": 2, "b": 5}')
    assert result.output == 7


@pytest.mark.parametrize("args", ["{not json", "[1, 2]", "42", b"\xff\xfe", 3.5])
async def test_arguments_that_are_not_a_json_object_get_a_clear_error(args: object) -> None:
    result = await ToolRegistry([add]).call("add", args)
    assert result.error is not None
    assert result.error.kind == "invalid_arguments"
    assert "object" in result.error.message or "JSON" in result.error.message


async def test_no_arguments_means_an_empty_object() -> None:
    result = await ToolRegistry([add]).call("add", None)
    assert result.error is not None
    assert "`a` is required" in result.error.message


async def test_every_field_error_is_listed() -> None:
    result = await ToolRegistry([add]).call("add", {"a": "x", "b": [1]})
    assert result.error is not None
    fields = [e["field"] for e in result.error.details["errors"]]
    assert fields == ["a", "b"]


@pytest.mark.parametrize(
    ("mode", "kind"), [("retry", "retry"), ("fail", "failed"), ("crash", "internal")]
)
async def test_tool_exceptions_map_to_error_kinds(mode: str, kind: str) -> None:
    result = await ToolRegistry([flaky]).call("flaky", {"mode": mode})
    assert result.error is not None
    assert result.error.kind == kind


async def test_internal_errors_hide_the_exception_text_from_the_model() -> None:
    result = await ToolRegistry([flaky]).call("flaky", {"mode": "crash"})
    assert result.error is not None
    assert "secret internal detail" not in result.to_json()
    assert "secret internal detail" not in result.to_text()


async def test_results_serialise_for_a_model() -> None:
    registry = ToolRegistry([WordCount(), flaky])
    ok = await registry.call("word_count", {"text": "a b"})
    assert json.loads(ok.to_json()) == {"ok": True, "output": {"count": 2}}
    bad = await registry.call("flaky", {"mode": "fail"})
    assert json.loads(bad.to_json()) == {
        "ok": False,
        "error": {"kind": "failed", "message": "This always fails.", "details": {"why": "test"}},
    }
    assert bad.to_text().startswith("Error (failed): This always fails.")


def test_call_sync_works_outside_a_loop() -> None:
    assert ToolRegistry([add]).call_sync("add", {"a": 1, "b": 1}).output == 2


async def test_call_sync_refuses_to_nest_in_a_running_loop() -> None:
    with pytest.raises(SatchelUsageError, match="running event loop"):
        ToolRegistry([add]).call_sync("add", {"a": 1, "b": 1})


def test_usage_rules_render_in_registration_order() -> None:
    @tool(usage_rule="Call last.")
    def finish() -> str:
        """Finish the task."""
        return "ok"

    registry = ToolRegistry([WordCount(), add, finish])
    assert registry.usage_rules() == (
        "## Tool Usage Rules\n"
        "- word_count: Use for exact counts; never estimate.\n"
        "- finish: Call last."
    )
    assert ToolRegistry([add]).usage_rules() == ""


@pytest.mark.parametrize("dialect", ["openai", "openai-strict", "anthropic", "gemini", "mcp"])
def test_schemas_have_each_providers_shape(dialect: str) -> None:
    registry = ToolRegistry(all_test_tools())  # type: ignore[arg-type]
    defs = registry.schemas(dialect)  # type: ignore[arg-type]
    assert len(defs) == len(registry)
    first = defs[0]
    if dialect.startswith("openai"):
        assert first["type"] == "function"
        assert first["function"]["name"] == "word_count"
    elif dialect == "anthropic":
        assert first["input_schema"]["type"] == "object"
    elif dialect == "gemini":
        assert first["parameters"]["type"] in ("object", "OBJECT")
    else:
        assert first["inputSchema"]["type"] == "object"
    assert "$ref" not in json.dumps(defs)
    assert '"$defs"' not in json.dumps(defs)


def test_mcp_schema_carries_annotations_and_output_schema() -> None:
    registry = ToolRegistry([Files(), add])
    files, add_def = registry.schemas("mcp")
    assert files["annotations"]["destructiveHint"] is True
    assert add_def["outputSchema"]["properties"]["result"]["type"] == "integer"


async def test_many_concurrent_calls_in_one_loop_all_succeed() -> None:
    registry = ToolRegistry([add, WordCount()])
    results: list[int] = []

    async def one(i: int) -> None:
        result = await registry.call("add", {"a": i, "b": 1})
        results.append(result.output)

    async with anyio.create_task_group() as tg:
        for i in range(200):
            tg.start_soon(one, i)
    assert sorted(results) == list(range(1, 201))


def test_a_tool_one_dialect_cannot_express_is_left_out_of_that_dialect_with_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    registry = ToolRegistry()
    registry.register_raw(
        name="dashed",
        description="Takes a parameter whose name Gemini refuses.",
        parameters={"type": "object", "properties": {"page-size": {"type": "integer"}}},
        run=str,
    )
    registry.register(add)
    with caplog.at_level(logging.WARNING, logger="satchel.registry"):
        gemini = [d["name"] for d in registry.schemas("gemini")]
    assert gemini == ["add"]
    assert any("'dashed'" in r.getMessage() and "gemini" in r.getMessage() for r in caplog.records)
    assert [d["name"] for d in registry.schemas("anthropic")] == ["dashed", "add"]


def test_an_unknown_dialect_is_still_a_usage_error() -> None:
    with pytest.raises(SatchelUsageError, match="Unknown schema dialect"):
        ToolRegistry([add]).schemas("cohere")  # type: ignore[arg-type]
