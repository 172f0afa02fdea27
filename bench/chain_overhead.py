"""Dispatch overhead of a chain, against calling the same steps directly, in the same run.

Three trivial typed tools (``fetch`` -> ``classify`` -> ``escalate``, the support
triage of docs/tools.md), chained with one renamed field (``text <- body``) and a
JMESPath condition on the last step. Contenders, each producing the same output:

* direct: ``await registry.call`` of each step in turn, arguments built by hand, and
  the condition written as Python (the floor: what a developer would write);
* direct + JMESPath: the same, with the condition evaluated by the same JMESPath
  expression the chain uses (so the ratio isolates the chain's own work);
* chain: ``await registry.call("triage", ...)`` once;
* chain, fan-out: a chain that runs ``double`` over a 10-item list (at most 8 at
  once) then ``total``, against 10 direct calls plus one;
* the same with 1 ms of awaited I/O per item (``anyio.sleep``), where running the
  items at once pays (these rounds make ``calls // 50`` calls).

Figures are microseconds per chain call (median of ``--rounds`` interleaved rounds of
``--calls`` calls) and the ratio to the direct floor.

Run:
    uv run python bench/chain_overhead.py [--calls 5000] [--rounds 7]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import jmespath
from pydantic import BaseModel

from satchel import ToolRegistry, chain, step, tool


class Ticket(BaseModel):
    body: str
    priority: int


class Label(BaseModel):
    label: str


class Escalation(BaseModel):
    escalated: str


@tool
async def fetch(ticket_id: int) -> Ticket:
    """Fetch a ticket."""
    return Ticket(body="the server is down", priority=ticket_id)


@tool
async def classify(text: str) -> Label:
    """Classify text."""
    return Label(label="urgent" if "down" in text else "normal")


@tool
async def escalate(label: str, ticket_id: int) -> Escalation:
    """Escalate a ticket."""
    return Escalation(escalated=f"ticket {ticket_id} ({label})")


@tool
async def double(n: int) -> int:
    """Double a number."""
    return n * 2


@tool
async def wait_double(n: int) -> int:
    """Double a number after 1 ms of (simulated) I/O."""
    await anyio.sleep(0.001)
    return n * 2


@tool
async def total(result: list[int]) -> int:
    """Add numbers."""
    return sum(result)


def build() -> ToolRegistry:
    registry = ToolRegistry([fetch, classify, escalate, double, wait_double, total])
    registry.register(
        chain(
            "triage",
            "fetch",
            step("classify", map={"text": "body"}),
            step("escalate", when="label == 'urgent'"),
            description="Triage a ticket.",
        )
    )
    registry.register(
        chain("sum_doubles", step("double", over="n"), "total", description="Sum doubles.")
    )
    registry.register(
        chain("sum_waits", step("wait_double", over="n"), "total", description="Sum, waiting.")
    )
    return registry


URGENT = jmespath.compile("label == 'urgent'")


async def direct(registry: ToolRegistry) -> Any:
    ticket = (await registry.call("fetch", {"ticket_id": 3})).structured()
    assert ticket is not None
    label = (await registry.call("classify", {"text": ticket["body"]})).structured()
    assert label is not None
    if label["label"] == "urgent":
        return (await registry.call("escalate", {**label, "ticket_id": 3})).structured()
    return label


async def direct_jmespath(registry: ToolRegistry) -> Any:
    ticket = (await registry.call("fetch", {"ticket_id": 3})).structured()
    assert ticket is not None
    label = (await registry.call("classify", {"text": ticket["body"]})).structured()
    assert label is not None
    if URGENT.search({**ticket, **label, "fetch": ticket, "classify": label}):
        return (await registry.call("escalate", {**label, "ticket_id": 3})).structured()
    return label


async def chained(registry: ToolRegistry) -> Any:
    return (await registry.call("triage", {"ticket_id": 3})).output


NUMBERS = list(range(10))


async def direct_fan(registry: ToolRegistry) -> Any:
    doubled = [(await registry.call("double", {"n": n})).output for n in NUMBERS]
    return (await registry.call("total", {"result": doubled})).output


async def chained_fan(registry: ToolRegistry) -> Any:
    return (await registry.call("sum_doubles", {"n": NUMBERS})).output


async def direct_waits(registry: ToolRegistry) -> Any:
    doubled = [(await registry.call("wait_double", {"n": n})).output for n in NUMBERS]
    return (await registry.call("total", {"result": doubled})).output


async def chained_waits(registry: ToolRegistry) -> Any:
    return (await registry.call("sum_waits", {"n": NUMBERS})).output


Runner = Callable[[ToolRegistry], Awaitable[Any]]


async def per_call(run: Runner, registry: ToolRegistry, calls: int) -> float:
    start = time.perf_counter()
    for _ in range(calls):
        await run(registry)
    return (time.perf_counter() - start) / calls * 1e6


async def main(calls: int, rounds: int) -> None:
    registry = build()
    assert await direct(registry) == await chained(registry)
    assert {"result": await direct_fan(registry)} == await chained_fan(registry)
    contenders: dict[str, Runner] = {
        "direct (3 calls, Python condition)": direct,
        "direct (3 calls, JMESPath condition)": direct_jmespath,
        "chain `triage`": chained,
        "direct fan-out (10 + 1 calls)": direct_fan,
        "chain `sum_doubles` (fan-out of 10, ≤ 8 at once)": chained_fan,
        "direct, 1 ms I/O per item (10 + 1 calls, one by one)": direct_waits,
        "chain `sum_waits` (fan-out of 10 with 1 ms I/O, ≤ 8 at once)": chained_waits,
    }
    times: dict[str, list[float]] = {name: [] for name in contenders}
    for _ in range(rounds):
        for name, run in contenders.items():
            n = max(1, calls // 50) if "I/O" in name else calls
            times[name].append(await per_call(run, registry, n))
    medians = {name: statistics.median(values) for name, values in times.items()}
    floor = medians["direct (3 calls, Python condition)"]
    fan_floor = medians["direct fan-out (10 + 1 calls)"]
    io_floor = medians["direct, 1 ms I/O per item (10 + 1 calls, one by one)"]
    print(f"{calls} calls x {rounds} rounds, median µs per chain call")
    print("| contender | µs/call | × direct |")
    print("|---|---|---|")
    for name, value in medians.items():
        base = io_floor if "I/O" in name else fan_floor if "fan" in name else floor
        print(f"| {name} | {value:.1f} | {value / base:.2f} |")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=7)
    options = parser.parse_args()
    anyio.run(main, options.calls, options.rounds)
