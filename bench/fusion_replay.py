"""Replaying memory search's fusion offline: capture every search's candidates once,
then rank them with any fusion variant in milliseconds. A script, not a test.

``capture`` builds the stores of ``bench/memory_small.py`` (personal facts at 5, 10,
80 and 80 + N entries; each LoCoMo dev session and conversation as its own store),
runs each question once through the real SQLite store in hybrid mode, and keeps what
the store handed to the fusion: the BM25 scores, the cosines (filled in for BM25
candidates), each BM25 candidate's query-term coverage, the query terms' document
frequencies and which terms each candidate contains, the row count, the candidates'
text and the gold rows. ``replay`` ranks those candidates with every variant in
:data:`VARIANTS` and prints recall@1/@3 per store kind, with BM25-only and vector-only
from the same candidates.

Run:
    uv run python bench/fusion_replay.py capture [--others 0,800,2800] [--out PATH]
    uv run python bench/fusion_replay.py replay [--input PATH] [--only NAME,...]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import pickle
import re
import sqlite3
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import anyio

import satchel.memory.sqlite._search_sql as search_sql
import satchel.memory.sqlite._searcher as searcher
from satchel.memory import Domain, SQLiteStore
from satchel.retrieval import fuse_hybrid, idf, query_terms

sys.path.insert(0, str(Path(__file__).parent))
from memory_quality import CachingEmbedder, questions_of, turns_of
from memory_small import FACTS, SHARED, add_archival, facts_of, others

Key = tuple[int, int]


@dataclass
class Case:
    """One question's captured candidates."""

    store: str
    question: str
    terms: list[str]
    bm25: dict[Key, float]
    vector: dict[Key, float]
    coverage: dict[Key, float]
    matched: dict[int, list[str]]
    frequency: dict[str, float]
    documents: float
    gold: set[Key]
    texts: dict[Key, str] = field(default_factory=dict[Key, str])
    entries: int = 0
    part: int = 0
    """Which person (facts) or conversation (LoCoMo) the question is about: the fixed
    split of :func:`split` is by this."""


_last: dict[str, Any] = {}


def _install_hooks() -> None:
    real_rank, real_cover = searcher.rank, search_sql.term_coverage

    def rank(signals: Any, **kw: Any) -> Any:
        _last["bm25"], _last["vector"] = dict(signals["bm25"]), dict(signals["vector"])
        _last["coverage"] = dict(signals.get("coverage") or {})
        return real_rank(signals, **kw)

    def cover(matched: Any, frequency: Any, documents: float) -> Any:
        _last["matched"] = {k: list(v) for k, v in matched.items()}
        _last["frequency"], _last["documents"] = dict(frequency), documents
        return real_cover(matched, frequency, documents)

    searcher.rank = rank  # type: ignore[assignment]
    search_sql.term_coverage = cover  # type: ignore[assignment]


async def _ask(
    store: SQLiteStore,
    path: Path,
    name: str,
    domain: Domain,
    questions: list[tuple[str, set[str]]],
    blocks: bool,
    out: list[Case],
    parts: Mapping[str, int] | int,
) -> None:
    db = sqlite3.connect(path)
    if blocks:
        rows = db.execute(
            "SELECT pk, label, label || ' ' || description || ' ' || value FROM blocks"
        )
        ident = {int(pk): (label, text) for pk, label, text in rows}
    else:
        rows = db.execute("SELECT pk, metadata, content FROM messages")
        ident = {int(pk): (str(json.loads(meta).get("dia_id")), text) for pk, meta, text in rows}
    dom = searcher.BLOCKS if blocks else searcher.MESSAGES
    db.close()
    for question, gold in questions:
        _last.clear()
        await store.search("me", question, domains=domain, limit=10, mode="hybrid")
        keys = set(_last.get("bm25", {})) | set(_last.get("vector", {}))
        out.append(
            Case(
                store=name,
                question=question,
                terms=query_terms(question),
                bm25=_last.get("bm25", {}),
                vector=_last.get("vector", {}),
                coverage=_last.get("coverage", {}),
                matched=_last.get("matched", {}),
                frequency=_last.get("frequency", {}),
                documents=float(_last.get("documents", len(ident))),
                gold={(dom, pk) for pk, (ident_, _) in ident.items() if ident_ in gold},
                texts={k: ident[k[1]][1] for k in keys if k[1] in ident},
                entries=len(ident),
                part=parts if isinstance(parts, int) else parts[question],
            )
        )


async def capture(args: argparse.Namespace) -> list[Case]:
    _install_hooks()
    people = json.loads(FACTS.read_text())["people"]
    samples = json.loads(args.data.read_text())
    embedder = CachingEmbedder()
    out: list[Case] = []
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)

        async def fresh() -> tuple[SQLiteStore, Path]:
            path = tmp / f"s{time.perf_counter_ns()}.db"
            return await SQLiteStore.open(path, embedder=embedder), path

        of_person = {
            item["question"]: i for i, person in enumerate(people) for item in person["facts"]
        }
        for per_person in (5, 10):
            for person in people:
                entries, questions = facts_of([person], per_person)
                store, path = await fresh()
                await add_archival(store, entries)
                await _ask(
                    store,
                    path,
                    f"facts {per_person}",
                    Domain.ARCHIVAL_MEMORY,
                    questions,
                    True,
                    out,
                    of_person,
                )
                await store.close()
        entries, questions = facts_of(people, 10)
        for extra in args.others:
            store, path = await fresh()
            await add_archival(store, entries + others(samples, extra))
            await _ask(
                store,
                path,
                f"facts {80 + extra}",
                Domain.ARCHIVAL_MEMORY,
                questions,
                True,
                out,
                of_person,
            )
            await store.close()
        for whole in (False, True):
            for number, sample in enumerate(samples):
                groups: dict[str, list[Any]] = {}
                for turn in turns_of(sample):
                    groups.setdefault("all" if whole else turn[3].split(":")[0], []).append(turn)
                for group in groups.values():
                    ids = {turn[3] for turn in group}
                    asked = [(q, ev) for q, ev in questions_of(sample) if ev <= ids]
                    store, path = await fresh()
                    for role, content, when, dia_id in group:
                        await store.add_message(
                            "me", role, content, created_at=when, metadata={"dia_id": dia_id}
                        )
                    name_ = "locomo conversation" if whole else "locomo session"
                    await _ask(store, path, name_, Domain.CONVERSATIONS, asked, False, out, number)
                    await store.close()
    return out


# --- replay -------------------------------------------------------------------------

Ranker = Callable[[Case], list[Key]]


def _sorted(scores: Mapping[Key, float]) -> list[Key]:
    return [k for k, _ in sorted(scores.items(), key=lambda item: -item[1])]


def _current(case: Case) -> list[Key]:
    return [k for k, _ in fuse_hybrid(case.bm25, case.vector, coverage=case.coverage)]


def _keys(case: Case) -> list[Key]:
    return list(dict.fromkeys([*case.bm25, *case.vector]))


def _linear(case: Case, coverage: Mapping[Key, float], w: float) -> list[Key]:
    return _sorted(
        {k: (1 - w) * coverage.get(k, 0.0) + w * case.vector.get(k, 0.0) for k in _keys(case)}
    )


def _exact(term: str, text: str) -> bool:
    return re.search(rf"(?<![^\W_]){re.escape(term)}(?![^\W_])", text, re.IGNORECASE) is not None


def _stem_discounted(case: Case, factor: float) -> dict[Key, float]:
    """Coverage where a term the candidate holds only as another word form (FTS5's
    Porter stem: "lives" for "living") counts ``factor`` of its IDF."""
    weights = {t: idf(df, case.documents) for t, df in case.frequency.items()}
    total = sum(weights.values())
    out: dict[Key, float] = {}
    for key in case.bm25:
        text = case.texts.get(key, "")
        held = sum(
            weights[t] * (1.0 if _exact(t, text) else factor)
            for t in set(case.matched.get(key[1], []))
        )
        out[key] = min(1.0, held / total) if total > 0 else 0.0
    return out


def _present(case: Case) -> float:
    """The share of the query's IDF mass made of terms some entry of the store holds."""
    weights = {t: idf(df, case.documents) for t, df in case.frequency.items()}
    total = sum(weights.values())
    return sum(v for t, v in weights.items() if case.frequency[t] > 0) / total if total else 0.0


def _cosines(case: Case) -> list[float]:
    return sorted(case.vector.values(), reverse=True) or [0.0]


def _margin(case: Case) -> float:
    """How far the closest entry in meaning stands ahead of the next one."""
    top = _cosines(case)
    return top[0] - top[1] if len(top) > 1 else 0.0


def _z_top(case: Case) -> float:
    """The best cosine's standard score among the candidates' cosines."""
    values = _cosines(case)
    mean = sum(values) / len(values)
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / len(values)) or 1.0
    return (values[0] - mean) / sd


def _agreement(case: Case) -> float:
    """The vector's best candidate's coverage, as a share of the best coverage."""
    best = max(case.coverage.values(), default=0.0)
    if best <= 0 or not case.vector:
        return 1.0
    return case.coverage.get(max(case.vector, key=case.vector.__getitem__), 0.0) / best


def _gated(case: Case, theta: tuple[float, ...]) -> list[Key]:
    """A logistic gate on the vector weight from query-level confidence (margin, z of
    the best cosine, present IDF mass, agreement), coverage shrunk by present**power."""
    a, b, c, d, power, g = theta
    present = _present(case)
    logit = (
        a
        + b * 10 * _margin(case)
        + c * (_z_top(case) - 2)
        + d * (present - 0.5)
        + g * (_agreement(case) - 0.5)
    )
    w = 1 / (1 + math.exp(-logit))
    shrunk = {k: v * present**power for k, v in case.coverage.items()}
    return _linear(case, shrunk, w)


def _override(case: Case, margin: float) -> list[Key]:
    """The shipped fusion, but the vector's best candidate first when it leads the
    next cosine by at least ``margin``."""
    order = _current(case)
    if case.vector and _margin(case) >= margin:
        top = max(case.vector, key=case.vector.__getitem__)
        order = [top, *(k for k in order if k != top)]
    return order


def _named(case: Case, factor: float) -> dict[Key, float]:
    """Coverage times ``factor`` for a candidate lacking a capitalised word of the
    question (not its first) that some entry of the store holds: a name, in this data."""
    words = re.findall(r"(?<!^)(?<![.?!] )\b([A-Z][a-z]+)", case.question)
    names = {w.lower() for w in words if case.frequency.get(w.lower(), 0) > 0} & set(case.terms)
    return {
        k: v * (factor if names - set(case.matched.get(k[1], [])) else 1.0)
        for k, v in case.coverage.items()
    }


THETA: Final = (0.28, 0.87, 1.27, -0.53, 2.0, 1.72)
"""The gate's parameters with the best worst-case margin over the better single signal
on the *even* half (people 0, 2, 4, 6 and LoCoMo conversation 0), from 400 random
draws (seed 0); the odd half was not looked at while choosing."""

VARIANTS: dict[str, Ranker] = {
    "bm25": lambda c: _sorted(c.bm25),
    "vector": lambda c: _sorted(c.vector),
    "coverage w=0.5 (shipped)": _current,
    "stem-only matches x0.25": lambda c: _linear(c, _stem_discounted(c, 0.25), 0.5),
    "stem-only matches x0": lambda c: _linear(c, _stem_discounted(c, 0.0), 0.5),
    "coverage x present": lambda c: _linear(
        c, {k: v * _present(c) for k, v in c.coverage.items()}, 0.5
    ),
    "coverage x present^2": lambda c: _linear(
        c, {k: v * _present(c) ** 2 for k, v in c.coverage.items()}, 0.5
    ),
    "w = 0.45 + 2 x margin": lambda c: _linear(c, c.coverage, min(1.0, 0.45 + 2 * _margin(c))),
    "w = 0.5 + 0.15 (z - 2)": lambda c: _linear(
        c, c.coverage, min(1.0, max(0.0, 0.5 + 0.15 * (_z_top(c) - 2)))
    ),
    "present^2, w = 0.5 + 0.1 (z - 2)": lambda c: _linear(
        c,
        {k: v * _present(c) ** 2 for k, v in c.coverage.items()},
        min(1.0, max(0.0, 0.5 + 0.1 * (_z_top(c) - 2))),
    ),
    "w = 0.5 + 0.3 (1 - agreement)": lambda c: _linear(
        c, c.coverage, 0.5 + 0.3 * (1 - _agreement(c))
    ),
    "w = 0.5 - 0.2 (1 - agreement)": lambda c: _linear(
        c, c.coverage, 0.5 - 0.2 * (1 - _agreement(c))
    ),
    "logistic gate (fit on even half)": lambda c: _gated(c, THETA),
    "lacking a named term x0.5": lambda c: _linear(c, _named(c, 0.5), 0.5),
    "vector first if margin >= 0.12": lambda c: _override(c, 0.12),
    "vector first if margin >= 0.15": lambda c: _override(c, 0.15),
}


def recall(cases: list[Case], ranker: Ranker, cut: int) -> float:
    total = 0.0
    for case in cases:
        top = set(ranker(case)[:cut])
        total += len(case.gold & top) / max(1, len(case.gold))
    return total / max(1, len(cases))


def replay(cases: list[Case], variants: Mapping[str, Ranker]) -> None:
    stores = list(dict.fromkeys(c.store for c in cases))
    groups = {s: [c for c in cases if c.store == s] for s in stores}
    print(f"{'variant':<34}" + "".join(f"{s[:17]:>18}" for s in stores))
    print(f"{'':<34}" + "".join(f"{f'n={len(g)} R@1/@3':>18}" for g in groups.values()))
    best = {
        s: (
            max(recall(g, VARIANTS["bm25"], 1), recall(g, VARIANTS["vector"], 1)),
            max(recall(g, VARIANTS["bm25"], 3), recall(g, VARIANTS["vector"], 3)),
        )
        for s, g in groups.items()
    }
    for name, ranker in variants.items():
        cells: list[str] = []
        for s, g in groups.items():
            r1, r3 = recall(g, ranker, 1), recall(g, ranker, 3)
            mark = "" if (r1 >= best[s][0] - 1e-9 and r3 >= best[s][1] - 1e-9) else "*"
            cells.append(f"{f'{r1:.3f}/{r3:.3f}{mark}':>18}")
        print(f"{name:<34}" + "".join(cells))
    print("(* below the better of BM25-only and vector-only at R@1 or R@3)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("action", choices=["capture", "replay"])
    parser.add_argument("--data", type=Path, default=SHARED / "locomo" / "locomo.dev.json")
    parser.add_argument(
        "--others", type=lambda s: [int(x) for x in s.split(",")], default=[0, 800, 2800]
    )
    parser.add_argument(
        "--out", "--input", dest="path", type=Path, default=Path("/tmp/fusion_replay.pkl")
    )
    parser.add_argument("--only", default="")
    parser.add_argument(
        "--half",
        choices=["all", "even", "odd"],
        default="all",
        help="only the questions of even (or odd) people and LoCoMo conversations",
    )
    args = parser.parse_args()
    if args.action == "capture":
        started = time.perf_counter()
        captured = anyio.run(capture, args)
        # plain dicts, so the file loads whether this runs as a script or a module
        args.path.write_bytes(pickle.dumps([dataclasses.asdict(c) for c in captured]))
        print(f"{len(captured)} questions captured in {time.perf_counter() - started:.0f} s")
    else:
        loaded = [Case(**fields) for fields in pickle.loads(args.path.read_bytes())]
        if args.half != "all":
            loaded = [c for c in loaded if c.part % 2 == (args.half == "odd")]
        chosen = {k: v for k, v in VARIANTS.items() if not args.only or k in args.only.split(",")}
        replay(loaded, chosen)
