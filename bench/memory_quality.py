"""Retrieval quality of memory search on LoCoMo: BM25-only vs vector-only vs hybrid.

Loads every turn of ``shared/data/locomo/locomo.dev.json`` into the conversations
domain of a fresh :class:`~satchel.memory.SQLiteStore` (one agent per conversation,
each turn a message with its ``dia_id`` in metadata and its session time plus 10 s
per turn as ``created_at``), asks every QA question that has evidence, and reports recall@5 and
recall@10 of the evidence turns, plus the ratio to the BM25-only baseline of the same
run. ``--fusions all`` also sweeps the fusion methods that chose satchel's default.

The same turns are also loaded as archival entries (one after another, as an agent
saving notes would) into a second store and asked the same questions. Each domain
reports BM25-only, vector-only, the shipped hybrid, hybrid without neighbouring-entry
context (the default before issue 15) and other neighbour weights.

Run:
    uv run python bench/memory_quality.py [--fusions default|all]
        [--domains conversations,archival] [--data PATH]
"""

from __future__ import annotations

import argparse
import json
import re
import tempfile
import time
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import anyio
import numpy as np
import numpy.typing as npt

from satchel.embed import default_embedder
from satchel.memory import (
    NO_NEIGHBOURS,
    BlockKind,
    Domain,
    Fusion,
    Neighbours,
    SearchMode,
    SQLiteStore,
)

DATA = next(
    (
        p / "shared" / "data" / "locomo" / "locomo.dev.json"
        for p in Path(__file__).resolve().parents[1:4]
        if (p / "shared" / "data").is_dir()
    ),
    Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo" / "locomo.dev.json",
)


class CachingEmbedder:
    """Wraps an embedder so repeated questions are embedded once per run."""

    def __init__(self) -> None:
        self.inner = default_embedder()
        self.name = self.inner.name
        self.dim = self.inner.dim
        self.cache: dict[str, npt.NDArray[np.float32]] = {}

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        missing = [t for t in dict.fromkeys(texts) if t not in self.cache]
        if missing:
            for text, row in zip(missing, self.inner.embed(missing), strict=True):
                self.cache[text] = row
        return np.stack([self.cache[t] for t in texts])


def session_time(text: str) -> datetime:
    """LoCoMo's ``1:56 pm on 8 May, 2023``."""
    return datetime.strptime(text, "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)


def turns_of(sample: dict[str, Any]) -> list[tuple[str, str, datetime, str]]:
    """``(role, content, created_at, dia_id)`` for every turn of a conversation."""
    conversation = sample["conversation"]
    speaker_a = conversation["speaker_a"]
    out: list[tuple[str, str, datetime, str]] = []
    for key, turns in conversation.items():
        if not re.fullmatch(r"session_\d+", key) or not isinstance(turns, list):
            continue
        start = session_time(conversation[f"{key}_date_time"])
        for position, turn in enumerate(turns):
            # A turn a few seconds after the one before it, as a chat log records them
            # (turns are loaded concurrently, so insertion order is not turn order).
            when = start + timedelta(seconds=10 * position)
            content = f"{turn['speaker']}: {turn['text']}"
            if turn.get("blip_caption"):
                content += f" [shares {turn['blip_caption']}]"
            role = "user" if turn["speaker"] == speaker_a else "assistant"
            out.append((role, content, when, turn["dia_id"]))
    return out


def questions_of(sample: dict[str, Any]) -> list[tuple[str, set[str]]]:
    out: list[tuple[str, set[str]]] = []
    for qa in sample["qa"]:
        evidence = {e.strip() for item in qa.get("evidence", []) for e in re.split(r"[;,]", item)}
        evidence.discard("")
        if evidence:
            out.append((qa["question"], evidence))
    return out


async def load(store: SQLiteStore, samples: list[dict[str, Any]]) -> int:
    count = 0
    for sample in samples:
        turns = turns_of(sample)
        for start in range(0, len(turns), 64):
            async with anyio.create_task_group() as group:
                for role, content, when, dia_id in turns[start : start + 64]:
                    group.start_soon(
                        lambda a=sample["sample_id"], r=role, c=content, w=when, d=dia_id: (
                            store.add_message(
                                a,
                                r,  # type: ignore[arg-type]
                                c,
                                created_at=w,
                                metadata={"dia_id": d},
                            )
                        )
                    )
            count += len(turns[start : start + 64])
    return count


async def load_archival(store: SQLiteStore, samples: list[dict[str, Any]]) -> int:
    """Every turn as an archival entry, one after another (an agent saving notes in
    order), labelled neutrally (labels are searched too)."""
    count = 0
    for sample in samples:
        turns = turns_of(sample)
        vectors = store.embedder.embed([c for _, c, _, _ in turns]) if store.embedder else None
        del vectors  # warms the caching embedder in one batch
        for _, content, _, dia_id in turns:
            count += 1
            await store.create_block(
                sample["sample_id"],
                f"note-{count}",
                content,
                kind=BlockKind.ARCHIVAL,
                metadata={"dia_id": dia_id},
            )
    return count


async def evaluate(
    store: SQLiteStore,
    samples: list[dict[str, Any]],
    mode: SearchMode,
    domain: Domain = Domain.CONVERSATIONS,
) -> dict[str, float]:
    hits5: list[float] = []
    hits10: list[float] = []
    started = time.perf_counter()
    for sample in samples:
        for question, evidence in questions_of(sample):
            hits = await store.search(
                sample["sample_id"], question, domains=domain, limit=10, mode=mode
            )
            found = [str(h.metadata.get("dia_id")) for h in hits]
            hits5.append(len(evidence & set(found[:5])) / len(evidence))
            hits10.append(len(evidence & set(found[:10])) / len(evidence))
    elapsed = time.perf_counter() - started
    return {
        "recall@5": float(np.mean(hits5)),
        "recall@10": float(np.mean(hits10)),
        "questions": float(len(hits5)),
        "ms_per_query": 1000 * elapsed / max(1, len(hits5)),
    }


PREVIOUS = Fusion(method="minmax", vector_weight=0.4)
"""The default before coverage fusion (issue 10), measured in every run for comparison."""

FUSIONS: dict[str, Fusion] = {
    **{f"coverage w={w}": Fusion(method="coverage", vector_weight=w) for w in (0.3, 0.4, 0.6)},
    "rrf k=60": Fusion(method="rrf", k=60, vector_weight=0.5),
    "rrf k=20": Fusion(method="rrf", k=20, vector_weight=0.5),
    "rrf k=5": Fusion(method="rrf", k=5, vector_weight=0.5),
    "rrf k=5 w=0.3": Fusion(method="rrf", k=5, vector_weight=0.3),
    **{
        f"{method} w={w}": Fusion(method=method, vector_weight=w)
        for method in ("minmax", "zscore", "convex")
        for w in (0.2, 0.3, 0.4, 0.5, 0.6, 0.7)
    },
    "convex w=0.4 no fill-in": Fusion(method="convex", vector_weight=0.4, fill_in=False),
    "minmax w=0.3 no fill-in": Fusion(method="minmax", vector_weight=0.3, fill_in=False),
    "rrf k=60 no fill-in": Fusion(method="rrf", k=60, vector_weight=0.5, fill_in=False),
    "convex w=0.4 100 candidates": Fusion(method="convex", vector_weight=0.4, candidates=100),
    "convex w=0.4 20 candidates": Fusion(method="convex", vector_weight=0.4, candidates=20),
}


PREVIOUS_NEIGHBOURS = Neighbours(messages=1.0, archival=0.5, archival_lend_share=1.0)
"""Neighbour context as first shipped (issue 15): any term lent, archival weight 0.5."""


async def measure(
    store: SQLiteStore, samples: list[dict[str, Any]], domain: Domain, sweep: bool
) -> list[tuple[str, dict[str, float]]]:
    """Every method on one loaded store, the BM25-only baseline first."""
    rows: list[tuple[str, dict[str, float]]] = []
    rows.append(("bm25 only", await evaluate(store, samples, "bm25", domain)))
    rows.append(("vector only", await evaluate(store, samples, "vector", domain)))
    default, weights = store.fusion, store.neighbours
    rows.append((f"hybrid (default: {default.method} w={default.vector_weight}, neighbours "
                 f"{weights.messages}/{weights.archival}, archival rare terms)",
                 await evaluate(store, samples, "hybrid", domain)))  # fmt: skip
    store.neighbours = NO_NEIGHBOURS
    rows.append(("hybrid without neighbours (before)",
                 await evaluate(store, samples, "hybrid", domain)))  # fmt: skip
    store.neighbours = PREVIOUS_NEIGHBOURS
    rows.append(("hybrid, neighbours 1.0/0.5, any term (previous)",
                 await evaluate(store, samples, "hybrid", domain)))  # fmt: skip
    for other in (0.5, 0.75, 1.0):
        store.neighbours = Neighbours(messages=other, archival=other, archival_lend_share=1.0)
        rows.append(
            (f"hybrid, neighbours {other}, any term",
             await evaluate(store, samples, "hybrid", domain))
        )  # fmt: skip
    store.neighbours = NO_NEIGHBOURS
    store.fusion = PREVIOUS
    rows.append(
        ("hybrid (issue 10: minmax w=0.4)", await evaluate(store, samples, "hybrid", domain))
    )
    store.neighbours = weights
    store.fusion = default
    if sweep:
        for name, fusion in FUSIONS.items():
            store.fusion = fusion
            rows.append((f"hybrid {name}", await evaluate(store, samples, "hybrid", domain)))
        store.fusion = default
    return rows


async def interleaved(
    store: SQLiteStore, samples: list[dict[str, Any]], domain: Domain, rounds: int = 3
) -> tuple[float, float]:
    """p50 ms of hybrid search without and with neighbour context, the two alternating
    query by query (so machine load hits both alike); queries embedded beforehand."""
    asked = [(s["sample_id"], q) for s in samples for q, _ in questions_of(s)]
    if store.embedder is not None:
        store.embedder.embed([q for _, q in asked])
    weights = store.neighbours
    times: dict[bool, list[float]] = {False: [], True: []}
    for _ in range(rounds):
        for agent, question in asked:
            for on in (False, True):
                store.neighbours = weights if on else NO_NEIGHBOURS
                started = time.perf_counter()
                await store.search(agent, question, domains=domain, limit=10)
                times[on].append(1000 * (time.perf_counter() - started))
    store.neighbours = weights
    return float(np.median(times[False])), float(np.median(times[True]))


async def main(samples: list[dict[str, Any]], sweep: bool, domains: list[str]) -> None:
    tables: list[tuple[str, int, list[tuple[str, dict[str, float]]]]] = []
    latency: dict[str, tuple[float, float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        embedder = CachingEmbedder()
        for name in domains:
            store = await SQLiteStore.open(Path(tmp) / f"{name}.db", embedder=embedder)
            started = time.perf_counter()
            if name == "conversations":
                turns, domain = await load(store, samples), Domain.CONVERSATIONS
            else:
                turns, domain = await load_archival(store, samples), Domain.ARCHIVAL_MEMORY
            print(f"{name}: loaded {turns} turns in {time.perf_counter() - started:.1f} s")
            tables.append((name, turns, await measure(store, samples, domain, sweep)))
            latency[name] = await interleaved(store, samples, domain)
            await store.close()
    for name, turns, rows in tables:
        base = rows[0][1]
        print(f"\n{name}: {int(base['questions'])} questions with evidence, {turns} turns")
        print(f"{'method':<56} {'R@5':>6} {'x bm25':>7} {'R@10':>6} {'x bm25':>7} {'ms/q':>6}")
        for method, r in rows:
            print(
                f"{method:<56} {r['recall@5']:6.3f} {r['recall@5'] / base['recall@5']:7.2f} "
                f"{r['recall@10']:6.3f} {r['recall@10'] / base['recall@10']:7.2f} "
                f"{r['ms_per_query']:6.1f}"
            )
        off, on = latency[name]
        print(f"hybrid p50, interleaved: {off:.2f} ms without neighbours, {on:.2f} ms with "
              f"(x{on / off:.2f})")  # fmt: skip


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--fusions", choices=["default", "all"], default="default")
    parser.add_argument(
        "--domains",
        type=lambda s: s.split(","),
        default=["conversations", "archival"],
        help="comma-separated: conversations, archival (default both)",
    )
    args = parser.parse_args()
    anyio.run(main, json.loads(args.data.read_text()), args.fusions == "all", args.domains)
