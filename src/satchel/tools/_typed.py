"""Typed tools: ``Tool[In, Out]`` subclasses and the machinery they share with
function tools (validation plan, output check, the call path)."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any, ClassVar, Generic, TypeVar, cast, get_args, get_origin

import anyio.to_thread
from pydantic import BaseModel, TypeAdapter, ValidationError

from satchel import schema as _schema
from satchel._errors import SatchelUsageError, SchemaError
from satchel.tools._arguments import ArgumentsError, validate_with_coercion
from satchel.tools._base import BaseTool, result_from_exception
from satchel.tools._context import ToolContext
from satchel.tools._docs import plain_schema, plain_text
from satchel.tools._metadata import ToolMetadata, ToolOptions, build_spec
from satchel.tools._result import ToolResult
from satchel.tools._spec import (
    NAME_PATTERN,
    OperationSpec,
    ToolAnnotations,
    ToolSpec,
)

__all__ = ["Tool", "TypedPlan", "build_plan"]

InT = TypeVar("InT")
OutT = TypeVar("OutT")


@dataclass(frozen=True, kw_only=True, slots=True)
class TypedPlan:
    """What a typed tool needs at call time, computed once at registration."""

    spec: ToolSpec
    validate: Callable[[dict[str, Any]], Any]
    check_output: Callable[[Any], Any]
    operations: Mapping[str, OperationSpec] | None
    exact_output: type | None = None
    """An output of exactly this type needs no check (the hot path skips the call)."""


def _is_model(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, BaseModel)


def _output_checker(
    out_type: Any,
) -> tuple[Callable[[Any], Any], dict[str, Any] | None, bool, type | None]:
    """(check, output JSON schema or None, wrapped?, exact type needing no check) for a
    declared output type."""
    if out_type is Any or out_type is inspect.Parameter.empty:
        return (lambda value: value), {"type": "object", "properties": {"result": {}}}, True, None
    if _is_model(out_type):
        model = cast(type[BaseModel], out_type)

        def check_model(value: Any) -> Any:
            return value if isinstance(value, model) else model.model_validate(value)

        return check_model, _schema.normalize(model.model_json_schema()), False, model
    adapter: TypeAdapter[Any] = TypeAdapter(out_type)
    value_schema = adapter.json_schema()
    # pydantic puts the models a type refers to in "$defs" at the root of *its* schema;
    # they stay at the root when the value is wrapped under "result", or every
    # "#/$defs/..." reference would point at nothing.
    defs = value_schema.pop("$defs", None)
    wrapper: dict[str, Any] = {
        "type": "object",
        "properties": {"result": value_schema},
        "required": ["result"],
    }
    if defs is not None:
        wrapper["$defs"] = defs
    inner = _schema.normalize(wrapper)
    simple = out_type if out_type in (int, str, float, bool) else None

    def check_value(value: Any) -> Any:
        if simple is not None and type(value) is simple:
            return value
        return adapter.validate_python(value)

    return check_value, inner, True, simple


def build_plan(
    *,
    name: str,
    description: str,
    input_type: Any,
    output_type: Any,
    meta: ToolMetadata | None = None,
    memory_gated: bool = False,
) -> TypedPlan:
    """Generate and check everything about a typed tool once.

    Args:
        name: The tool's name.
        description: What it does, for a model (reST and HTML markup are dropped).
        input_type: A model or type of the arguments.
        output_type: The type of what it returns.
        meta: Summary, usage rule, category, actions and annotations.
        memory_gated: Its writes are gated by memory block permissions.

    Raises:
        SatchelUsageError: a bad name, an empty description, or a schema satchel
            cannot serve (:class:`SchemaError`).
    """
    check_name(name)
    description = plain_text(inspect.cleandoc(description or "").strip())
    if not description:
        raise SatchelUsageError(
            f"Tool {name!r} has no description: set `description` or write a docstring. "
            "A model picks tools by their descriptions."
        )
    if _is_model(input_type):
        model = cast(type[BaseModel], input_type)
        raw_schema = model.model_json_schema()
        validate: Callable[[dict[str, Any]], Any] = model.model_validate
    else:
        try:
            adapter: TypeAdapter[Any] = TypeAdapter(input_type)
            raw_schema = adapter.json_schema()
        except Exception as exc:  # pydantic raises several types for unusable types
            raise SchemaError(f"Tool {name!r}: cannot build an input schema: {exc}") from exc
        validate = adapter.validate_python
    try:
        input_schema = plain_schema(_schema.normalize(raw_schema))
        op_info = _schema.operations(raw_schema)
        check, output_schema, wrapped, exact = _output_checker(output_type)
        output_schema = plain_schema(output_schema)
    except SchemaError as exc:
        raise SchemaError(f"Tool {name!r}: {exc.message}", details=exc.details) from exc
    spec = build_spec(
        name=name,
        description=description,
        input_schema=input_schema,
        output_schema=output_schema,
        output_wrapped=wrapped,
        operations=op_info,
        meta=meta or ToolMetadata(),
        memory_gated=memory_gated,
    )
    return TypedPlan(
        spec=spec,
        validate=validate,
        check_output=check,
        operations=dict(spec.operations) or None,
        exact_output=exact,
    )


def check_name(name: object) -> None:
    """Raise :class:`SatchelUsageError` unless ``name`` is a string matching
    ``^[A-Za-z0-9_-]{1,64}$`` (it takes any value, as untyped callers may pass one)."""
    if not isinstance(name, str) or not NAME_PATTERN.match(name):
        raise SatchelUsageError(
            f"Invalid tool name {name!r}: names must match ^[A-Za-z0-9_-]{{1,64}}$ "
            "(letters, digits, '_' and '-', at most 64 characters, prefix included)."
        )


async def run_plan(
    tool_name: str,
    plan: TypedPlan,
    args: dict[str, Any],
    ctx: ToolContext,
    invoke: Callable[[Any, ToolContext], Any],
    is_async: bool,
) -> ToolResult:
    """The shared call path: validate, run (sync code in a worker thread), check output."""
    coerced: tuple[str, ...] = ()
    try:
        params = plan.validate(args)
    except ValidationError:
        try:
            params, coerced = validate_with_coercion(
                plan.validate, args, operations=plan.operations
            )
        except ArgumentsError as exc:
            retry = _without_strict_nulls(args, plan.spec.input_schema)
            if retry is None:
                return ToolResult(tool_name, error=exc.error)
            try:
                params, coerced = validate_with_coercion(
                    plan.validate, retry[0], operations=plan.operations
                )
            except ArgumentsError:
                return ToolResult(tool_name, error=exc.error)
            coerced = (*retry[1], *coerced)
    try:
        if is_async:
            out = await invoke(params, ctx)
        else:
            out = await anyio.to_thread.run_sync(
                partial(invoke, params, ctx), abandon_on_cancel=True
            )
        out = plan.check_output(out)
    except Exception as exc:  # the boundary: every tool failure becomes a result
        return failure_result(tool_name, exc)
    return ToolResult(tool_name, out, None, coerced, plan.spec.output_wrapped)


def _holds_null(value: Any) -> bool:
    """Whether a ``None`` sits anywhere in ``value``'s dicts and lists (the fast path
    of :func:`_without_strict_nulls`: most calls hold none)."""
    stack: list[Any] = [value]
    while stack:
        item = stack.pop()
        if item is None:
            return True
        if isinstance(item, dict):
            stack.extend(cast(dict[Any, Any], item).values())
        elif isinstance(item, list):
            stack.extend(cast(list[Any], item))
    return False


def _without_strict_nulls(
    args: dict[str, Any], schema: dict[str, Any]
) -> tuple[dict[str, Any], tuple[str, ...]] | None:
    """OpenAI strict mode sends ``null`` for an optional field it leaves out; drop those
    (only where the schema says the field is optional). ``None`` when nothing changes."""
    if not _holds_null(args):
        return None
    cleaned = _schema.drop_strict_nulls(args, schema)
    if cleaned == args:
        return None
    dropped = tuple(f"{k} (null)" for k in args if k not in cleaned)
    return cleaned, dropped


def failure_result(tool_name: str, exc: Exception) -> ToolResult:
    """The result for an exception raised while running a tool or checking its output."""
    if isinstance(exc, ValidationError):
        exc = TypeError(f"tool returned an output that does not match its schema: {exc}")
    return result_from_exception(tool_name, exc)


def _generic_args(cls: type) -> tuple[Any, Any] | None:
    for klass in cls.__mro__:
        for base in getattr(klass, "__orig_bases__", ()):
            if get_origin(base) is Tool:
                args = get_args(base)
                if len(args) == 2 and not any(isinstance(a, TypeVar) for a in args):
                    return args[0], args[1]
    return None


class Tool(BaseTool, Generic[InT, OutT]):
    """A typed tool: Pydantic input and output models plus an ``execute`` method.

    Set ``name`` and ``description`` (or a docstring) on the subclass; optional catalog
    metadata and annotations too. ``execute`` may be ``async def`` or plain ``def``
    (run in a worker thread). A multi-operation tool takes a discriminated union on
    ``operation`` as its input type, and may mark single operations with
    ``operation_annotations``.

    Example:
        >>> class WordCount(Tool[CountIn, CountOut]):
        ...     name = "word_count"
        ...     description = "Counts words in text."
        ...
        ...     async def execute(self, params: CountIn, ctx: ToolContext) -> CountOut:
        ...         return CountOut(count=len(params.text.split()))
    """

    name: ClassVar[str]
    description: str = ""
    """What the tool does, for a model (the class docstring when empty). Usually set on
    the class; a tool whose offer depends on its configuration may set it per instance,
    before it is registered."""
    usage_rule: ClassVar[str | None] = None
    summary: ClassVar[str | None] = None
    category: ClassVar[str | None] = None
    actions: ClassVar[tuple[str, ...]] = ()
    read_only: ClassVar[bool | None] = None
    destructive: ClassVar[bool | None] = None
    idempotent: ClassVar[bool | None] = None
    open_world: ClassVar[bool | None] = None
    version: ClassVar[str | None] = None
    deprecated: ClassVar[str | None] = None
    requires: ClassVar[tuple[str, ...]] = ()
    operation_annotations: ClassVar[Mapping[str, ToolAnnotations]] = {}
    examples: ClassVar[tuple[str, ...]] = ()
    """Example requests the tool serves (see :class:`~satchel.tools.ToolOptions`)."""
    memory_gated: ClassVar[bool] = False
    """Its writes go through a memory store's permission gate (see
    :attr:`ToolSpec.memory_gated <satchel.tools.ToolSpec.memory_gated>`)."""
    input_type: Any = None
    """Override the input type instead of (or besides) the generic parameter; may be
    set per instance, before the tool is registered."""
    output_type: ClassVar[Any] = None
    """Override the output type instead of (or besides) the generic parameter."""

    _plan_cache: TypedPlan | None = None
    _is_async: bool = False

    def execute(self, params: InT, ctx: ToolContext) -> OutT | Awaitable[OutT]:
        """Run the tool on validated ``params``. Override this (``async def`` or
        ``def``)."""
        raise NotImplementedError(f"{type(self).__name__} must implement execute()")

    def _plan(self) -> TypedPlan:
        plan = self._plan_cache
        if plan is None:
            self._is_async = inspect.iscoroutinefunction(self.execute)
            plan = self._plan_cache = self._build_plan()
        return plan

    def _build_plan(self) -> TypedPlan:
        cls = type(self)
        if cls.execute is Tool[Any, Any].execute:  # the alias reads Tool's own function
            raise SatchelUsageError(f"{cls.__name__} must implement execute()")
        name = getattr(self, "name", None)
        if not name:
            raise SatchelUsageError(f"{cls.__name__} must set a `name`.")
        generic = _generic_args(cls)
        in_type = self.input_type or (generic[0] if generic else None)
        out_type = self.output_type or (generic[1] if generic else None)
        if in_type is None or out_type is None:
            raise SatchelUsageError(
                f"{cls.__name__}: declare the input and output types as Tool[In, Out] "
                "(or set `input_type` and `output_type`)."
            )
        return build_plan(
            name=name,
            description=self.description or (cls.__doc__ or ""),
            input_type=in_type,
            output_type=out_type,
            meta=ToolMetadata.of(
                ToolOptions(
                    summary=self.summary,
                    usage_rule=self.usage_rule,
                    category=self.category,
                    actions=tuple(self.actions),
                    read_only=self.read_only,
                    destructive=self.destructive,
                    idempotent=self.idempotent,
                    open_world=self.open_world,
                    version=self.version,
                    deprecated=self.deprecated,
                    requires=tuple(self.requires),
                    examples=self.examples,
                ),
                operation_annotations=self.operation_annotations,
            ),
            memory_gated=self.memory_gated,
        )

    @property
    def spec(self) -> ToolSpec:
        """The tool's definition, generated once."""
        return self._plan().spec

    async def call(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Validate ``args`` against the input type and run :meth:`execute`."""
        plan = self._plan_cache or self._plan()
        if not self._is_async:
            return await run_plan(plan.spec.name, plan, args, ctx, self.execute, False)
        # The hot path, inlined: valid arguments, an async execute, an output of the
        # declared type. Anything else takes the general path.
        try:
            params = plan.validate(args)
        except ValidationError:
            return await run_plan(plan.spec.name, plan, args, ctx, self.execute, True)
        try:
            # _is_async: execute is a coroutine function, so what it returns is awaitable
            # (held as Any rather than cast: this is the hot path, and cast is a call)
            pending: Any = self.execute(params, ctx)
            out: Any = await pending
            if type(out) is not plan.exact_output:
                out = plan.check_output(out)
        except Exception as exc:  # the boundary: every tool failure becomes a result
            return failure_result(plan.spec.name, exc)
        spec = plan.spec
        return ToolResult(spec.name, out, None, (), spec.output_wrapped)
