"""Raw tools: hand-written JSON schemas validated with jsonschema."""

from __future__ import annotations

from typing import Any

import pytest

from satchel import SchemaError, ToolFailed, ToolRegistry

pytestmark = pytest.mark.anyio

ECHO_SCHEMA = {
    "type": "object",
    "properties": {
        "text": {"type": "string"},
        "tags": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["text"],
}


def make_registry() -> ToolRegistry:
    registry = ToolRegistry()
    registry.register_raw(
        name="echo",
        description="Echo text back.",
        parameters=ECHO_SCHEMA,
        run=lambda args: args["text"],
        category="demo",
        read_only=True,
    )
    return registry


async def test_raw_tool_runs_on_valid_arguments() -> None:
    result = await make_registry().call("echo", {"text": "hi"})
    assert result.ok
    assert result.output == "hi"
    assert result.to_text() == "hi"


async def test_raw_tool_arguments_are_validated_before_run() -> None:
    calls: list[dict[str, Any]] = []
    registry = ToolRegistry()
    registry.register_raw(
        name="spy", description="Record calls.", parameters=ECHO_SCHEMA, run=calls.append
    )
    result = await registry.call("spy", {"text": 5})
    assert result.error is not None
    assert result.error.kind == "invalid_arguments"
    assert "`text`" in result.error.message
    missing = await registry.call("spy", {})
    assert missing.error is not None
    assert "`text` is required but missing" in missing.error.message
    assert calls == []


async def test_exception_from_run_becomes_a_failed_result() -> None:
    def boom(args: dict[str, Any]) -> str:
        raise ValueError("disk is full")

    registry = ToolRegistry()
    registry.register_raw(name="boom", description="Fails.", parameters=ECHO_SCHEMA, run=boom)
    result = await registry.call("boom", {"text": "x"})
    assert result.error is not None
    assert result.error.kind == "failed"
    assert result.error.message == "disk is full"


async def test_returned_tool_failed_becomes_a_failed_result() -> None:
    registry = ToolRegistry()
    registry.register_raw(
        name="nope", description="Refuses.", parameters=ECHO_SCHEMA, run=lambda a: ToolFailed("no")
    )
    result = await registry.call("nope", {"text": "x"})
    assert result.error is not None
    assert (result.error.kind, result.error.message) == ("failed", "no")


async def test_json_encoded_array_is_decoded_where_the_schema_wants_one() -> None:
    registry = ToolRegistry()
    registry.register_raw(
        name="tags",
        description="Count tags.",
        parameters=ECHO_SCHEMA,
        run=lambda a: str(len(a["tags"])),
    )
    result = await registry.call("tags", {"text": "x", "tags": '["a","b"]'})
    assert result.output == "2"
    assert result.coerced == ("tags",)


def test_raw_tool_metadata_is_kept_in_the_spec() -> None:
    spec = make_registry().get("echo").spec  # type: ignore[union-attr]
    assert spec.category == "demo"
    assert spec.annotations.read_only is True
    assert spec.output_schema is None


def test_schema_that_is_not_an_object_is_refused_at_registration() -> None:
    with pytest.raises(SchemaError, match="JSON object at the top level"):
        ToolRegistry().register_raw(
            name="bad", description="Bad.", parameters={"type": "objekt"}, run=lambda a: ""
        )


def test_malformed_json_schema_is_refused_at_registration() -> None:
    with pytest.raises(SchemaError, match="bad"):
        ToolRegistry().register_raw(
            name="bad",
            description="Bad.",
            parameters={"type": "object", "properties": {"n": {"type": "integer", "minimum": "x"}}},
            run=lambda a: "",
        )


async def test_async_run_is_awaited() -> None:
    async def run(args: dict[str, Any]) -> str:
        return args["text"] * 2

    registry = ToolRegistry()
    registry.register_raw(name="twice", description="Twice.", parameters=ECHO_SCHEMA, run=run)
    assert (await registry.call("twice", {"text": "ab"})).output == "abab"


async def test_older_draft_schema_is_upgraded_and_still_validates() -> None:
    registry = ToolRegistry()
    registry.register_raw(
        name="page",
        description="Read a page.",
        parameters={
            "type": "object",
            "properties": {"page": {"type": "integer", "minimum": 0, "exclusiveMinimum": True}},
            "required": ["page"],
        },
        run=lambda a: str(a["page"]),
    )
    assert (await registry.call("page", {"page": 2})).output == "2"
    zero = await registry.call("page", {"page": 0})
    assert zero.error is not None
    assert zero.error.kind == "invalid_arguments"
