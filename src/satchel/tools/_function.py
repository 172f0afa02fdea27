"""Function tools: ``@tool`` turns a typed function (sync or async) into a tool.

The input model is built from the signature; descriptions come from the Google-style
docstring (``docstring_parser``), constraints from ``Annotated[..., Field(...)]``. A
parameter typed :class:`ToolContext` is injected and kept out of the schema.
"""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import Callable, Mapping
from typing import Any, Unpack, get_type_hints, overload

import docstring_parser
from pydantic import BaseModel, ConfigDict, Field, create_model
from pydantic.fields import FieldInfo

from satchel._errors import SatchelUsageError
from satchel.tools._base import BaseTool
from satchel.tools._context import ToolContext
from satchel.tools._metadata import ToolMetadata, ToolOptions
from satchel.tools._result import ToolResult
from satchel.tools._spec import ToolSpec
from satchel.tools._typed import TypedPlan, build_plan, run_plan

__all__ = ["FunctionTool", "tool"]


class FunctionTool(BaseTool):
    """A tool made from a plain function; still callable as that function.

    Usually made with :func:`tool`. Arguments are validated against a model built from
    the signature (unknown fields are refused), then passed by name.
    """

    def __init__(
        self,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
        localns: Mapping[str, Any] | None = None,
        **options: Unpack[ToolOptions],
    ) -> None:
        self.fn = fn
        self._is_async = inspect.iscoroutinefunction(fn)
        tool_name = name or getattr(fn, "__name__", "")
        doc = docstring_parser.parse(inspect.getdoc(fn) or "")
        params_doc = {p.arg_name: p.description or "" for p in doc.params}
        hints = _type_hints(fn, localns)
        model, self._ctx_param, self._positional = _input_model(fn, tool_name, params_doc, hints)
        self._fields = tuple(model.model_fields)
        out_type = hints.get("return", Any)
        if out_type is type(None):
            out_type = type(None)
        text = description
        if text is None:
            parts = [doc.short_description or "", doc.long_description or ""]
            text = "\n\n".join(p for p in parts if p)
        self._plan: TypedPlan = build_plan(
            name=tool_name,
            description=text,
            input_type=model,
            output_type=out_type,
            meta=ToolMetadata.of(options),
        )
        self.__doc__ = fn.__doc__
        self.__name__ = tool_name
        self.__wrapped__ = fn

    @property
    def spec(self) -> ToolSpec:
        """The tool's definition, generated at construction."""
        return self._plan.spec

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Call the underlying function directly."""
        return self.fn(*args, **kwargs)

    def _invoke(self, params: BaseModel, ctx: ToolContext) -> Any:
        values = params.__dict__
        if self._positional:
            pos = [values[n] for n in self._positional]
            kw = {n: values[n] for n in self._fields if n not in self._positional}
            if self._ctx_param:
                kw[self._ctx_param] = ctx
            return self.fn(*pos, **kw)
        if self._ctx_param:
            return self.fn(**values, **{self._ctx_param: ctx})
        return self.fn(**values)

    async def call(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Validate ``args`` against the signature and call the function."""
        plan = self._plan
        return await run_plan(plan.spec.name, plan, args, ctx, self._invoke, self._is_async)


def _type_hints(fn: Callable[..., Any], localns: Mapping[str, Any] | None) -> dict[str, Any]:
    """The function's resolved hints. Names are looked up in its module, then in the
    variables its body closes over, then in ``localns``: a type defined inside another
    function and named only in a string annotation needs ``localns=locals()``."""
    names: dict[str, Any] = {}
    with contextlib.suppress(TypeError):  # not a Python function (a builtin, an object)
        names.update(inspect.getclosurevars(fn).nonlocals)
    names.update(localns or {})
    try:
        return get_type_hints(fn, localns=names, include_extras=True)
    except (NameError, TypeError) as exc:
        raise SatchelUsageError(
            f"Cannot resolve the type hints of {getattr(fn, '__name__', fn)!r}: {exc}. "
            "Define the types at module level, or pass localns=locals()."
        ) from exc


def _input_model(
    fn: Callable[..., Any],
    tool_name: str,
    params_doc: Mapping[str, str],
    hints: Mapping[str, Any],
) -> tuple[type[BaseModel], str | None, tuple[str, ...]]:
    fields: dict[str, Any] = {}
    ctx_param: str | None = None
    positional: list[str] = []
    for param in inspect.signature(fn).parameters.values():
        annotation = hints.get(param.name, Any)
        if annotation is ToolContext:
            ctx_param = param.name
            continue
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise SatchelUsageError(
                f"Tool {tool_name!r}: *args and **kwargs cannot be described to a model; "
                "name every parameter."
            )
        if param.kind is param.POSITIONAL_ONLY:
            positional.append(param.name)
        if param.name.startswith("_"):
            raise SatchelUsageError(
                f"Tool {tool_name!r}: parameter {param.name!r} starts with '_', which "
                "pydantic cannot use as a field name."
            )
        default: Any = ... if param.default is param.empty else param.default
        doc = params_doc.get(param.name)
        info: FieldInfo = Field(default, description=doc) if doc else Field(default)
        fields[param.name] = (annotation, info)
    model = create_model(
        f"{tool_name}_arguments",
        __config__=ConfigDict(extra="forbid"),
        **fields,
    )
    return model, ctx_param, tuple(positional)


@overload
def tool(fn: Callable[..., Any], /) -> FunctionTool: ...


@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    localns: Mapping[str, Any] | None = None,
    **options: Unpack[ToolOptions],
) -> Callable[[Callable[..., Any]], FunctionTool]: ...


def tool(
    fn: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    localns: Mapping[str, Any] | None = None,
    **options: Unpack[ToolOptions],
) -> FunctionTool | Callable[[Callable[..., Any]], FunctionTool]:
    """Turn a typed function into a tool, bare (``@tool``) or with metadata.

    Args:
        fn: The function (when used bare, ``@tool``).
        name: The tool's name (default: the function's).
        description: What it does, for a model (default: the docstring).
        localns: Names for string annotations the function's module and closure do
            not hold (``localns=locals()`` for a type defined in the enclosing function).
        **options: ``summary``, ``usage_rule``, ``category``, ``actions`` and the
            annotations (:class:`~satchel.tools.ToolOptions`).

    Example:
        >>> @tool(category="math", actions=["read"])
        ... def add(a: int, b: int) -> int:
        ...     \"\"\"Add two integers.
        ...
        ...     Args:
        ...         a: First addend.
        ...         b: Second addend.
        ...     \"\"\"
        ...     return a + b
    """

    def wrap(func: Callable[..., Any]) -> FunctionTool:
        return FunctionTool(func, name=name, description=description, localns=localns, **options)

    if fn is not None:
        return wrap(fn)
    return wrap
