"""The console's edit of a read-only block: one operator write against the steps it
replaced, through the real SQLite store.

Baseline (what the console did before): raise the block's permission with
``configure_block``, overwrite the text at the version that returned
(``update_block_text`` with the operator's consent), then set the permission back:
three write transactions, plus the read of the block. Now: ``operator_edit``, one
transaction at the version read. Each round edits the same read-only block ``--edits``
times both ways, interleaved; the figure is the median per-edit time over the rounds,
as a ratio to the baseline.

Run:
    uv run python bench/operator_edit.py --edits 200 --rounds 5
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import anyio

from satchel.memory import ConsentRequest, Permission, SQLiteStore


async def _yes(request: ConsentRequest, /) -> bool:
    return True


async def _old_edit(store: SQLiteStore, text: str) -> None:
    await store.get_block("ada", "rules")
    raised = await store.configure_block("ada", "rules", permission=Permission.READ_WRITE)
    await store.update_block_text("ada", "rules", text, expected_version=raised.version)
    await store.configure_block("ada", "rules", permission=Permission.READ_ONLY)


async def _new_edit(store: SQLiteStore, text: str) -> None:
    block = await store.get_block("ada", "rules")
    await store.operator_edit(
        "ada", "rules", expected_version=block.version, value=text, permission=Permission.READ_ONLY
    )


async def main(edits: int, rounds: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        store = SQLiteStore(Path(folder) / "m.db", embedder=None, consent=_yes)
        await store.create_block("ada", "rules", "start", permission=Permission.READ_ONLY)
        times: dict[str, list[float]] = {"old": [], "new": []}
        for round_ in range(rounds):
            for name, edit in (("old", _old_edit), ("new", _new_edit)):
                start = time.perf_counter()
                for n in range(edits):
                    await edit(store, f"{name} {round_} {n}")
                times[name].append((time.perf_counter() - start) / edits * 1000)
        await store.close()
    old, new = statistics.median(times["old"]), statistics.median(times["new"])
    print("| edit of a read-only block | ms/edit | × baseline |")
    print("|---|---|---|")
    print(f"| raise, write, set back (baseline) | {old:.2f} | 1.00 |")
    print(f"| operator_edit | {new:.2f} | {new / old:.2f} |")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--edits", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=5)
    arguments = parser.parse_args()
    anyio.run(main, arguments.edits, arguments.rounds)
