"""What searching the lines of core and working blocks costs a search (issue 27):
domain ``all`` on one LoCoMo conversation (about 400 messages) without core blocks
(baseline) and with a ``human`` block of 10, 40 and 100 lines, in the same run.

A process embeds each line once (the vectors are cached by text), so the first search
after a block changes pays for its new lines ("cold") and later ones do not ("warm").

Run:
    uv run python bench/core_lines_cost.py [--questions 60]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio

from satchel.memory import Permission, SQLiteStore

sys.path.insert(0, str(Path(__file__).parent))
from memory_quality import CachingEmbedder, load, questions_of
from memory_small import FACTS, SHARED


async def timed(store: SQLiteStore, agent: str, questions: list[str]) -> float:
    """Median milliseconds of one search per question."""
    took: list[float] = []
    for question in questions:
        started = time.perf_counter()
        await store.search(agent, question, limit=10)
        took.append(1000 * (time.perf_counter() - started))
    return statistics.median(took)


async def main(args: argparse.Namespace) -> None:
    samples: list[dict[str, Any]] = json.loads((SHARED / "locomo" / "locomo.dev.json").read_text())
    sample = samples[0]
    agent = sample["sample_id"]
    questions = [q for q, _ in questions_of(sample)][: args.questions]
    facts = [f["fact"] for p in json.loads(FACTS.read_text())["people"] for f in p["facts"]]
    facts += [f"Note {i}: {f}" for i, f in enumerate(facts)]  # 160 distinct lines
    embedder = CachingEmbedder()
    embedder.embed(questions)  # queries embedded once, outside the timings
    with tempfile.TemporaryDirectory() as tmp:
        store = await SQLiteStore.open(Path(tmp) / "m.db", embedder=embedder)
        await load(store, [sample])
        await timed(store, agent, questions[:5])  # warm the index
        base = await timed(store, agent, questions)
        print(f"{len(questions)} questions, {agent}: median ms per search, domain all")
        print("| human block | cold (first search after the write) | warm | × baseline (warm) |")
        print("|---|---|---|---|")
        print(f"| none (baseline) | | {base:.1f} | ×1.00 |")
        for n in (10, 40, 100):
            value = "\n".join(facts[:n])
            if n == 10:
                await store.create_block(agent, "human", value, permission=Permission.ADMIN)
            else:
                await store.update_block_text(agent, "human", value)
            started = time.perf_counter()
            await store.search(agent, questions[0], limit=10)
            cold = 1000 * (time.perf_counter() - started)
            warm = await timed(store, agent, questions)
            print(f"| {n} lines | {cold:.1f} | {warm:.1f} | ×{warm / base:.2f} |")
        await store.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--questions", type=int, default=60)
    anyio.run(main, parser.parse_args())
