"""Runtime overhead of satchel's Agent per step, against pydantic-ai's Agent driving
the same scripted model and the same tool in the same run; and the cost of building
one request's context from a store with 10,000 messages and 20 blocks.

A run: the scripted model calls ``add`` ``--calls`` times, one call per request, then
answers in text. A step is one model request plus its tool call, so a run has
``calls + 1`` steps. The figures are microseconds per step (median of ``--rounds``).

* satchel, no store: the loop, rule checks and tool dispatch only;
* satchel, SQLite store: plus persistence of every message and the rendered memory;
* pydantic-ai: its Agent with a FunctionModel, the baseline.

Run:
    uv run --group bench python bench/agent_overhead.py [--runs 200] [--calls 5]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio

from satchel import ToolRegistry, tool
from satchel.agent import Agent, FunctionModel, ModelRequest, ModelResponse, RunResult, call
from satchel.memory import BlockKind, SQLiteStore


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def satchel_model(calls: int) -> FunctionModel:
    def answer(request: ModelRequest) -> ModelResponse:
        turn_start = max(i for i, m in enumerate(request.messages) if m.role == "user")
        done = sum(1 for m in request.messages[turn_start:] if m.role == "tool")
        if done < calls:
            return ModelResponse(tool_calls=(call("add", {"a": done, "b": 1}, id=f"c{done}"),))
        return ModelResponse(text="done")

    return FunctionModel(answer)


async def time_satchel(runs: int, calls: int, store: SQLiteStore | None) -> float:
    agent = Agent("bench", satchel_model(calls), tools=ToolRegistry([add]), memory=store)
    await agent.run("warm up", conversation_id="warm")
    start = time.perf_counter()
    for index in range(runs):
        await agent.run("go", conversation_id=f"c{index}")
    return (time.perf_counter() - start) / (runs * (calls + 1)) * 1e6


async def time_pydantic_ai(runs: int, calls: int) -> float | None:
    try:
        from pydantic_ai import Agent as PAgent
        from pydantic_ai.messages import (
            ModelMessage,
            TextPart,
            ToolCallPart,
            ToolReturnPart,
        )
        from pydantic_ai.messages import (
            ModelRequest as PRequest,
        )
        from pydantic_ai.messages import (
            ModelResponse as PResponse,
        )
        from pydantic_ai.models.function import AgentInfo
        from pydantic_ai.models.function import FunctionModel as PFunctionModel
    except ImportError:
        return None

    def answer(messages: list[ModelMessage], info: AgentInfo) -> PResponse:
        done = sum(
            1
            for m in messages
            if isinstance(m, PRequest)
            for p in m.parts
            if isinstance(p, ToolReturnPart)
        )
        if done < calls:
            return PResponse(parts=[ToolCallPart("add", {"a": done, "b": 1}, f"c{done}")])
        return PResponse(parts=[TextPart("done")])

    agent: Any = PAgent(PFunctionModel(answer))

    @agent.tool_plain
    def add(a: int, b: int) -> int:  # pyright: ignore[reportUnusedFunction]
        """Add two integers."""
        return a + b

    await agent.run("warm up")
    start = time.perf_counter()
    for _ in range(runs):
        await agent.run("go")
    return (time.perf_counter() - start) / (runs * (calls + 1)) * 1e6


async def context_cost(folder: Path, samples: int) -> tuple[float, float]:
    async with SQLiteStore(folder / "big.db", embedder=None) as store:
        await store.ensure_agent("ctx")
        for index in range(18):
            await store.create_block(
                "ctx", f"note{index}", "x " * 200, kind=BlockKind.CORE, description="a note"
            )
        for index in range(10_000):
            await store.add_message(
                "ctx", "user" if index % 2 == 0 else "assistant", f"message {index} " * 12
            )
        agent = Agent("ctx", satchel_model(0), memory=store)
        timings: list[float] = []
        for _ in range(samples):
            start = time.perf_counter()
            history = await agent._log.load("default")  # pyright: ignore[reportPrivateUsage]
            run = RunResult(agent="ctx", conversation_id="default")
            await agent._request(run, history, agent.tools.names())  # pyright: ignore[reportPrivateUsage]
            timings.append((time.perf_counter() - start) * 1000)
    timings.sort()
    return statistics.median(timings), timings[int(len(timings) * 0.95) - 1]


async def main(args: argparse.Namespace) -> None:
    rows: dict[str, list[float]] = {"satchel": [], "satchel + SQLite": [], "pydantic-ai": []}
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        for round_ in range(args.rounds):
            rows["satchel"].append(await time_satchel(args.runs, args.calls, None))
            async with SQLiteStore(folder / f"r{round_}.db", embedder=None) as store:
                rows["satchel + SQLite"].append(await time_satchel(args.runs, args.calls, store))
            baseline = await time_pydantic_ai(args.runs, args.calls)
            if baseline is not None:
                rows["pydantic-ai"].append(baseline)
        base = statistics.median(rows["pydantic-ai"]) if rows["pydantic-ai"] else None
        print(f"per step, {args.runs} runs x {args.calls + 1} steps, median of {args.rounds}:")
        for name, values in rows.items():
            if not values:
                print(f"  {name:18} (not installed: uv run --group bench ...)")
                continue
            median = statistics.median(values)
            ratio = f"  x{median / base:.2f} of pydantic-ai" if base else ""
            print(f"  {name:18} {median:8.1f} us/step{ratio}")
        p50, p95 = await context_cost(folder, args.samples)
        print(f"context build, 10,000 messages + 20 blocks: p50 {p50:.2f} ms, p95 {p95:.2f} ms")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--calls", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--samples", type=int, default=200)
    anyio.run(main, parser.parse_args())
