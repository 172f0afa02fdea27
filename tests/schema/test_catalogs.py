"""Real MCP tool schemas (hand-written by many servers) through the whole pipeline.

Every schema of both catalogs normalizes, recursive ones included (4 of livemcpbench's
527 keep their recursive part in ``$defs``); every dialect serves each (OpenAI strict
falls back to ``strict: false`` where strict mode cannot say it), and every adapted
schema and definition passes its checker.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from satchel import SchemaError
from satchel.schema import (
    DIALECTS,
    check,
    check_definition,
    for_dialect,
    normalize,
    tool_definition,
)


def _catalog_dir() -> Path | None:
    for parent in Path(__file__).resolve().parents:
        candidate = parent / "shared" / "data" / "mcp-catalogs"
        if candidate.is_dir():
            return candidate
    return None


CATALOGS = _catalog_dir()
FILES = ["github-mcp-server.tools.json", "livemcpbench.tools.json"]


def _tools(filename: str) -> list[dict[str, Any]]:
    if CATALOGS is None or not (CATALOGS / filename).is_file():
        pytest.skip(f"shared/data/mcp-catalogs/{filename} not found beside the checkout")
    tools: list[dict[str, Any]] = json.loads((CATALOGS / filename).read_text(encoding="utf-8"))
    return tools


@pytest.mark.parametrize("filename", FILES)
def test_every_catalog_schema_is_served_by_every_dialect(filename: str) -> None:
    tools = _tools(filename)
    counts: Counter[str] = Counter()
    for tool in tools:
        normalized = normalize(tool["inputSchema"])
        counts["normalized"] += 1
        if "$defs" in normalized:
            counts["recursive"] += 1
        for dialect in DIALECTS:
            try:
                adapted = for_dialect(normalized, dialect)
            except SchemaError:
                assert dialect == "openai-strict", (tool["name"], dialect)
                counts["strict: false fallback"] += 1
            else:
                assert check(adapted, dialect) == [], (tool["name"], dialect)
                counts[f"{dialect} ok"] += 1
            definition = tool_definition(
                tool["name"],
                tool.get("description") or tool["name"],
                normalized,
                dialect,
                annotations={"read_only": True},
            )
            assert check_definition(definition, dialect) == [], (tool["name"], dialect)
    print(f"\n{filename}: {len(tools)} tools, {dict(counts)}")
    assert counts["normalized"] == len(tools)
