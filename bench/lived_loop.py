"""A looping model on the real Agent (issue 27, "a turn stays bounded"): per turn, the
requests, the bytes of each request as the OpenAI provider would send it, and the
seconds, with the bounds on (the defaults: results cut to
``ContextBudget.tool_result_tokens``, this turn's messages kept, ``repeat_limit``) and
off (``tool_result_tokens=None, repeat_limit=None``, the baseline), in the same run.

Two scripted models, each on a fresh SQLite store seeded with a few garden notes (BM25
search, no embedder), for ``--turns`` turns of one conversation:

* ``varying``: calls ``search`` over the conversations every step, the query a little
  different each time (never twice the same), as the model in the issue did. Each
  result holds stored messages, among them the earlier results, so without the cut the
  results snowball.
* ``repeating``: calls ``search`` with the very same arguments every step.

Each request is serialised with :class:`~satchel.agent.OpenAIModel`'s own body builder
(no network: the model answers from the script), and the agent counts tokens as for an
OpenAI model (``family = "openai"``). A request over ``--window`` tokens (gpt-4o-mini's
128,000 by default) fails as the API would, with ``context_length_exceeded``; the turn
then ends with that error, as it would in ``satchel run``. The seconds are satchel's
side only (search, counting, storing); a real model's time per request grows with the
request's size on top of that.

Run:
    uv run python bench/lived_loop.py [--turns 2] [--steps 20] [--window 128000]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import anyio

from satchel import ModelError
from satchel.agent import Agent, ContextBudget, ModelRequest, ModelResponse, call, counter_for
from satchel.agent._model_clients import OpenAIModel
from satchel.memory import SQLiteStore

QUESTION = "What did I plant in the garden, and where?"
NOTES = [
    "I planted tomatoes along the south fence.",
    "The basil went into the pots by the kitchen door.",
    "Garden plan: beans on the trellis, lettuce in the shade bed.",
    "The tomatoes need watering every other day in August.",
]
WORDS = ["garden", "planted", "tomatoes", "basil", "fence", "pots", "beds", "seeds"]


class LoopingModel:
    """Calls ``search`` every step; records the size of each request on the wire."""

    family = "openai"  # the agent counts tokens with o200k_base, as for gpt-4o
    name = "looping"

    def __init__(self, varying: bool, window: int) -> None:
        self.varying = varying
        self.window = window
        self._count = counter_for("openai")
        self.steps = 0
        self.sizes: list[int] = []
        self.asked: list[bool] = []  # the person's question is in the request
        self._wire = OpenAIModel("gpt-4o-mini", api_key="unused", base_url="http://127.0.0.1:9")

    async def request(self, request: ModelRequest) -> ModelResponse:
        body = self._wire._body(request)  # pyright: ignore[reportPrivateUsage]
        text = json.dumps(body, ensure_ascii=False)
        self.sizes.append(len(text.encode()))
        self.asked.append(any(m.content == QUESTION for m in request.messages))
        if self.sizes[-1] > self.window and (tokens := self._count(text)) > self.window:
            raise ModelError(
                f"context_length_exceeded: {tokens} tokens, over {self.window}",
                reason="context_length",
            )
        self.steps += 1
        n = self.steps
        if self.varying:  # a slight variation each time: two words turn, a number counts
            query = f"{WORDS[n % len(WORDS)]} {WORDS[(n * 3 + 1) % len(WORDS)]} notes {n}"
        else:
            query = "garden tomatoes basil"
        arguments = {"query": query, "domain": "conversations"}
        return ModelResponse(tool_calls=(call("search", arguments, id=f"call_{n}"),))


@dataclass
class Turn:
    sizes: list[int]  # bytes of each request, in order
    seconds: float
    stop: str
    question_kept: bool

    @property
    def per_request(self) -> float:
        return sum(self.sizes) / len(self.sizes)


async def turns(
    varying: bool, budget: ContextBudget, count: int, steps: int, window: int
) -> list[Turn]:
    done: list[Turn] = []
    with tempfile.TemporaryDirectory() as scratch:
        async with SQLiteStore(Path(scratch) / "m.db", embedder=None) as store:
            await store.ensure_agent("ada")
            for note in NOTES:
                await store.add_message("ada", "user", note, conversation_id="earlier")
            for _ in range(count):
                model = LoopingModel(varying, window)
                agent = Agent("ada", model, memory=store, budget=budget, max_steps=steps)
                start = time.perf_counter()
                try:
                    stop: str = (await agent.run(QUESTION)).stop
                except ModelError as exc:
                    stop = f"failed: {exc.reason}"
                seconds = time.perf_counter() - start
                done.append(Turn(model.sizes, seconds, stop, all(model.asked)))
    return done


def kib(size: float) -> str:
    return f"{size / 1024:,.1f}"


async def main(args: argparse.Namespace) -> None:
    bounded = ContextBudget()
    baseline = ContextBudget(tool_result_tokens=None, repeat_limit=None)
    print(
        f"{args.turns} turns of at most {args.steps} steps, window {args.window:,} tokens; "
        "request KiB as sent to OpenAI; bounds off is the baseline"
    )
    print(
        "| model | turn | bounds | stop | requests | question in all | largest KiB "
        "| KiB/request | ms/request | seconds | × largest | × KiB/request | × ms/request |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    series: list[str] = []
    for label, varying in (("varying", True), ("repeating", False)):
        off = await turns(varying, baseline, args.turns, args.steps, args.window)
        on = await turns(varying, bounded, args.turns, args.steps, args.window)
        for index, (a, b) in enumerate(zip(off, on, strict=True), start=1):
            for name, row in (("off", a), ("on", b)):
                ms = row.seconds / len(row.sizes) * 1000
                base_ms = a.seconds / len(a.sizes) * 1000
                print(
                    f"| {label} | {index} | {name} | {row.stop} | {len(row.sizes)} "
                    f"| {'yes' if row.question_kept else 'no'} | {kib(max(row.sizes))} "
                    f"| {kib(row.per_request)} | {ms:.1f} | {row.seconds:.2f} "
                    f"| ×{max(row.sizes) / max(a.sizes):.3f} "
                    f"| ×{row.per_request / a.per_request:.3f} | ×{ms / base_ms:.3f} |"
                )
        for name, row in (("off", off[0]), ("on", on[0])):
            sizes = " ".join(kib(size) for size in row.sizes)
            series.append(f"  {label}, turn 1, bounds {name}: {sizes}")
    print("\nKiB of each request, in order:")
    print("\n".join(series))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=2, help="turns per model")
    parser.add_argument("--steps", type=int, default=20, help="max_steps of every turn (both runs)")
    parser.add_argument("--window", type=int, default=128_000, help="the model's context, tokens")
    anyio.run(main, parser.parse_args())
