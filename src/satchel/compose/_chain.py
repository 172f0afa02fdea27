""":func:`chain`: a tool made of tools, run in order, the output of one feeding the next.

A chain is an ordinary :class:`~satchel.tools.BaseTool`, so every dialect, registry,
wrapper, the meta-tools and ``satchel serve`` handle it with no special path. It is
checked when it is registered (:mod:`satchel.compose._plan`); at call time it only
moves values. Its annotations are its steps': destructive if any step is, so an
approval gate around the chain holds the whole call, bound to the chain's own
arguments, and the steps inside then run without asking again.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Unpack, cast

import anyio
import jsonschema

from satchel import schema as _schema
from satchel._errors import InvalidInputError, SatchelUsageError
from satchel.compose._conditions import Expr
from satchel.compose._plan import INPUT, Plan, PlannedStep, Source, plan_chain
from satchel.compose._steps import Fallback, Step, StepTool, step
from satchel.tools import (
    BaseTool,
    ErrorInfo,
    ToolContext,
    ToolLookup,
    ToolMetadata,
    ToolOptions,
    ToolResult,
    ToolSpec,
    build_spec,
    check_name,
    result_from_exception,
)

__all__ = ["ChainTool", "chain"]

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


class ChainTool(BaseTool):
    """A tool made of other tools; build it with :func:`chain`.

    A chain that names its steps by name is checked when it is registered
    (:meth:`bind`); one given tool objects (or a ``registry``) is checked at once.
    """

    def __init__(
        self,
        name: str,
        steps: Sequence[Step],
        *,
        description: str,
        output: Sequence[str] | None = None,
        concurrent: bool = False,
        lookup: ToolLookup | None = None,
        options: ToolOptions | None = None,
    ) -> None:
        check_name(name)
        if not description.strip():
            raise SatchelUsageError(f"Chain {name!r} has no description.")
        self.name = name
        self.steps = tuple(steps)
        self.description = description.strip()
        self.output = tuple(output) if output is not None else None
        self.concurrent = concurrent
        self.options: ToolOptions = options or {}
        self._plan: Plan | None = None
        self._spec: ToolSpec | None = None
        if lookup is not None or not any(_names_a_tool(s) for s in self.steps):
            self._build(lookup)

    def _build(self, lookup: ToolLookup | None) -> None:
        plan = plan_chain(
            self.name, self.steps, lookup, output=self.output, concurrent=self.concurrent
        )
        meta = ToolMetadata.of(self.options)
        meta = meta.model_copy(
            update={
                "annotations": plan.annotations.merged(meta.annotations),
                "requires": tuple(sorted({*plan.requires, *meta.requires})),
            }
        )
        self._spec = build_spec(
            name=self.name,
            description=f"{self.description}\n\n{_outline(plan)}",
            input_schema=_schema.normalize(plan.input_schema),
            output_schema=_schema.normalize(plan.output_schema) if plan.output_schema else None,
            operations={},
            meta=meta,
            memory_gated=plan.memory_gated,
        )
        self._validator = jsonschema.Draft202012Validator(self._spec.input_schema)
        self._required = frozenset(plan.input_schema["required"])
        self._known = frozenset(plan.input_schema["properties"])
        self._plan = plan

    @property
    def plan(self) -> Plan:
        """The checked plan.

        Raises:
            SatchelUsageError: the chain names its steps and is not registered yet.
        """
        if self._plan is None:
            raise SatchelUsageError(
                f"Chain {self.name!r} names its steps; register it in the registry that "
                "holds them (registry.register(chain)), or pass registry= to chain()."
            )
        return self._plan

    @property
    def spec(self) -> ToolSpec:
        """The chain's definition: its input is what its steps need that no earlier
        step gives; its output the last step's (or the ``output`` fields)."""
        self.plan  # noqa: B018 - raises the clear error for an unbound chain
        assert self._spec is not None
        return self._spec

    def bind(self, registry: ToolLookup) -> BaseTool:
        """This chain with its steps looked up (and checked) in ``registry``."""
        if self._plan is not None:
            return self
        return ChainTool(
            self.name,
            self.steps,
            description=self.description,
            output=self.output,
            concurrent=self.concurrent,
            lookup=registry,
            options=self.options,
        )

    def __repr__(self) -> str:
        return f"<ChainTool {self.name!r} ({len(self.steps)} steps)>"

    def to_config(self) -> dict[str, Any]:
        """The chain as plain data, the form :func:`~satchel.compose.load_chains` reads.

        Raises:
            SatchelUsageError: a step has a Python predicate or a tool given as an
                object with no registered name (neither can be written out).
        """
        from satchel.compose._config import chain_to_config

        return chain_to_config(self)

    # -- running -----------------------------------------------------------------

    async def call(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Check the arguments, then run the steps (see :func:`chain`)."""
        plan = self.plan
        if not self._required <= args.keys() or not args.keys() <= self._known:
            # Only the names are checked here: each step validates its own values,
            # and a wrong one fails that step with invalid_arguments.
            problems = list(self._validator.iter_errors(args))  # pyright: ignore[reportUnknownMemberType]
            return self._invalid(problems)
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

    def _invalid(self, problems: list[jsonschema.ValidationError]) -> ToolResult:
        items = [
            {"field": ".".join(str(p) for p in e.absolute_path), "problem": e.message[:200]}
            for e in problems[:20]
        ]
        lines = "\n".join(f"- `{i['field'] or '(arguments)'}`: {i['problem']}" for i in items)
        return ToolResult(
            self.name,
            error=ErrorInfo(
                "invalid_arguments",
                f"The chain's arguments have problems; fix and call again:\n{lines}",
                {"errors": items},
            ),
        )

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


def _names_a_tool(s: Step) -> bool:
    return isinstance(s.tool, str) or (
        isinstance(s.on_error, Fallback) and isinstance(s.on_error.tool, str)
    )


def _outline(plan: Plan) -> str:
    """The steps in words, for the model reading the chain's description."""
    lines: list[str] = []
    for n, ps in enumerate(sorted(plan.steps, key=lambda s: s.index), 1):
        text = f"{n}. {ps.tool.spec.name}"
        if ps.id != ps.tool.spec.name:
            text += f" (as {ps.id})"
        if ps.over:
            text += f", once per item of {ps.over}"
        if isinstance(ps.condition, Expr):
            text += f", only if {ps.condition.text}"
        elif ps.condition is not None:
            text += ", only if a condition holds"
        if ps.fallback is not None:
            text += f"; if it fails, {ps.fallback.spec.name} instead"
        elif ps.on_error == "skip":
            text += "; skipped if it fails"
        lines.append(text)
    return "Steps:\n" + "\n".join(lines)


def chain(
    name: str,
    *steps: Step | StepTool,
    description: str,
    output: Sequence[str] | None = None,
    concurrent: bool = False,
    registry: ToolLookup | None = None,
    **options: Unpack[ToolOptions],
) -> ChainTool:
    """A tool made of registered tools, run in order.

    Each step's arguments come from the chain's own arguments and earlier steps'
    outputs: by field name, or as a step's ``map`` says. The chain's input schema is
    what its steps need that no earlier step gives; its output is the last step's, or
    the ``output`` fields. A failing step stops the chain (unless it says
    ``on_error``), and the result names the step and carries its error kind.

    Args:
        name: The chain's tool name.
        steps: Tool names, tools, functions, or :func:`step` for mappings,
            conditions, ``on_error`` and fan-out.
        description: What the chain does, for the model (the steps are listed after
            it).
        output: Return these fields (from the latest step giving each) instead of the
            last step's output.
        concurrent: Run steps that do not depend on each other at the same time.
        registry: Look the step names up here now (otherwise when registered).
        **options: The usual tool options (category, usage rule, version, ...);
            annotations given here override those derived from the steps.

    Raises:
        SatchelUsageError: when checked (now, or at registration), steps that do not
            fit; the message and ``details`` name the step and the field.

    Example:
        >>> triage = chain(
        ...     "triage", "fetch_ticket", step("classify", map={"text": "body"}),
        ...     step("escalate", when="label == 'urgent'"),
        ...     description="Fetch a ticket, classify it, escalate it when urgent.")
        >>> registry.register(triage)
    """
    made = [s if isinstance(s, Step) else step(s) for s in steps]
    return ChainTool(
        name,
        made,
        description=description,
        output=output,
        concurrent=concurrent,
        lookup=registry,
        options=options,
    )
