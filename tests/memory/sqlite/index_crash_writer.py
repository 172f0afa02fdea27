"""A writer process for the vector-index crash test: inserts, deletes and rewrites
archival blocks and messages in a loop, searching (which brings the in-memory index up
to date) and saving the index beside the database often, until it is killed."""

from __future__ import annotations

import hashlib
import sys
from collections.abc import Sequence

import anyio
import numpy as np
import numpy.typing as npt

from satchel.memory import BlockKind, Permission, SQLiteStore


class SeededEmbedder:
    """A random unit vector per text, the same for the same text."""

    name = "index-crash-test"
    dim = 16

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            seed = int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "little")
            row = np.random.default_rng(seed).standard_normal(self.dim)
            out[i] = row / np.linalg.norm(row)
        return out


async def main(path: str) -> None:
    store = await SQLiteStore.open(path, embedder=SeededEmbedder())
    print("ready", flush=True)
    for i in range(1_000_000):
        await store.create_block(
            "ada",
            f"entry-{i}",
            f"entry text {i}",
            kind=BlockKind.ARCHIVAL,
            permission=Permission.ADMIN,
        )
        await store.add_message("ada", "user", f"message {i}")
        if i % 3 == 2:
            await store.delete_block("ada", f"entry-{i - 2}")
        if i % 5 == 4:
            await store.update_block_text("ada", f"entry-{i - 1}", f"rewritten {i}")
        if i % 4 == 0:
            await store.search("ada", f"entry text {i}", mode="vector", limit=3)
        if i % 8 == 0:
            await store.backend.save_vector_index()
        print(f"done {i}", flush=True)


if __name__ == "__main__":
    anyio.run(main, sys.argv[1])
