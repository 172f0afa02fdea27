"""Checking a chain when it is registered, and the plan it then runs.

Every parameter of every step gets its sources, best first: the latest earlier step
that gives the field (or the field an explicit mapping names), then, when no step
surely gives it, the chain's own argument of that name. The chain's input schema is
those arguments; a type that cannot flow, a field nobody gives, a step that reads a
later one, or a cycle among ``after`` is a :class:`~satchel.SatchelUsageError` that
names the step and the field, raised here and never at call time.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from satchel._errors import SatchelUsageError
from satchel.compose._conditions import Condition, Expr
from satchel.compose._flow import JsonSchema, input_fields, misfit, output_fields
from satchel.compose._steps import Fallback, Step, StepTool
from satchel.tools import BaseTool, FunctionTool, ToolAnnotations, ToolLookup

__all__ = ["Plan", "PlannedStep", "Source", "plan_chain"]

INPUT = "input"
"""The name under which mappings and conditions read the chain's own arguments."""


@dataclass(frozen=True, slots=True)
class Source:
    """Where a value comes from: a step's output field, or (``step=None``) the
    chain's argument."""

    step: str | None
    field: str


@dataclass(frozen=True, kw_only=True, slots=True)
class PlannedStep:
    """One checked step."""

    index: int
    id: str
    tool: BaseTool
    sources: Mapping[str, tuple[Source, ...]]
    condition: Condition | None
    on_error: str
    fallback: BaseTool | None
    over: str | None
    limit: int
    max_items: int
    deps: frozenset[str]
    outputs: Mapping[str, JsonSchema]
    optional: bool


@dataclass(frozen=True, kw_only=True, slots=True)
class Plan:
    """A checked chain: its steps in run order, grouped into waves that may run at
    once (one step per wave unless the chain is concurrent)."""

    steps: tuple[PlannedStep, ...]
    waves: tuple[tuple[PlannedStep, ...], ...]
    input_schema: dict[str, Any]
    output: tuple[str, ...] | None
    output_schema: dict[str, Any] | None
    annotations: ToolAnnotations
    requires: tuple[str, ...]
    memory_gated: bool


def _error(chain: str, message: str, **details: Any) -> SatchelUsageError:
    return SatchelUsageError(f"Chain {chain!r}: {message}", details={"chain": chain, **details})


def _resolve(chain: str, what: StepTool, lookup: ToolLookup | None, index: int) -> BaseTool:
    if isinstance(what, BaseTool):
        return what
    if isinstance(what, str):
        found = lookup.get(what) if lookup is not None else None
        if found is None:
            where = "the registry" if lookup is not None else "any registry (none given yet)"
            raise _error(
                chain,
                f"step {index + 1} names the tool {what!r}, which is not in {where}.",
                step=index + 1,
                tool=what,
            )
        return found
    return FunctionTool(what)


@dataclass(kw_only=True, slots=True)
class _Given:
    step: str
    schema: JsonSchema
    optional: bool


class _Planner:
    def __init__(self, chain: str, lookup: ToolLookup | None) -> None:
        self.chain = chain
        self.lookup = lookup
        self.given: dict[str, list[_Given]] = {}  # field -> earlier steps giving it
        self.done: dict[str, PlannedStep] = {}
        self.open: set[str] = set()  # steps whose output may hold unlisted fields
        self.inputs: dict[str, JsonSchema] = {}
        self.input_by: dict[str, str] = {}
        self.required: set[str] = set()

    def fail(self, sid: str, field: str | None, message: str) -> SatchelUsageError:
        where = f"step {sid!r}" + (f", field {field!r}" if field else "")
        return _error(self.chain, f"{where}: {message}", step=sid, field=field)

    def take_input(self, sid: str, field: str, schema: JsonSchema, required: bool) -> None:
        known = self.inputs.get(field)
        if known is not None:
            problem = misfit(known, schema)
            if problem:
                raise self.fail(
                    sid,
                    field,
                    f"the chain's argument {field!r} (as step "
                    f"{self.input_by[field]!r} takes it) {problem}.",
                )
        else:
            self.inputs[field] = schema
            self.input_by[field] = sid
        if required:
            self.required.add(field)

    def source(
        self, sid: str, param: str, ref: str, want: JsonSchema, required: bool, later: set[str]
    ) -> tuple[Source, ...]:
        head, dot, tail = ref.partition(".")
        if dot and head == INPUT:
            self.take_input(sid, tail, want, required)
            return (Source(None, tail),)
        if dot:
            return (self.from_step(sid, param, head, tail, want, later),)
        givers = list(reversed(self.given.get(ref, [])))
        for giver in givers:
            problem = misfit(giver.schema, want)
            if problem:
                raise self.fail(sid, param, f"{ref!r} from step {giver.step!r} {problem}.")
        found = tuple(Source(g.step, ref) for g in givers)
        if not givers or all(g.optional for g in givers):
            self.take_input(sid, ref, want, required and not givers)
            found += (Source(None, ref),)
        return found

    def from_step(
        self, sid: str, param: str, other: str, field: str, want: JsonSchema, later: set[str]
    ) -> Source:
        if other not in self.done:
            if other in later or other == sid:
                raise self.fail(
                    sid,
                    param,
                    f"it reads step {other!r}, which does not run before it "
                    "(a cycle); a step can only read earlier steps.",
                )
            raise self.fail(sid, param, f"there is no step {other!r} before it.")
        outputs = self.done[other].outputs
        if field not in outputs:
            if other not in self.open:
                raise self.fail(
                    sid,
                    param,
                    f"step {other!r} gives no field {field!r}; it gives "
                    f"{', '.join(sorted(outputs)) or 'nothing'}.",
                )
            return Source(other, field)
        problem = misfit(outputs[field], want)
        if problem:
            raise self.fail(sid, param, f"step {other!r}'s {field!r} {problem}.")
        return Source(other, field)

    def plan_step(self, index: int, st: Step, later: set[str]) -> PlannedStep:
        tool = _resolve(self.chain, st.tool, self.lookup, index)
        sid = st.id or tool.spec.name
        if sid in self.done or sid == INPUT:
            raise self.fail(sid, None, "two steps have this id; give one an id=.")
        params, required = input_fields(tool.spec)
        for target in st.map:
            if target not in params:
                raise self.fail(
                    sid,
                    target,
                    f"the mapping names a parameter {tool.spec.name!r} does "
                    f"not take; it takes {', '.join(sorted(params)) or 'nothing'}.",
                )
        if st.over is not None and st.over not in params:
            raise self.fail(sid, st.over, "`over` names a parameter the tool does not take.")
        sources: dict[str, tuple[Source, ...]] = {}
        for param, schema in params.items():
            want = (
                {"type": "array", "items": schema, "maxItems": st.max_items}
                if param == st.over
                else schema
            )
            ref = st.map.get(param, param)
            sources[param] = self.source(sid, param, ref, want, param in required, later)
        deps = {s.step for found in sources.values() for s in found if s.step}
        if isinstance(st.when, Expr):
            deps |= self.check_condition(sid, st.when, later)
        fallback = None
        if isinstance(st.on_error, Fallback):
            fallback = _resolve(self.chain, st.on_error.tool, self.lookup, index)
            _, needs = input_fields(fallback.spec)
            missing = sorted(needs - set(params))
            if missing:
                raise self.fail(
                    sid,
                    missing[0],
                    f"the fallback {fallback.spec.name!r} needs it, and "
                    "a fallback gets only the step's own arguments.",
                )
        outputs, is_open = output_fields(tool.spec)
        if st.over is not None:
            outputs = {k: {"type": "array", "items": v} for k, v in outputs.items()}
        optional = st.when is not None or st.on_error == "skip"
        planned = PlannedStep(
            index=index, id=sid, tool=tool, sources=sources, condition=st.when,
            on_error=st.on_error if isinstance(st.on_error, str) else "fallback",
            fallback=fallback, over=st.over, limit=st.limit, max_items=st.max_items,
            deps=frozenset(deps | set(st.after)), outputs=outputs, optional=optional,
        )  # fmt: skip
        for field, schema in outputs.items():
            self.given.setdefault(field, []).append(
                _Given(step=sid, schema=schema, optional=optional)
            )
        if is_open:
            self.open.add(sid)
        self.done[sid] = planned
        return planned

    def check_condition(self, sid: str, when: Expr, later: set[str]) -> set[str]:
        roots = when.roots()
        if roots is None:
            return set(self.done)
        deps: set[str] = set()
        for name in sorted(roots):
            if name in self.done:
                deps.add(name)
            elif name in self.given:
                deps |= {g.step for g in self.given[name]}
            elif name != INPUT:
                hint = " (it runs later)" if name in later else ""
                raise self.fail(
                    sid,
                    name,
                    f"its condition {when.text!r} reads {name!r}, which no "
                    f"earlier step gives{hint}; read the chain's arguments as input.{name}.",
                )
        return deps


def _order(chain: str, steps: list[PlannedStep], concurrent: bool) -> list[list[PlannedStep]]:
    """Kahn's algorithm: waves of steps whose dependencies ran; a cycle is an error."""
    ids = {s.id for s in steps}
    for s in steps:
        unknown = sorted(s.deps - ids)
        if unknown:
            raise _error(chain, f"step {s.id!r} waits for {unknown[0]!r}, which is not a step.")
    waiting = list(steps)
    done: set[str] = set()
    waves: list[list[PlannedStep]] = []
    while waiting:
        ready = [s for s in waiting if s.deps <= done]
        if not ready:
            names = " -> ".join(s.id for s in waiting)
            raise _error(chain, f"the steps {names} wait for each other (a cycle).")
        wave = ready if concurrent else ready[:1]
        waves.append(wave)
        done |= {s.id for s in wave}
        waiting = [s for s in waiting if s.id not in done]
    return waves


def _annotations(tools: Sequence[BaseTool]) -> ToolAnnotations:
    specs = [t.spec for t in tools]
    hints = [s.annotations for s in specs]
    return ToolAnnotations(
        read_only=True if all(not s.is_write for s in specs) else None,
        destructive=True if any(s.is_destructive() for s in specs) else None,
        idempotent=True if all(h.idempotent is True for h in hints) else None,
        open_world=True if any(h.open_world is True for h in hints) else None,
    )


def _output(
    planner: _Planner, last: PlannedStep, output: Sequence[str] | None
) -> tuple[tuple[str, ...] | None, dict[str, Any] | None]:
    if output is None:
        spec = last.tool.spec.output_schema
        if last.optional or spec is None:
            return None, None
        if last.over is None:
            return None, dict(spec)
        return None, {"type": "object", "properties": dict(last.outputs)}
    props: dict[str, JsonSchema] = {}
    required: list[str] = []
    for field in output:
        givers = planner.given.get(field)
        if not givers and planner.open:
            props[field] = {}  # an open output may give it
            continue
        if not givers:
            raise _error(
                planner.chain,
                f"`output` names the field {field!r}, which no step gives.",
                field=field,
            )
        props[field] = givers[-1].schema
        if not all(g.optional for g in givers):
            required.append(field)
    schema: dict[str, Any] = {"type": "object", "properties": props, "required": required}
    return tuple(output), schema


def plan_chain(
    chain: str,
    steps: Sequence[Step],
    lookup: ToolLookup | None,
    *,
    output: Sequence[str] | None = None,
    concurrent: bool = False,
) -> Plan:
    """Check ``steps`` and plan how they run.

    Raises:
        SatchelUsageError: no steps, or steps that do not fit together (the message
            and ``details`` name the step and the field).
    """
    if not steps:
        raise _error(chain, "a chain needs at least one step.")
    planner = _Planner(chain, lookup)
    names = [s.id or (s.tool.partition("@")[0] if isinstance(s.tool, str) else "") for s in steps]
    planned = [planner.plan_step(i, st, set(names[i + 1 :])) for i, st in enumerate(steps)]
    waves = _order(chain, planned, concurrent)
    tools = [s.tool for s in planned] + [s.fallback for s in planned if s.fallback]
    inside = {t.spec.name for t in tools}
    requires = {r for t in tools for r in t.spec.requires if r.partition("@")[0] not in inside}
    out_fields, out_schema = _output(planner, planned[-1], output)
    required = sorted(planner.required)
    return Plan(
        steps=tuple(s for wave in waves for s in wave),
        waves=tuple(tuple(w) for w in waves),
        input_schema={
            "type": "object",
            "properties": dict(planner.inputs),
            "required": required,
            "additionalProperties": False,
        },
        output=out_fields,
        output_schema=out_schema,
        annotations=_annotations(tools),
        requires=tuple(sorted(requires)),
        memory_gated=all(t.spec.memory_gated for t in tools),
    )
