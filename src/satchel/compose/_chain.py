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
from typing import Any, Unpack

import jsonschema

from satchel import schema as _schema
from satchel._counts import counted
from satchel._errors import SatchelUsageError
from satchel.compose._conditions import Expr
from satchel.compose._plan import Plan, plan_chain
from satchel.compose._run import PlanRunner
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
)

__all__ = ["ChainTool", "chain"]


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
        self._runner = PlanRunner(self.name, plan)

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
        return f"<ChainTool {self.name!r} ({counted(len(self.steps), 'step')})>"

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
        self.plan  # noqa: B018 - raises the clear error for an unbound chain
        if not self._required <= args.keys() or not args.keys() <= self._known:
            # Only the names are checked here: each step validates its own values,
            # and a wrong one fails that step with invalid_arguments.
            problems = list(self._validator.iter_errors(args))  # pyright: ignore[reportUnknownMemberType]
            return self._invalid(problems)
        return await self._runner.run(args, ctx)

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
