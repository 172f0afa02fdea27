"""A writer process for the crash-safety test: writes a burst of blocks and appends to
the database named on the command line, printing one line per acknowledged write, until
it is killed."""

from __future__ import annotations

import sys

import anyio
import numpy as np

from satchel.memory import BlockKind, SQLiteStore


class TinyEmbedder:
    name = "crash-test"
    dim = 8

    def embed(self, texts: list[str]) -> np.ndarray:  # type: ignore[type-arg]
        rows = np.ones((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            rows[i, len(text) % self.dim] += 1.0
        return rows / np.linalg.norm(rows, axis=1, keepdims=True)


async def main(path: str) -> None:
    store = await SQLiteStore.open(path, embedder=TinyEmbedder())
    await store.create_block("ada", "log", "", kind=BlockKind.CORE)
    print("ready", flush=True)
    for i in range(1_000_000):
        await store.create_block(
            "ada", f"entry-{i}", f"archival entry {i}", kind=BlockKind.ARCHIVAL
        )
        print(f"block entry-{i}", flush=True)
        await store.append_to_block("ada", "log", f"line-{i}")
        print(f"append line-{i}", flush=True)
        await store.add_message("ada", "user", f"message {i}")
        print(f"message message {i}", flush=True)


if __name__ == "__main__":
    anyio.run(main, sys.argv[1])
