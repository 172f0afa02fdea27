"""Search quality at every store size a person's memory has: BM25-only vs vector-only
vs hybrid, from 5 entries to a few thousand, through the real SQLite store and MiniLM.

Stores (each its own database file, so BM25 statistics are the store's own):

* ``facts 5/person``, ``facts 10/person``: the personal-facts set
  (``tests/memory/data/personal_facts.json``: 8 people x 10 facts, each question a
  paraphrase sharing no content word with its fact but the name), one store per person
  with its first 5 or all 10 facts as archival entries;
* ``facts, 8 people``: all 80 facts in one store;
* ``facts + N others``: the 80 facts among N unrelated real texts (LoCoMo turns and
  MetaTool requests) as archival entries;
* ``LoCoMo session``: each LoCoMo dev session (14-39 turns) as its own store, asked
  the questions whose evidence lies in it;
* ``LoCoMo conversation``: each whole conversation (about 400 turns) as its own store;
* ``LoCoMo conv., archival``: each whole conversation saved turn by turn as archival
  entries, a store each.

Reports recall@1/3/5/10 of the gold entries for BM25-only, vector-only, hybrid (the
default fusion) and the previous default (min-max, vector weight 0.4), and hybrid's
ratio to the better single method at each cut-off.

Run:
    uv run python bench/memory_small.py [--others 0,800,2800] [--data PATH]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio

from satchel.memory import (
    NO_NEIGHBOURS,
    BlockKind,
    Domain,
    Fusion,
    Neighbours,
    SearchHit,
    SQLiteStore,
)

sys.path.insert(0, str(Path(__file__).parent))
from memory_quality import CachingEmbedder, questions_of, turns_of

ROOT = Path(__file__).resolve().parents[1]
FACTS = ROOT / "tests" / "memory" / "data" / "personal_facts.json"
SHARED = next(
    (p / "shared" / "data" for p in (ROOT.parent, ROOT.parent.parent) if (p / "shared").is_dir()),
    ROOT.parent / "shared" / "data",
)
CUTS = (1, 3, 5, 10)
METHODS: dict[str, tuple[str, Fusion | None, Neighbours | None]] = {
    "bm25": ("bm25", None, None),
    "vector": ("vector", None, None),
    "hybrid": ("hybrid", None, None),
    "no neighbours": ("hybrid", None, NO_NEIGHBOURS),
    "any term, 0.5": (
        "hybrid",
        None,
        Neighbours(messages=1.0, archival=0.5, archival_lend_share=1.0),
    ),
    "old minmax 0.4": ("hybrid", Fusion(method="minmax", vector_weight=0.4), NO_NEIGHBOURS),
}
"""Method name: (mode, fusion or the default, neighbour weights or the default);
``no neighbours`` is the shipped hybrid before issue 15, ``any term, 0.5`` neighbour
context as first shipped (any term lent, archival weight 0.5)."""

Question = tuple[str, set[str]]
KeyOf = Callable[[SearchHit], str]


class Tally:
    """Recall at each cut-off, per method, summed over questions."""

    def __init__(self) -> None:
        self.sums = {m: [0.0] * len(CUTS) for m in METHODS}
        self.questions = 0
        self.entries: list[int] = []

    def mean(self, method: str) -> list[float]:
        return [s / max(1, self.questions) for s in self.sums[method]]


async def ask(
    store: SQLiteStore, domain: Domain, questions: list[Question], key: KeyOf, tally: Tally
) -> None:
    default, weights = store.fusion, store.neighbours
    for method, (mode, fusion, neighbours) in METHODS.items():
        store.fusion = fusion or default
        store.neighbours = neighbours or weights
        for question, gold in questions:
            hits = await store.search("me", question, domains=domain, limit=10, mode=mode)  # type: ignore[arg-type]
            found = [key(h) for h in hits]
            for i, cut in enumerate(CUTS):
                tally.sums[method][i] += len(gold & set(found[:cut])) / len(gold)
    store.fusion, store.neighbours = default, weights
    tally.questions += len(questions)


async def in_store(
    tmp: Path, embedder: CachingEmbedder, fill: Callable[[SQLiteStore], Awaitable[int]]
) -> tuple[SQLiteStore, int]:
    store = await SQLiteStore.open(tmp / f"s{time.perf_counter_ns()}.db", embedder=embedder)
    return store, await fill(store)


async def add_archival(store: SQLiteStore, entries: list[tuple[str, str]]) -> int:
    for start in range(0, len(entries), 64):
        async with anyio.create_task_group() as group:
            for label, text in entries[start : start + 64]:
                group.start_soon(
                    lambda lb=label, t=text: store.create_block(
                        "me", lb, t, kind=BlockKind.ARCHIVAL
                    )
                )
    return len(entries)


def facts_of(
    people: list[dict[str, Any]], per_person: int
) -> tuple[list[tuple[str, str]], list[Question]]:
    entries: list[tuple[str, str]] = []
    questions: list[Question] = []
    for person in people:
        for i, item in enumerate(person["facts"][:per_person]):
            label = f"{person['name'].lower()}-{i}"  # neutral: labels are searched too
            entries.append((label, item["fact"]))
            questions.append((item["question"], {label}))
    return entries, questions


def others(samples: list[dict[str, Any]], n: int) -> list[tuple[str, str]]:
    texts = [content for s in samples for _, content, _, _ in turns_of(s)]
    queries = json.loads((SHARED / "metatool" / "queries.dev.json").read_text())
    texts += [q["query"] for q in queries]
    return [(f"other-{i}", text) for i, text in enumerate(texts[:n])]


async def run(args: argparse.Namespace) -> dict[str, Tally]:
    people = json.loads(FACTS.read_text())["people"]
    samples = json.loads(args.data.read_text())
    embedder = CachingEmbedder()
    label: KeyOf = lambda h: h.label or ""  # noqa: E731
    dia: KeyOf = lambda h: str(h.metadata.get("dia_id"))  # noqa: E731
    out: dict[str, Tally] = {}
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        for per_person in (5, 10):
            tally = out.setdefault(f"facts {per_person}/person", Tally())
            for person in people:
                entries, questions = facts_of([person], per_person)
                store, n = await in_store(tmp, embedder, lambda s, e=entries: add_archival(s, e))
                tally.entries.append(n)
                await ask(store, Domain.ARCHIVAL_MEMORY, questions, label, tally)
                await store.close()
        entries, questions = facts_of(people, 10)
        for extra in args.others:
            name_ = "facts, 8 people" if extra == 0 else f"facts + {extra} others"
            tally = out.setdefault(name_, Tally())
            added = entries + others(samples, extra)
            store, n = await in_store(tmp, embedder, lambda s, e=added: add_archival(s, e))
            tally.entries.append(n)
            await ask(store, Domain.ARCHIVAL_MEMORY, questions, label, tally)
            await store.close()
        for whole in (False, True):
            tally = out.setdefault("LoCoMo conversation" if whole else "LoCoMo session", Tally())
            for sample in samples:
                turns = turns_of(sample)
                groups: dict[str, list[Any]] = {}
                for turn in turns:
                    groups.setdefault("all" if whole else turn[3].split(":")[0], []).append(turn)
                for group in groups.values():
                    ids = {turn[3] for turn in group}
                    asked = [(q, ev) for q, ev in questions_of(sample) if ev <= ids]

                    async def fill(s: SQLiteStore, g: list[Any] = group) -> int:
                        for role, content, when, dia_id in g:
                            await s.add_message(
                                "me", role, content, created_at=when, metadata={"dia_id": dia_id}
                            )
                        return len(g)

                    store, n = await in_store(tmp, embedder, fill)
                    tally.entries.append(n)
                    await ask(store, Domain.CONVERSATIONS, asked, dia, tally)
                    await store.close()
        tally = out.setdefault("LoCoMo conv., archival", Tally())
        for sample in samples:
            turns = turns_of(sample)

            async def notes(s: SQLiteStore, g: list[Any] = turns) -> int:
                # One after another, as an agent saving notes would.
                for number, (_, content, _, dia_id) in enumerate(g, start=1):
                    await s.create_block(
                        "me",
                        f"note-{number}",
                        content,
                        kind=BlockKind.ARCHIVAL,
                        metadata={"dia_id": dia_id},
                    )
                return len(g)

            store, n = await in_store(tmp, embedder, notes)
            tally.entries.append(n)
            await ask(store, Domain.ARCHIVAL_MEMORY, questions_of(sample), dia, tally)
            await store.close()
    return out


def report(results: dict[str, Tally]) -> None:
    print(
        f"{'store':<22} {'entries':>9} {'qs':>4}  {'method':<15}"
        + "".join(f"{f'R@{c}':>7}" for c in CUTS)
    )
    for name, tally in results.items():
        sizes = tally.entries
        size = f"{min(sizes)}" if min(sizes) == max(sizes) else f"{min(sizes)}-{max(sizes)}"
        for i, method in enumerate(METHODS):
            head = f"{name:<22} {size:>9} {tally.questions:>4}" if i == 0 else " " * 37
            print(f"{head}  {method:<15}" + "".join(f"{r:7.3f}" for r in tally.mean(method)))
        best = [max(b, v) for b, v in zip(tally.mean("bm25"), tally.mean("vector"), strict=True)]
        ratio = [h / b if b else 1.0 for h, b in zip(tally.mean("hybrid"), best, strict=True)]
        print(" " * 37 + f"  {'hybrid / best':<15}" + "".join(f"{r:7.2f}" for r in ratio))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--data", type=Path, default=SHARED / "locomo" / "locomo.dev.json")
    parser.add_argument(
        "--others", type=lambda s: [int(x) for x in s.split(",")], default=[0, 800, 2800]
    )
    started = time.perf_counter()
    report(anyio.run(run, parser.parse_args()))
    print(f"\n{time.perf_counter() - started:.0f} s")
