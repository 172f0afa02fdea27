"""Which of satchel's source files one MCP ``context append`` runs through.

Serves the built-in memory tools the way ``satchel serve`` does (its own catalog and
served-registry functions: announced writes, gated for MCP, a SQLite store, a broker) to the MCP SDK's in-memory client, then profiles one
``context append`` call and prints the satchel files and packages it executed.

Run:
    uv run python scripts/trace_append.py
"""

from __future__ import annotations

import sys
import tempfile
import threading
from pathlib import Path
from types import FrameType
from typing import Any

import anyio
from mcp import Client

from satchel.serve import ServeOptions, build_catalog, memory_tools, served_registry
from satchel.consent import PermissionBroker, SQLiteApprovalStore
from satchel.mcp import create_server
from satchel.memory import SQLiteStore

ROOT = Path(__file__).resolve().parents[1] / "src"


async def main() -> None:
    seen: set[str] = set()
    recording = {"on": False}

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        if event == "call" and recording["on"]:
            name = frame.f_code.co_filename
            if name.startswith(str(ROOT)):
                seen.add(str(Path(name).relative_to(ROOT)))

    threading.setprofile(profile)  # before any worker thread starts
    sys.setprofile(profile)
    with tempfile.TemporaryDirectory() as scratch:
        db = Path(scratch) / "m.db"
        async with (
            SQLiteStore(db, embedder=None) as store,
            PermissionBroker(SQLiteApprovalStore(db)) as broker,
        ):
            await store.ensure_agent("default")
            options = ServeOptions()
            catalog = build_catalog(options, memory=memory_tools(store, on_write=lambda: None))
            server = create_server(served_registry(catalog, options, broker=broker))
            async with Client(server.lowlevel) as client:
                await client.list_tools()
                args = {"operation": "append", "label": "human", "content": "Likes tea."}
                await client.call_tool("context", args)  # warm: imports, caches
                recording["on"] = True
                try:
                    result = await client.call_tool("context", args)
                finally:
                    recording["on"] = False
            assert result.is_error is not True, result
    sys.setprofile(None)
    packages = sorted({p.split("/")[1] if p.count("/") > 1 else "(top)" for p in seen})
    print(f"{len(seen)} files in {len(packages)} packages: {', '.join(packages)}")
    for path in sorted(seen):
        print(" ", path)


if __name__ == "__main__":
    anyio.run(main)
