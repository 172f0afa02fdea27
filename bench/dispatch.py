"""Dispatch overhead: one trivial typed tool call through satchel and its peers.

The floor is the least any typed dispatcher must do: ``Model.model_validate(args)``,
the plain function call, and ``model_dump()`` of the output. Every contender runs the
same two-int tool; rounds are interleaved so machine noise hits all alike, and each
figure is the median over rounds of the mean per-call time.

Run:  uv run --group bench python bench/dispatch.py [--calls 20000] [--rounds 7]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from collections.abc import Awaitable, Callable

from pydantic import BaseModel

from satchel import Tool, ToolContext, ToolRegistry

ARGS = {"a": 20, "b": 22}


class AddIn(BaseModel):
    a: int
    b: int


class AddOut(BaseModel):
    total: int


def add_fn(params: AddIn) -> AddOut:
    return AddOut(total=params.a + params.b)


class Add(Tool[AddIn, AddOut]):
    name = "add"
    description = "Add two integers."

    async def execute(self, params: AddIn, ctx: ToolContext) -> AddOut:
        return AddOut(total=params.a + params.b)


async def add_async(a: int, b: int) -> AddOut:
    """Add two integers."""
    return AddOut(total=a + b)


def add_sync(a: int, b: int) -> AddOut:
    """Add two integers."""
    return AddOut(total=a + b)


Runner = Callable[[int], Awaitable[None]]


def floor_runner() -> Runner:
    async def run(n: int) -> None:
        for _ in range(n):
            add_fn(AddIn.model_validate(ARGS)).model_dump()

    return run


def satchel_runner() -> Runner:
    registry = ToolRegistry([Add()])
    call = registry.call

    async def run(n: int) -> None:
        for _ in range(n):
            result = await call("add", ARGS)
            assert result.output.total == 42

    return run


def satchel_json_runner() -> Runner:
    registry = ToolRegistry([Add()])
    call = registry.call

    async def run(n: int) -> None:
        for _ in range(n):
            (await call("add", ARGS)).to_json()

    return run


async def pydantic_ai_runner() -> Runner | str:
    try:
        from pydantic_ai import RunContext
        from pydantic_ai.models.test import TestModel
        from pydantic_ai.toolsets import FunctionToolset
        from pydantic_ai.usage import RunUsage
    except ImportError as exc:
        return f"not installed ({exc.name})"
    toolset: FunctionToolset[None] = FunctionToolset()
    toolset.add_function(add_async, takes_ctx=False)
    ctx = RunContext(deps=None, model=TestModel(), usage=RunUsage())
    tools = await toolset.get_tools(ctx)
    tool = tools["add_async"]

    async def run(n: int) -> None:
        # What pydantic-ai's tool manager does per call: validate, then call.
        for _ in range(n):
            args = tool.args_validator.validate_python(ARGS)
            out = await toolset.call_tool("add_async", args, ctx, tool)
            assert out.total == 42

    return run


async def fastmcp_runner() -> Runner | str:
    try:
        from fastmcp import FastMCP
    except ImportError as exc:
        return f"not installed ({exc.name})"
    server = FastMCP("bench")
    server.tool(add_async)

    async def run(n: int) -> None:
        for _ in range(n):
            await server.call_tool("add_async", ARGS)

    return run


def langchain_runner() -> Runner | str:
    try:
        from langchain_core.tools import StructuredTool
    except ImportError as exc:
        return f"not installed ({exc.name})"
    lc_tool = StructuredTool.from_function(add_sync, name="add", description="Add two integers.")

    async def run(n: int) -> None:
        for _ in range(n):
            lc_tool.invoke(ARGS)

    return run


async def measure(runners: dict[str, Runner], calls: int, rounds: int) -> dict[str, float]:
    samples: dict[str, list[float]] = {name: [] for name in runners}
    for runner in runners.values():  # warm-up
        await runner(max(1, calls // 10))
    for _ in range(rounds):
        for name, runner in runners.items():
            start = time.perf_counter()
            await runner(calls)
            samples[name].append((time.perf_counter() - start) / calls * 1e6)
    return {name: statistics.median(vals) for name, vals in samples.items()}


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=7)
    opts = parser.parse_args()
    runners: dict[str, Runner] = {
        "floor (validate + call + dump)": floor_runner(),
        "satchel registry.call": satchel_runner(),
        "satchel registry.call + to_json": satchel_json_runner(),
    }
    missing: dict[str, str] = {}
    peers: dict[str, Runner | str] = {
        "pydantic-ai FunctionToolset": await pydantic_ai_runner(),
        "FastMCP 4.1.2 call_tool": await fastmcp_runner(),
        "LangChain StructuredTool.invoke": langchain_runner(),
    }
    for name, runner in peers.items():
        if isinstance(runner, str):
            missing[name] = runner
        else:
            runners[name] = runner
    # Peers are much slower: fewer calls keep the run short without changing a mean.
    results = await measure(runners, opts.calls, opts.rounds)
    floor = results["floor (validate + call + dump)"]
    print(f"{'contender':36} {'µs/call':>9} {'× floor':>8}")
    for name, us in results.items():
        print(f"{name:36} {us:9.2f} {us / floor:8.2f}")
    for name, why in missing.items():
        print(f"{name:36} {why}")
    sat = results["satchel registry.call"]
    for name, us in results.items():
        if name.startswith(("pydantic-ai", "FastMCP", "LangChain")):
            print(f"satchel is {us / sat:.1f}× faster than {name}")


if __name__ == "__main__":
    asyncio.run(main())
