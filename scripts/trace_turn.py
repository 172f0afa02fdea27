"""Which of satchel's source files one agent turn with a tool call runs through.

An :class:`~satchel.Agent` with the built-in memory tools on a SQLite store, driven by
a scripted model (no network): the model calls ``context append``, then answers in
text. One warm turn runs first (imports, caches); the second is profiled, and the
satchel files and packages it executed are printed.

Run:
    uv run python scripts/trace_turn.py
"""

from __future__ import annotations

import sys
import tempfile
import threading
from pathlib import Path
from types import FrameType
from typing import Any

import anyio

from satchel.agent import Agent, TestModel, call
from satchel.memory import SQLiteStore

ROOT = Path(__file__).resolve().parents[1] / "src"


def _script() -> list[Any]:
    args = {"operation": "append", "label": "human", "content": "Likes tea."}
    return [call("context", args), "Noted."]


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
        async with SQLiteStore(Path(scratch) / "m.db", embedder=None) as store:
            await store.ensure_agent("ada")
            agent = Agent("ada", TestModel([*_script(), *_script()]), memory=store)
            warm = await agent.run("I like tea.")  # warm: imports, caches
            assert warm.stop == "reply", warm
            recording["on"] = True
            try:
                result = await agent.run("I like tea.")
            finally:
                recording["on"] = False
            assert result.stop == "reply" and result.tool_calls[0][1].ok, result
    sys.setprofile(None)
    packages = sorted({p.split("/")[1] if p.count("/") > 1 else "(top)" for p in seen})
    print(f"{len(seen)} files in {len(packages)} packages: {', '.join(packages)}")
    for path in sorted(seen):
        print(" ", path)


if __name__ == "__main__":
    anyio.run(main)
