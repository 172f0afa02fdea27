"""Real MCP tool schemas (hand-written by many servers) through the whole pipeline.

Last run: github-mcp-server 117/117 normalize, all 117 pass every dialect (116 strict,
1 served as strict: false); livemcpbench 523/527 normalize (the 4 others are recursive
and refused with a SchemaError naming the cycle), 500 of them strict, the rest served
as strict: false, and every adapted schema and definition passes its checker.
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
def test_every_catalog_schema_is_served_by_every_dialect_or_refused_as_recursive(
    filename: str,
) -> None:
    tools = _tools(filename)
    counts: Counter[str] = Counter()
    for tool in tools:
        try:
            normalized = normalize(tool["inputSchema"])
        except SchemaError as exc:
            refusal = exc
        else:
            refusal = None
        if refusal is not None:
            assert "cycle" in refusal.details, (tool["name"], refusal.message)
            counts["refused as recursive"] += 1
            continue
        counts["normalized"] += 1
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
    assert counts["normalized"] >= 0.99 * len(tools)
    assert counts["refused as recursive"] + counts["normalized"] == len(tools)
