"""A hybrid search gives the same scores, to the last bit, in every process: coverage
sums its terms in the query's order, not in the order of a set (which follows the
string hash seed, different in every process)."""

from __future__ import annotations

import os
import random
import subprocess
import sys
from pathlib import Path

import anyio

from satchel.memory import BlockKind, SQLiteStore

sys.path.insert(0, str(Path(__file__).parent))
from index_crash_writer import SeededEmbedder
from score_printer import WORDS

PRINTER = Path(__file__).with_name("score_printer.py")


async def _fill(path: Path) -> None:
    rng = random.Random(3)
    async with await SQLiteStore.open(path, embedder=SeededEmbedder()) as store:
        for i in range(80):
            text = " ".join(rng.choices(WORDS, k=rng.randint(2, 7)))
            await store.add_message("ada", "user", text, conversation_id=f"c{i % 4}")
            await store.create_block("ada", f"note-{i}", text, kind=BlockKind.ARCHIVAL)


def test_hybrid_scores_are_the_same_under_every_hash_seed(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    anyio.run(_fill, path)
    outputs: list[str] = []
    for seed in ("0", "1", "2", "12345"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        env["PYTHONPATH"] = os.pathsep.join(
            [str(Path(__file__).parent), *filter(None, [env.get("PYTHONPATH")])]
        )
        done = subprocess.run(
            [sys.executable, str(PRINTER), str(path)],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
            check=True,
        )
        outputs.append(done.stdout)
    lines = outputs[0].splitlines()
    assert len(lines) == 80
    assert all(line != "[]" for line in lines)  # every search found something
    assert outputs[1:] == [outputs[0]] * 3
