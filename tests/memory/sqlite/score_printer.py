"""Prints the hits of fixed hybrid searches, scores as exact hex floats, one JSON line
per search (for the test that runs it under several string hash seeds)."""

from __future__ import annotations

import json
import random
import sys

import anyio
from index_crash_writer import SeededEmbedder

from satchel.memory import Domain, SQLiteStore

WORDS = [
    "harbour",
    "clinic",
    "tuesday",
    "pottery",
    "bowl",
    "leeds",
    "saturday",
    "marathon",
    "training",
    "october",
    "tea",
    "coffee",
    "dentist",
    "blue",
    "kiln",
    "glaze",
    "morning",
    "river",
    "garden",
    "letter",
    "train",
    "station",
    "music",
]


def queries() -> list[str]:
    """40 queries of 4 to 7 of the corpus's words (fixed)."""
    rng = random.Random(11)
    return [" ".join(rng.sample(WORDS, rng.randint(4, 7))) for _ in range(40)]


async def main(path: str) -> None:
    async with await SQLiteStore.open(path, embedder=SeededEmbedder()) as store:
        for domain in (Domain.CONVERSATIONS, Domain.ARCHIVAL_MEMORY):
            for query in queries():
                hits = await store.search("ada", query, domains=domain, limit=10, mode="hybrid")
                print(json.dumps([[hit.id, float(hit.score).hex()] for hit in hits]))


if __name__ == "__main__":
    anyio.run(main, sys.argv[1])
