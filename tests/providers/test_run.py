from __future__ import annotations

import anyio
import pytest

from satchel import SatchelUsageError, ToolContext, ToolRegistry, tool
from satchel.providers import ToolCall, run_tool_calls, run_tool_calls_sync

pytestmark = pytest.mark.anyio


def _handshake_registry() -> ToolRegistry:
    """`wait` finishes only once `release` has run: sequential execution would hang."""
    released = anyio.Event()

    @tool
    async def wait() -> str:
        """Wait for `release`."""
        await released.wait()
        return "waited"

    @tool
    async def release() -> str:
        """Let `wait` finish."""
        released.set()
        return "released"

    return ToolRegistry([wait, release])


async def test_calls_run_concurrently_and_results_keep_the_call_order() -> None:
    registry = _handshake_registry()
    calls = [ToolCall("1", "wait", {}), ToolCall("2", "release", {})]

    with anyio.fail_after(5):
        results = await run_tool_calls(registry, calls)

    assert [(c.id, r.output) for c, r in results] == [("1", "waited"), ("2", "released")]


async def test_concurrency_bounds_how_many_calls_run_at_once() -> None:
    running = 0
    peak = 0

    @tool
    async def step() -> int:
        """Count how many steps overlap."""
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        for _ in range(5):
            await anyio.lowlevel.checkpoint()
        running -= 1
        return peak

    registry = ToolRegistry([step])
    calls = [ToolCall(str(i), "step", {}) for i in range(6)]

    with anyio.fail_after(5):
        await run_tool_calls(registry, calls, concurrency=2)
    assert peak == 2

    peak = 0
    with anyio.fail_after(5):
        await run_tool_calls(registry, calls)
    assert peak == 6


async def test_each_call_sees_its_own_call_id_in_the_context() -> None:
    @tool
    def whoami(ctx: ToolContext) -> str:
        """Say which call and agent this is."""
        return f"{ctx.agent}/{ctx.call_id}"

    registry = ToolRegistry([whoami])
    calls = [ToolCall("call_a", "whoami", {}), ToolCall(None, "whoami", {})]

    with anyio.fail_after(5):
        results = await run_tool_calls(registry, calls, ToolContext(agent="alice"))

    assert [r.output for _, r in results] == ["alice/call_a", "alice/None"]


async def test_errors_come_back_as_results_not_exceptions(registry: ToolRegistry) -> None:
    calls = [
        ToolCall("1", "nope", {}),
        ToolCall("2", "add", "{not json"),
        ToolCall("3", "add", {"a": 1, "b": 2}),
    ]

    with anyio.fail_after(5):
        results = await run_tool_calls(registry, calls)

    kinds = [r.error.kind if r.error else None for _, r in results]
    assert kinds == ["unknown_tool", "invalid_arguments", None]


async def test_no_calls_give_no_results(registry: ToolRegistry) -> None:
    assert await run_tool_calls(registry, []) == []


async def test_concurrency_below_one_is_a_usage_error(registry: ToolRegistry) -> None:
    with pytest.raises(SatchelUsageError, match="at least 1"):
        await run_tool_calls(registry, [], concurrency=0)


async def test_sync_variant_refuses_to_run_inside_an_event_loop(registry: ToolRegistry) -> None:
    with pytest.raises(SatchelUsageError, match="running event loop"):
        run_tool_calls_sync(registry, [ToolCall("1", "add", {"a": 1, "b": 2})])


def test_sync_variant_runs_the_calls_from_plain_code(registry: ToolRegistry) -> None:
    [(call, result)] = run_tool_calls_sync(registry, [ToolCall("1", "add", {"a": 1, "b": 2})])

    assert (call.id, result.output) == ("1", 3)
