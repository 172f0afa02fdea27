"""Calibrating "Nothing in memory matches": the relevance floor of memory search
(:func:`satchel.memory.is_relevant`: a hit is relevant when its words cover at least
``min_coverage`` of the query's IDF mass or its cosine to the query is at least
``min_cosine``), measured on questions whose answer is in the store and questions
whose answer is not.

Sets, each through the real SQLite store and the default embedder, hybrid search,
10 hits:

* ``facts``: the personal-facts set (``tests/memory/data/personal_facts.json``), each
  person's first 5 facts as archival entries of a store of their own; positives are
  those facts' questions, negatives the person's 5 other questions (same person, same
  style, answer absent);
* ``facts + 800``: all 8 people's first 5 facts among 800 unrelated real texts
  (LoCoMo turns, MetaTool requests) in one store; the same positives and negatives;
* ``LoCoMo``: both dev conversations as messages (as ``memory_quality.py`` stores
  them); positives the questions of categories 1-4, negatives the adversarial
  category 5 (asked about the wrong speaker: the answer is absent, but the words and
  the topic are there).

For each floor: a positive's recall@1 and @10 counting only hits above the floor;
for a negative, whether nothing was above it (the tool then says "Nothing in memory
matches"); the no-floor row is the baseline measured in the same run.

Run:
    uv run python bench/memory_floor.py [--gate]
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio

from satchel.memory import Domain, SearchHit, SQLiteStore, is_relevant
from satchel.retrieval import RELEVANT_COSINE, RELEVANT_COVERAGE

sys.path.insert(0, str(Path(__file__).parent))
from memory_quality import CachingEmbedder, load
from memory_small import FACTS, SHARED, add_archival, others

COVERAGES = (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 2.0)
COSINES = (0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 2.0)


@dataclass(kw_only=True)
class Asked:
    """One question's hits and its gold keys (empty for a negative)."""

    hits: list[tuple[str, SearchHit]]
    gold: set[str]


GATE = False
"""``--gate``: a question whose best hit passes keeps every hit (the floor only decides
"nothing matches"), instead of each hit being kept only if it passes."""


def _floored(asked: Asked, coverage: float, cosine: float) -> list[str]:
    passing = [
        key for key, hit in asked.hits if is_relevant(hit, min_coverage=coverage, min_cosine=cosine)
    ]
    if GATE and passing:
        return [key for key, _ in asked.hits]
    return passing


async def _ask(
    store: SQLiteStore, agent: str, question: str, gold: set[str], domain: Domain, key: str
) -> Asked:
    hits = await store.search(agent, question, domains=domain, limit=10)
    keyed = [(str(h.label if key == "label" else h.metadata.get("dia_id")), h) for h in hits]
    return Asked(hits=keyed, gold=gold)


async def collect(
    tmp: Path, embedder: CachingEmbedder
) -> dict[str, tuple[list[Asked], list[Asked]]]:
    """Every set's positives and negatives, searched once."""
    people: list[dict[str, Any]] = json.loads(FACTS.read_text())["people"]
    samples: list[dict[str, Any]] = json.loads((SHARED / "locomo" / "locomo.dev.json").read_text())
    out: dict[str, tuple[list[Asked], list[Asked]]] = {}
    positives: list[Asked] = []
    negatives: list[Asked] = []
    all_facts: list[tuple[str, str]] = []
    for n, person in enumerate(people):
        store = await SQLiteStore.open(tmp / f"p{n}.db", embedder=embedder)
        entries = [(f"f{n}-{i}", f["fact"]) for i, f in enumerate(person["facts"][:5])]
        all_facts += entries
        await add_archival(store, entries)
        for i, fact in enumerate(person["facts"]):
            asked = await _ask(
                store,
                "me",
                fact["question"],
                {f"f{n}-{i}"} if i < 5 else set(),
                Domain.ALL,
                "label",
            )
            (positives if i < 5 else negatives).append(asked)
        await store.close()
    out["facts, 5 per store"] = (positives, negatives)
    store = await SQLiteStore.open(tmp / "mixed.db", embedder=embedder)
    await add_archival(store, all_facts + others(samples, 800))
    positives, negatives = [], []
    for n, person in enumerate(people):
        for i, fact in enumerate(person["facts"]):
            gold = {f"f{n}-{i}"} if i < 5 else set()
            asked = await _ask(store, "me", fact["question"], gold, Domain.ALL, "label")
            (positives if i < 5 else negatives).append(asked)
    await store.close()
    out["facts + 800 others"] = (positives, negatives)
    store = await SQLiteStore.open(tmp / "locomo.db", embedder=embedder)
    await load(store, samples)
    positives, negatives = [], []
    for sample in samples:
        for qa in sample["qa"]:
            evidence = {e.strip() for item in qa.get("evidence", []) for e in item.split(";")}
            evidence.discard("")
            negative = qa.get("category") == 5
            if not evidence and not negative:
                continue
            asked = await _ask(
                store,
                sample["sample_id"],
                qa["question"],
                set() if negative else evidence,
                Domain.CONVERSATIONS,
                "dia_id",
            )
            (negatives if negative else positives).append(asked)
    await store.close()
    out["LoCoMo (negatives: category 5)"] = (positives, negatives)
    return out


def _row(sets: dict[str, tuple[list[Asked], list[Asked]]], coverage: float, cosine: float) -> str:
    cells: list[str] = []
    for positives, negatives in sets.values():
        r1 = sum(
            bool(found[:1]) and found[0] in a.gold
            for a in positives
            for found in [_floored(a, coverage, cosine)]
        ) / len(positives)
        r10 = sum(
            len(a.gold & set(_floored(a, coverage, cosine))) / len(a.gold) for a in positives
        ) / len(positives)
        quiet = sum(not _floored(a, coverage, cosine) for a in negatives) / len(negatives)
        cells.append(f"{r1:.3f} / {r10:.3f} / {quiet:.3f}")
    name = lambda v: "off" if v > 1 else f"{v:g}"  # noqa: E731
    return f"| {name(coverage)} | {name(cosine)} | " + " | ".join(cells) + " |"


async def main() -> None:
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        sets = await collect(Path(tmp), CachingEmbedder())
    print(f"collected in {time.perf_counter() - started:.0f} s")
    header = " | ".join(
        f"{name} ({len(p)} + {len(n)}): R@1 / R@10 / nothing" for name, (p, n) in sets.items()
    )
    print(f"| min coverage | min cosine | {header} |")
    print("|---|---|" + "---|" * len(sets))
    print(_row(sets, 2.0, -2.0) + "  (no floor: baseline)")
    print(
        _row(sets, RELEVANT_COVERAGE, RELEVANT_COSINE)
        + f"  (shipped: {RELEVANT_COVERAGE}, {RELEVANT_COSINE})"
    )
    for coverage in COVERAGES:
        for cosine in COSINES:
            print(_row(sets, coverage, cosine))


if __name__ == "__main__":
    GATE = "--gate" in sys.argv[1:]
    anyio.run(main)
