"""Running a turn's tool calls through a registry, concurrently and in order."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Iterable
from functools import partial

import anyio

from satchel._errors import SatchelUsageError
from satchel.providers._call import ToolCall
from satchel.registry import ToolRegistry
from satchel.tools import ToolContext, ToolResult

__all__ = ["run_tool_calls", "run_tool_calls_sync"]


async def run_tool_calls(
    registry: ToolRegistry,
    calls: Iterable[ToolCall],
    ctx: ToolContext | None = None,
    *,
    concurrency: int | None = None,
) -> list[tuple[ToolCall, ToolResult]]:
    """Run every call through ``registry``, concurrently, and pair each with its result.

    Never raises for a model's or a tool's error: an unknown tool, bad arguments (kept as
    raw text by the parsers) or a failing tool each come back as that call's error
    result.

    Args:
        registry: Where the tools live.
        calls: The calls, as the ``parse_*`` functions return them.
        ctx: The context for every call (defaults to the registry's); each call gets a
            copy whose ``call_id`` is the call's id.
        concurrency: At most this many calls run at once; ``None`` runs all at once.

    Returns:
        ``(call, result)`` pairs in the order of ``calls``, whatever order they finished
        in: ready for :func:`openai_tool_messages` and its siblings.

    Raises:
        SatchelUsageError: ``concurrency`` is less than 1.

    Example:
        >>> calls = parse_anthropic_tool_uses(response)
        >>> results = await run_tool_calls(registry, calls, concurrency=4)
        >>> messages.append(anthropic_tool_results(results))
    """
    if concurrency is not None and concurrency < 1:
        raise SatchelUsageError(f"concurrency must be at least 1, got {concurrency}.")
    todo = list(calls)
    base = ctx or registry.context
    results: list[ToolResult | None] = [None] * len(todo)
    limiter = anyio.CapacityLimiter(concurrency) if concurrency is not None else None

    async def run_one(index: int, call: ToolCall) -> None:
        call_ctx = dataclasses.replace(base, call_id=call.id) if call.id is not None else base
        if limiter is None:
            results[index] = await registry.call(call.name, call.arguments, call_ctx)
            return
        async with limiter:
            results[index] = await registry.call(call.name, call.arguments, call_ctx)

    if len(todo) == 1:
        await run_one(0, todo[0])
    else:
        async with anyio.create_task_group() as group:
            for index, call in enumerate(todo):
                group.start_soon(run_one, index, call)
    paired: list[tuple[ToolCall, ToolResult]] = []
    for call, result in zip(todo, results, strict=True):
        assert result is not None  # the task group waited for every call
        paired.append((call, result))
    return paired


def run_tool_calls_sync(
    registry: ToolRegistry,
    calls: Iterable[ToolCall],
    ctx: ToolContext | None = None,
    *,
    concurrency: int | None = None,
) -> list[tuple[ToolCall, ToolResult]]:
    """:func:`run_tool_calls` from synchronous code.

    Raises:
        SatchelUsageError: called from inside a running event loop (``await
            run_tool_calls(...)`` there instead), or ``concurrency`` is less than 1.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        run = partial(run_tool_calls, registry, list(calls), ctx, concurrency=concurrency)
        return anyio.run(run)
    raise SatchelUsageError(
        "run_tool_calls_sync() cannot run inside a running event loop; use "
        "`await run_tool_calls(...)`."
    )
