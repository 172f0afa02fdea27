"""Lived memory: does an agent's own ``search`` find what the person said, in a store
that also holds the conversation's echoes (its questions, replies, tool calls and tool
results)?

The real :class:`satchel.Agent` runs a scripted model (:class:`satchel.agent.TestModel`,
one script per turn) over several sessions of one conversation in one SQLite store,
each session a new agent as each ``satchel run`` is:

1. sessions 1 and 2: the person tells facts of the personal-facts set
   (``tests/memory/data/personal_facts.json``; the first ``--people`` people, 10 facts
   each), a third stored with ``context append`` to ``human``, a third with ``recall
   insert``, a third only said (the conversation keeps it), between chatter turns;
2. sessions 3 and 4: the person asks each fact's question (a paraphrase sharing no
   content word with the fact but the name), and the model calls ``search`` with the
   question; between them, questions about people never mentioned (negatives, whose
   answer is in no entry). Session 4 asks everything again, so the store then holds
   session 3's questions, searches and results too.

A question scores when the first result the tool returns holds its fact (and no other
told fact: a whole block does not count); a negative scores when the tool's message
says that nothing matches (or answers: only earlier questions match). Reported for
hybrid, BM25-only and vector-only search, each its own store, in the same run, against
the baseline of the search as it was before: the turn in progress and tool traffic
were hits, and the first hit was returned whatever its score (hybrid, same store).

Run:
    uv run python bench/lived_memory.py [--people 4] [--negatives 24]

The second half of this benchmark, "looping model: requests, request bytes and
seconds per turn", is ``bench/lived_loop.py`` (see its section in ``bench/README.md``).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import anyio

from satchel import Agent
from satchel.agent import TestModel, call
from satchel.builtin import BuiltinTools, SearchTool
from satchel.memory import Domain, MemoryStore, SearchFilters, SearchHit, SearchMode, SQLiteStore

sys.path.insert(0, str(Path(__file__).parent))
from memory_quality import CachingEmbedder

ROOT = Path(__file__).resolve().parents[1]
FACTS = ROOT / "tests" / "memory" / "data" / "personal_facts.json"
CHATTER = [
    ("How is your day going?", "Quietly, thanks for asking."),
    ("The weather is grey again.", "Grey days are good for reading."),
    ("I am making coffee, one moment.", "Take your time."),
    ("Did you sleep well?", "I do not sleep, but thank you."),
]


@dataclass(kw_only=True, frozen=True)
class Fact:
    """One fact, how it is told, and its question."""

    text: str
    question: str
    how: str  # "append", "insert" or "said"


@dataclass(kw_only=True)
class Score:
    """One configuration's tallies."""

    first: int = 0
    asked: int = 0
    by_how: dict[str, list[int]] = field(default_factory=dict[str, list[int]])
    by_round: list[list[int]] = field(default_factory=lambda: [[0, 0], [0, 0]])
    """First hits and questions, in the first and the second asking session."""
    nothing: int = 0
    negatives: int = 0
    nothing_by_round: list[int] = field(default_factory=lambda: [0, 0])
    seconds: float = 0.0


class ModeSearch:
    """The store as ``search`` sees it: every search in ``mode``, and, for the
    baseline, with the old behaviour (the turn in progress and tool traffic found)."""

    def __init__(self, store: MemoryStore, mode: SearchMode, *, legacy: bool) -> None:
        self.store = store
        self.mode: SearchMode = mode
        self.legacy = legacy
        self.last: list[SearchHit] = []

    async def search(
        self,
        agent: str,
        query: str,
        *,
        domains: Domain = Domain.ALL,
        filters: SearchFilters | None = None,
        limit: int = 10,
    ) -> list[SearchHit]:
        filters = filters or SearchFilters()
        if self.legacy:
            filters = filters.model_copy(update={"exclude_turn": None, "tool_traffic": True})
        self.last = await self.store.search(
            agent, query, domains=domains, filters=filters, limit=limit, mode=self.mode
        )
        return self.last


def load_facts(people: int) -> tuple[list[Fact], list[str]]:
    """The told facts (round-robin over the three ways of telling) and the negatives:
    every question about the people never mentioned."""
    data = json.loads(FACTS.read_text())["people"]
    facts: list[Fact] = []
    for person in data[:people]:
        for fact in person["facts"]:
            how = ("append", "insert", "said")[len(facts) % 3]
            facts.append(Fact(text=fact["fact"], question=fact["question"], how=how))
    negatives = [f["question"] for person in data[people:] for f in person["facts"]]
    return facts, negatives


def telling(fact: Fact) -> tuple[str, TestModel]:
    """The person's message and the model's script for a turn that tells ``fact``."""
    match fact.how:
        case "append":
            steps: list[Any] = [
                call("context", {"operation": "append", "label": "human", "content": fact.text}),
                "Noted.",
            ]
        case "insert":
            steps = [call("recall", {"operation": "insert", "content": fact.text}), "Saved."]
        case _:
            steps = ["Good to know."]
    return f"Please remember this: {fact.text}", TestModel(steps)


def first_text(result: Any) -> str | None:
    """The first result's text in a ``search`` output, or ``None`` when it said that
    nothing matches (or answers: only earlier questions do)."""
    results = cast(list[dict[str, Any]], result["results"])
    if str(result["message"]).startswith("Nothing in") or not results:
        return None
    return str(results[0]["text"])


async def run_config(
    tmp: Path,
    embedder: CachingEmbedder,
    facts: Sequence[Fact],
    negatives: Sequence[str],
    mode: SearchMode,
    *,
    legacy: bool,
) -> Score:
    """Drive every session on a fresh store and score the searches."""
    started = time.perf_counter()
    score = Score()
    path = tmp / f"{mode}{'-legacy' if legacy else ''}.db"
    store = await SQLiteStore.open(path, embedder=embedder)
    proxy = ModeSearch(store, mode, legacy=legacy)
    builtins = BuiltinTools(replace={"search": SearchTool(cast(MemoryStore, proxy))})
    told = [f.text for f in facts]

    def session() -> Agent:
        return Agent("me", TestModel([]), memory=store, builtins=builtins, max_steps=4)

    try:
        half = len(facts) // 2
        for part in (facts[:half], facts[half:]):
            agent = session()
            for i, fact in enumerate(part):
                message, agent.model = telling(fact)
                await agent.run(message)
                if i % 3 == 2:
                    said, reply = CHATTER[i % len(CHATTER)]
                    agent.model = TestModel([reply])
                    await agent.run(said)
        for round_ in range(2):
            agent = session()
            queue: list[tuple[str, Fact | None]] = [(f.question, f) for f in facts]
            for j, negative in enumerate(negatives):
                queue.insert(min(len(queue), 3 * j + 1), (negative, None))
            for question, fact in queue:
                agent.model = TestModel(
                    [call("search", {"query": question}), "Here is what I found."]
                )
                run = await agent.run(question)
                searched = [r for c, r in run.tool_calls if c.name == "search"]
                output = searched[0].structured() if searched and searched[0].ok else None
                first = first_text(output) if output is not None else None
                if legacy:  # as before: the first hit, whatever its score
                    first = proxy.last[0].text if proxy.last else None
                if fact is None:
                    score.negatives += 1
                    score.nothing += first is None
                    score.nothing_by_round[round_] += first is None
                    continue
                hit = (
                    first is not None
                    and fact.text in first
                    and not any(other in first for other in told if other != fact.text)
                )
                score.asked += 1
                score.first += hit
                score.by_round[round_][0] += hit
                score.by_round[round_][1] += 1
                tally = score.by_how.setdefault(fact.how, [0, 0])
                tally[0] += hit
                tally[1] += 1
    finally:
        await store.close()
    score.seconds = time.perf_counter() - started
    return score


async def main(args: argparse.Namespace) -> None:
    facts, negatives = load_facts(args.people)
    negatives = negatives[: args.negatives]
    embedder = CachingEmbedder()
    configs: list[tuple[str, SearchMode, bool]] = [
        ("before: turn and tool traffic found, no floor (baseline)", "hybrid", True),
        ("hybrid (default)", "hybrid", False),
        ("BM25 only", "bm25", False),
        ("vector only", "vector", False),
    ]
    print(
        f"{len(facts)} facts told over 2 sessions ({len(facts) // 3} or so each appended to "
        f"human, inserted with recall, said), asked in 2 later sessions with "
        f"{len(negatives)} negatives each"
    )
    rows: list[tuple[str, Score]] = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, mode, legacy in configs:
            rows.append(
                (name, await run_config(Path(tmp), embedder, facts, negatives, mode, legacy=legacy))
            )
    base = rows[0][1].first / max(1, rows[0][1].asked)
    print(
        "| search | first hit is the fact | × baseline | human / recall / said "
        "| 1st / 2nd asking | negatives answered 'nothing matches' (1st / 2nd) | seconds |"
    )
    print("|---|---|---|---|---|---|---|")
    for name, s in rows:
        rate = s.first / max(1, s.asked)
        how = " / ".join(
            f"{s.by_how[k][0]}/{s.by_how[k][1]}"
            for k in ("append", "insert", "said")
            if k in s.by_how
        )
        ratio = f"×{rate / base:.2f}" if base else "n/a (baseline 0)"
        rounds = " / ".join(f"{a}/{b}" for a, b in s.by_round)
        quiet = " / ".join(str(n) for n in s.nothing_by_round)
        print(
            f"| {name} | {s.first}/{s.asked} ({rate:.3f}) | {ratio} | {how} | {rounds} "
            f"| {s.nothing}/{s.negatives} ({quiet}) | {s.seconds:.0f} |"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--people", type=int, default=4, help="people whose facts are told")
    parser.add_argument("--negatives", type=int, default=24, help="negatives per asking session")
    anyio.run(main, parser.parse_args())
