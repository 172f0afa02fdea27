"""Typed tools (``Tool[In, Out]``): specs, validation, execution and errors."""

from __future__ import annotations

import logging

import pytest
from pydantic import BaseModel

from satchel import SatchelUsageError, Tool, ToolContext, ToolRegistry
from satchel.schema import DIALECTS, check_definition
from tool_fixtures import CountIn, CountOut, Files, SyncWordCount, WordCount

pytestmark = pytest.mark.anyio


async def test_typed_tool_returns_its_output_model() -> None:
    registry = ToolRegistry([WordCount()])
    result = await registry.call("word_count", {"text": "a b c"})
    assert result.ok
    assert result.output == CountOut(count=3)
    assert result.structured() == {"count": 3}


async def test_sync_execute_runs_in_a_worker_thread() -> None:
    registry = ToolRegistry([SyncWordCount()])
    result = await registry.call("sync_word_count", {"text": "one two"})
    assert result.output == CountOut(count=2)


def test_spec_carries_description_usage_rule_and_schemas() -> None:
    spec = WordCount().spec
    assert spec.name == "word_count"
    assert spec.description == "Counts words in text."
    assert spec.summary == "Counts words in text."
    assert spec.usage_rule == "Use for exact counts; never estimate."
    assert spec.input_schema["type"] == "object"
    assert spec.input_schema["properties"]["text"]["description"] == "Text to count words in"
    assert spec.output_schema is not None
    assert spec.output_schema["properties"]["count"]["type"] == "integer"


def test_docstring_is_the_description_when_none_is_set() -> None:
    assert SyncWordCount().spec.description == "Counts words in text, synchronously."


async def test_missing_field_is_named_in_the_error() -> None:
    result = await ToolRegistry([WordCount()]).call("word_count", {})
    assert result.error is not None
    assert result.error.kind == "invalid_arguments"
    assert "`text` is required" in result.error.message
    assert result.error.details["errors"] == [
        {"field": "text", "problem": "is required but missing"}
    ]


async def test_multi_operation_error_names_the_operation_and_the_field() -> None:
    result = await ToolRegistry([Files()]).call("files", {"operation": "write", "path": "a"})
    assert result.error is not None
    assert result.error.kind == "invalid_arguments"
    assert "operation 'write'" in result.error.message
    assert "`content` is required" in result.error.message


async def test_unknown_operation_lists_the_valid_ones() -> None:
    result = await ToolRegistry([Files()]).call("files", {"operation": "move", "path": "a"})
    assert result.error is not None
    assert "`operation` must be one of" in result.error.message
    assert "'read'" in result.error.message
    assert '"move"' in result.error.message


async def test_multi_operation_tool_runs_each_operation() -> None:
    files = Files()
    registry = ToolRegistry([files])
    assert (await registry.call("files", {"operation": "write", "path": "p", "content": "x"})).ok
    read = await registry.call("files", {"operation": "read", "path": "p"})
    assert read.output.content == "x"
    assert (await registry.call("files", {"operation": "delete", "path": "p"})).ok
    again = await registry.call("files", {"operation": "read", "path": "p"})
    assert again.error is not None
    assert again.error.kind == "failed"


def test_multi_operation_schema_is_one_object_with_an_operation_enum() -> None:
    schema = Files().spec.input_schema
    assert schema["type"] == "object"
    assert set(schema["properties"]["operation"]["enum"]) == {"read", "write", "delete"}
    assert "operation" in schema["required"]
    assert "$defs" not in str(schema)


def test_per_operation_annotations_mark_only_delete_destructive() -> None:
    spec = Files().spec
    assert spec.is_destructive({"operation": "delete", "path": "x"})
    assert not spec.is_destructive({"operation": "read", "path": "x"})
    assert spec.is_destructive()
    assert spec.operations["write"].required == ("path", "content")


def test_tool_without_types_is_refused_at_registration() -> None:
    class Untyped(Tool):  # type: ignore[type-arg]
        name = "untyped"
        description = "No types."

        async def execute(self, params: object, ctx: ToolContext) -> object:
            return params

    with pytest.raises(SatchelUsageError, match=r"Tool\[In, Out\]"):
        ToolRegistry().register(Untyped())


async def test_a_recursive_input_model_is_served_and_validated() -> None:
    class Node(BaseModel):
        value: int
        children: list[Node] = []

    class Tree(Tool[Node, CountOut]):
        name = "tree"
        description = "Walks a tree."

        async def execute(self, params: Node, ctx: ToolContext) -> CountOut:
            return CountOut(count=1)

    registry = ToolRegistry([Tree()])
    for dialect in DIALECTS:
        [definition] = registry.schemas(dialect)
        assert check_definition(definition, dialect) == []
    deep: dict[str, object] = {"value": 0, "children": []}
    for depth in range(1, 8):
        deep = {"value": depth, "children": [deep]}
    assert (await registry.call("tree", deep)).ok
    bad = await registry.call("tree", {"value": 1, "children": [{"value": "x"}]})
    assert bad.error is not None
    assert bad.error.kind == "invalid_arguments"


async def test_tool_returning_a_wrong_output_is_an_internal_error(
    caplog: pytest.LogCaptureFixture,
) -> None:
    class Liar(Tool[CountIn, CountOut]):
        name = "liar"
        description = "Returns the wrong thing."

        async def execute(self, params: CountIn, ctx: ToolContext) -> CountOut:
            return {"count": "many"}  # type: ignore[return-value]

    with caplog.at_level(logging.ERROR, logger="satchel.tools"):
        result = await ToolRegistry([Liar()]).call("liar", {"text": "x"})
    assert result.error is not None
    assert result.error.kind == "internal"
    assert "count" not in result.error.message
    assert "does not match its schema" in caplog.text


async def test_output_given_as_a_dict_is_validated_into_the_model() -> None:
    class DictOut(Tool[CountIn, CountOut]):
        name = "dict_out"
        description = "Returns a dict."

        async def execute(self, params: CountIn, ctx: ToolContext) -> CountOut:
            return {"count": 2}  # type: ignore[return-value]

    result = await ToolRegistry([DictOut()]).call("dict_out", {"text": "x"})
    assert result.output == CountOut(count=2)


async def test_context_reaches_the_tool() -> None:
    seen: list[str] = []

    class Who(Tool[CountIn, CountOut]):
        name = "who"
        description = "Records the agent."

        async def execute(self, params: CountIn, ctx: ToolContext) -> CountOut:
            seen.append(ctx.agent)
            return CountOut(count=0)

    await ToolRegistry([Who()]).call("who", {"text": ""}, ctx=ToolContext(agent="alice"))
    assert seen == ["alice"]
