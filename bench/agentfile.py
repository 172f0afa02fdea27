"""Import and export time of the largest shared Letta Agent File, against baselines
measured in the same run (issue 31 item 1).

The file (``../shared/data/letta-agent-files/``, the largest by size) is imported into a
fresh SQLite store with the local MiniLM embedder, as ``satchel agent import`` does, and
the agent exported again, as ``satchel agent export`` does. Baselines, each on the same
machine in the same run:

* ``parse``: ``json.loads`` of the file and validation by the file's pydantic models
  (:class:`~satchel.agentfile.LettaAgentFile`), the floor of any import;
* ``memory import``: satchel's own ``memory import`` path (:func:`read_export`, then
  :meth:`~satchel.memory.MemoryStore.import_records`) of the same records, exported as
  JSON lines from the imported agent, into a fresh store with the same embedder;
* ``memory export``: the JSON lines export of the same agents (:func:`export_lines`, the
  whole store: the file's two agents).

Each step runs ``--repeat`` times; the median is reported, with its ratio to the
baseline of its kind.

``--no-embed`` stores no vectors, leaving the work that is the agent file's own.

Run:
    uv run python bench/agentfile.py --repeat 7
    uv run python bench/agentfile.py --repeat 21 --no-embed
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio

from satchel.agentfile import LettaAgentFile, export_agent_file, import_agent_file
from satchel.embed import default_embedder
from satchel.memory import SQLiteStore, export_lines, read_export

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "letta-agent-files"


async def _timed(work: Callable[[], Awaitable[object]]) -> float:
    start = time.perf_counter()
    await work()
    return time.perf_counter() - start


async def main(repeat: int, embed: bool) -> None:
    files = sorted(SHARED.glob("*.af"), key=lambda p: p.stat().st_size)
    if not files:
        raise SystemExit(f"no agent files in {SHARED}")
    source = files[-1]
    embedder = default_embedder() if embed else None
    if embedder is not None:
        embedder.embed(["warm the model up"])
    work = Path(tempfile.mkdtemp())
    counter = iter(range(10_000))
    times: dict[str, list[float]] = {
        k: [] for k in ("parse", "af import", "memory import", "af export", "memory export")
    }
    sizes: dict[str, int] = {}

    def fresh() -> Path:
        return work / f"m{next(counter)}.db"

    for _ in range(repeat):
        start = time.perf_counter()
        LettaAgentFile.model_validate(json.loads(source.read_bytes()))
        times["parse"].append(time.perf_counter() - start)

        async with SQLiteStore(fresh(), embedder=embedder) as store:

            async def af_import(store: SQLiteStore = store) -> None:
                await import_agent_file(store, source, name="bench")

            times["af import"].append(await _timed(af_import))
            out = work / "out.af"

            async def af_export(store: SQLiteStore = store, out: Path = out) -> None:
                await export_agent_file(store, "bench", out)

            times["af export"].append(await _timed(af_export))
            sizes["af"] = out.stat().st_size
            jsonl = work / "out.jsonl"

            async def memory_export(store: SQLiteStore = store, jsonl: Path = jsonl) -> None:
                with jsonl.open("w", encoding="utf-8") as handle:
                    async for line in export_lines(store, None):
                        handle.write(line + "\n")

            times["memory export"].append(await _timed(memory_export))
            sizes["jsonl"] = jsonl.stat().st_size

        async with SQLiteStore(fresh(), embedder=embedder) as other:

            async def memory_import(other: SQLiteStore = other, jsonl: Path = jsonl) -> None:
                with jsonl.open("rb") as handle:
                    records = list(read_export(handle, agent=None))
                await other.import_records(records)

            times["memory import"].append(await _timed(memory_import))

    median = {k: statistics.median(v) * 1000 for k, v in times.items()}
    print(f"file: {source.name}, {source.stat().st_size:,} bytes; export {sizes['af']:,} bytes;")
    print(f"JSON lines of the same agents {sizes['jsonl']:,} bytes; median of {repeat} runs;")
    print(f"embedding {'on (MiniLM)' if embed else 'off'}\n")
    print("| step | ms | baseline | × baseline |")
    print("|---|---|---|---|")
    rows = [
        ("parse (json.loads + models)", "parse", None),
        ("**agent import**", "af import", "parse"),
        ("**agent import**", "af import", "memory import"),
        ("memory import (JSON lines, same records)", "memory import", None),
        ("**agent export**", "af export", "memory export"),
        ("memory export (JSON lines)", "memory export", None),
    ]
    for label, key, base in rows:
        ratio = f"{median[key] / median[base]:.2f}" if base else "-"
        print(f"| {label} | {median[key]:.1f} | {base or '-'} | {ratio} |")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--no-embed", action="store_true", help="Store no vectors.")
    options = parser.parse_args()
    anyio.run(main, options.repeat, not options.no_embed)
