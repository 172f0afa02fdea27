"""Running a checked chain: step by step (or wave by wave), moving fields between
steps, evaluating conditions, and stopping at the first failure with its step named."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

import anyio

from satchel._errors import InvalidInputError
from satchel.compose._conditions import Expr
from satchel.compose._plan import INPUT, Plan, PlannedStep, Source
from satchel.tools import BaseTool, ErrorInfo, ToolContext, ToolResult, result_from_exception

__all__ = ["PlanRunner"]

_MISSING: Any = object()


def _fields(result: ToolResult) -> dict[str, Any]:
    structured = result.structured()
    if structured is not None:
        return structured
    out = result.output
    return cast(dict[str, Any], out) if isinstance(out, dict) else {"result": out}


async def _call(tool: BaseTool, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    try:
        return await tool.call(args, ctx)
    except Exception as exc:  # a tool that broke its own contract: the boundary
        return result_from_exception(tool.spec.name, exc)


class _Run:
    """One call's state: the arguments, and each finished step's output fields."""

    __slots__ = ("args", "order", "outputs", "skipped")

    def __init__(self, args: dict[str, Any]) -> None:
        self.args = args
        self.outputs: dict[str, dict[str, Any]] = {}
        self.order: list[str] = []
        self.skipped: list[str] = []

    def done(self, sid: str, fields: dict[str, Any]) -> None:
        self.outputs[sid] = fields
        self.order.append(sid)

    def value(self, source: Source) -> Any:
        if source.step is None:
            return self.args.get(source.field, _MISSING)
        out = self.outputs.get(source.step)
        return _MISSING if out is None else out.get(source.field, _MISSING)

    def args_for(self, ps: PlannedStep) -> dict[str, Any]:
        args: dict[str, Any] = {}
        for param, sources in ps.sources.items():
            for source in sources:
                value = self.value(source)
                if value is not _MISSING:
                    args[param] = value
                    break
        return args

    def data(self) -> dict[str, Any]:
        """What a condition sees: every field given so far (the latest wins), each
        finished step's output under its id, and the arguments as ``input``."""
        data: dict[str, Any] = {}
        for sid in self.order:
            data.update(self.outputs[sid])
        data.update(self.outputs)
        data[INPUT] = self.args
        return data


class PlanRunner:
    """Runs one chain's :class:`~satchel.compose._plan.Plan` (a chain holds one)."""

    def __init__(self, name: str, plan: Plan) -> None:
        self.name = name
        self.plan = plan

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Run every step on ``args`` (checked by the chain already)."""
        plan = self.plan
        run = _Run(args)
        for wave in plan.waves:
            if len(wave) == 1:
                failure = await self._step(wave[0], run, ctx)
            else:
                failure = await self._together(wave, run, ctx)
            if failure is not None:
                return failure
        return ToolResult(self.name, self._output(plan, run))

    async def _together(
        self, wave: Sequence[PlannedStep], run: _Run, ctx: ToolContext
    ) -> ToolResult | None:
        """Run independent steps at once; the failure of the earliest listed wins."""
        failures: dict[int, ToolResult] = {}

        async def one(ps: PlannedStep) -> None:
            bad = await self._step(ps, run, ctx)
            if bad is not None:
                failures[ps.index] = bad

        async with anyio.create_task_group() as group:
            for ps in wave:
                group.start_soon(one, ps)
        return failures[min(failures)] if failures else None

    async def _step(self, ps: PlannedStep, run: _Run, ctx: ToolContext) -> ToolResult | None:
        """Run one step; a result only when the chain must stop."""
        if ps.condition is not None:
            try:
                data = run.data()
                go = (
                    ps.condition.evaluate(data)
                    if isinstance(ps.condition, Expr)
                    else bool(ps.condition(data))
                )
            except InvalidInputError as exc:
                return self._failed(ps, run, ErrorInfo("failed", exc.message, exc.details))
            except Exception as exc:  # a predicate's own bug: the boundary
                error = result_from_exception(self.name, exc).error
                assert error is not None
                return self._failed(ps, run, error)
            if not go:
                run.skipped.append(ps.id)
                return None
        args = run.args_for(ps)
        result = await (self._fan_out(ps, args, ctx) if ps.over else _call(ps.tool, args, ctx))
        if result.error is None:
            run.done(ps.id, _fields(result))
            return None
        if ps.on_error == "skip":
            run.skipped.append(ps.id)
            return None
        if ps.fallback is not None:
            params = cast(dict[str, Any], ps.fallback.spec.input_schema.get("properties") or {})
            backup = await _call(ps.fallback, {k: v for k, v in args.items() if k in params}, ctx)
            if backup.error is None:
                run.done(ps.id, _fields(backup))
                return None
            return self._failed(ps, run, backup.error, via=ps.fallback.spec.name)
        return self._failed(ps, run, result.error)

    async def _fan_out(self, ps: PlannedStep, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        over = cast(str, ps.over)
        items = args.get(over)
        name = ps.tool.spec.name
        if not isinstance(items, list):
            return ToolResult(
                name,
                error=ErrorInfo(
                    "invalid_arguments",
                    f"`{over}` must be a list: the step runs once per item.",
                    {"errors": [{"field": over, "problem": "is not a list"}]},
                ),
            )
        values = cast(list[Any], items)
        if len(values) > ps.max_items:
            return ToolResult(
                name,
                error=ErrorInfo(
                    "retry",
                    f"`{over}` has {len(values)} items; this step takes at most "
                    f"{ps.max_items} at once. Split the list and call again.",
                    {"field": over, "items": len(values), "max_items": ps.max_items},
                ),
            )
        results: list[ToolResult | None] = [None] * len(values)
        queue = iter(range(len(values)))

        async def worker() -> None:  # `limit` workers take the items in turn
            for i in queue:
                results[i] = await _call(ps.tool, {**args, over: values[i]}, ctx)

        async with anyio.create_task_group() as group:
            for _ in range(min(ps.limit, len(values))):
                group.start_soon(worker)
        done = cast(list[ToolResult], results)
        for i, result in enumerate(done):
            if result.error is not None:
                details = {**result.error.details, "item": i}
                message = f"(item {i} of `{over}`) {result.error.message}"
                return ToolResult(name, error=ErrorInfo(result.error.kind, message, details))
        rows = [_fields(r) for r in done]
        keys = list(dict.fromkeys([*ps.outputs, *(k for row in rows for k in row)]))
        return ToolResult(name, {k: [row.get(k) for row in rows] for k in keys})

    def _failed(
        self, ps: PlannedStep, run: _Run, error: ErrorInfo, *, via: str | None = None
    ) -> ToolResult:
        tool = ps.tool.spec.name
        what = f"its fallback {via!r}" if via else f"tool {tool!r}"
        details: dict[str, Any] = {
            **error.details,
            "step": ps.id,
            "step_tool": via or tool,
            "step_number": ps.index + 1,
            "completed": list(run.order),
        }
        return ToolResult(
            self.name,
            error=ErrorInfo(
                error.kind,
                f"Step {ps.index + 1} ({ps.id!r}, {what}) failed, so the chain stopped: "
                f"{error.message}",
                details,
            ),
        )

    def _output(self, plan: Plan, run: _Run) -> Any:
        if plan.output is not None:
            found: dict[str, Any] = {}
            for sid in run.order:
                out = run.outputs[sid]
                found.update({k: out[k] for k in plan.output if k in out})
            return found
        last = max(plan.steps, key=lambda s: s.index)
        out = run.outputs.get(last.id)
        if out is None:
            return run.outputs[run.order[-1]] if run.order else {}
        if last.tool.spec.output_schema is None and last.over is None and list(out) == ["result"]:
            return out["result"]
        return out
