"""Raw tools: a hand-written JSON schema and a ``run(args) -> str`` callable.

Arguments are checked with ``jsonschema`` before ``run`` is called. Errors from ``run``
(a raised exception, or a returned :class:`~satchel.ToolFailed`) become ``failed``
results, because a raw tool's author speaks to the model in strings.
"""

from __future__ import annotations

import copy
import inspect
import json
import logging
from collections.abc import Callable, Iterator, Mapping, Sequence
from functools import partial
from typing import Any, Protocol, Unpack, cast

import anyio.to_thread
import jsonschema
from jsonschema.exceptions import ValidationError as JsonSchemaValidationError

from satchel import schema as _schema
from satchel._errors import SatchelError, SatchelUsageError, SchemaError, ToolFailed
from satchel.tools._base import BaseTool
from satchel.tools._context import ToolContext
from satchel.tools._metadata import ToolMetadata, ToolOptions, build_spec
from satchel.tools._result import ErrorInfo, ToolResult
from satchel.tools._spec import (
    ToolAnnotations,
    ToolSpec,
)
from satchel.tools._typed import check_name

__all__ = ["RawTool"]

logger = logging.getLogger("satchel.tools")

_MAX_SHOWN = 80


def _path_text(path: Sequence[Any]) -> str:
    out = ""
    for item in path:
        out += f"[{item}]" if isinstance(item, int) else (f".{item}" if out else str(item))
    return out


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= _MAX_SHOWN else text[: _MAX_SHOWN - 1] + "…"


class _Validator(Protocol):
    """The one part of a jsonschema validator a raw tool calls: its stubs type
    ``iter_errors`` with a deprecated second overload whose ``instance`` is unknown."""

    def iter_errors(self, instance: Any) -> Iterator[JsonSchemaValidationError]: ...


class RawTool(BaseTool):
    """A tool defined by a hand-written JSON schema and a function of the raw arguments.

    Args:
        name: The tool's name.
        description: What it does, for the model.
        parameters: A JSON schema of the arguments (``type: object``).
        run: ``run(args) -> str`` (sync, run in a worker thread, or async).
        output_schema: An optional JSON schema of a structured (dict) output.
    """

    def __init__(
        self,
        *,
        name: str,
        description: str,
        parameters: Mapping[str, Any],
        run: Callable[[dict[str, Any]], Any],
        output_schema: Mapping[str, Any] | None = None,
        operation_annotations: Mapping[str, ToolAnnotations] | None = None,
        **options: Unpack[ToolOptions],
    ) -> None:
        check_name(name)
        description = (description or "").strip()
        if not description:
            raise SatchelUsageError(f"Tool {name!r} has no description.")
        params = copy.deepcopy(dict(parameters))
        try:
            normalized = _schema.normalize(params)
            op_info = _schema.operations(params)
        except SchemaError as exc:
            raise SchemaError(f"Tool {name!r}: {exc.message}", details=exc.details) from exc
        # Validate calls against the schema as written when it is valid 2020-12 JSON
        # Schema; an older draft's spelling (e.g. boolean exclusiveMinimum) is validated
        # against its normalized, upgraded form instead.
        validate_against = params
        try:
            jsonschema.Draft202012Validator.check_schema(params)
        except jsonschema.SchemaError:
            validate_against = normalized
            try:
                jsonschema.Draft202012Validator.check_schema(normalized)
            except jsonschema.SchemaError as exc:
                raise SchemaError(
                    f"Tool {name!r}: the parameters are not a valid JSON schema: {exc.message}"
                ) from exc
        self._validator: _Validator = jsonschema.Draft202012Validator(validate_against)
        self._run = run
        self._is_async = inspect.iscoroutinefunction(run)
        self._spec = build_spec(
            name=name,
            description=description,
            input_schema=normalized,
            output_schema=_schema.normalize(output_schema) if output_schema else None,
            operations=op_info,
            meta=ToolMetadata.of(options, operation_annotations=operation_annotations),
        )

    @property
    def spec(self) -> ToolSpec:
        """The tool's definition."""
        return self._spec

    def _errors(self, args: dict[str, Any]) -> list[JsonSchemaValidationError]:
        found: list[JsonSchemaValidationError] = list(self._validator.iter_errors(args))
        return sorted(found, key=lambda e: [str(p) for p in e.absolute_path])

    def _coerce(
        self, args: dict[str, Any], errors: list[JsonSchemaValidationError]
    ) -> tuple[dict[str, Any], list[str]] | None:
        patched = copy.deepcopy(args)
        paths: list[str] = []
        for err in errors:
            wanted: Any = err.validator_value if err.validator == "type" else None
            wanted_set: set[str] = (
                {wanted}
                if isinstance(wanted, str)
                else {str(w) for w in cast(list[Any], wanted or [])}
            )
            if not isinstance(err.instance, str) or not wanted_set & {"array", "object"}:
                continue
            try:
                decoded = json.loads(err.instance)
            except (json.JSONDecodeError, RecursionError):
                continue
            path = list(err.absolute_path)
            if not path or not isinstance(decoded, list | dict):
                continue
            target: Any = patched
            for key in path[:-1]:
                target = target[key]
            target[path[-1]] = decoded
            paths.append(_path_text(path))
        return (patched, paths) if paths else None

    def _invalid(self, errors: list[JsonSchemaValidationError]) -> ToolResult:
        items: list[dict[str, str]] = []
        lines: list[str] = []
        for err in errors[:20]:
            field = _path_text(list(err.absolute_path))
            required: Any = err.validator_value
            instance: Any = err.instance
            if err.validator == "required" and isinstance(required, list):
                missing = [
                    str(k)
                    for k in cast(list[Any], required)
                    if isinstance(instance, dict) and k not in instance
                ]
                for key in missing:
                    full = f"{field}.{key}" if field else key
                    items.append({"field": full, "problem": "is required but missing"})
                    lines.append(f"- `{full}` is required but missing")
                continue
            problem = f"{err.message[:200]}"
            if err.validator == "additionalProperties":
                problem = f"has unknown fields: {err.message[:200]}"
            items.append({"field": field, "problem": problem})
            lines.append(f"- `{field or '(arguments)'}` {problem} (got {_short(err.instance)})")
        n = len(items)
        head = "The arguments have 1 problem" if n == 1 else f"The arguments have {n} problems"
        return ToolResult(
            self._spec.name,
            error=ErrorInfo(
                "invalid_arguments",
                f"{head}; fix and call again:\n" + "\n".join(lines),
                {"errors": items},
            ),
        )

    async def call(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Check ``args`` against the JSON schema, then run the function."""
        name = self._spec.name
        coerced: list[str] = []
        errors = self._errors(args)
        if errors:
            fixed = self._coerce(args, errors)
            if fixed is None or self._errors(fixed[0]):
                cleaned = _schema.drop_strict_nulls(args, self._spec.input_schema)
                if cleaned == args or self._errors(cleaned):
                    return self._invalid(errors)
                fixed = (cleaned, [f"{k} (null)" for k in args if k not in cleaned])
            args, coerced = fixed
        try:
            if self._is_async:
                out = await self._run(args)
            else:
                out = await anyio.to_thread.run_sync(
                    partial(self._run, args), abandon_on_cancel=True
                )
        except SatchelError as exc:
            kind = exc.error_kind if exc.error_kind != "internal" else "failed"
            return ToolResult(name, error=ErrorInfo(kind, exc.message, exc.details))
        except Exception as exc:  # the boundary: a raw tool's exception is its message
            logger.info("raw tool %r raised %s", name, type(exc).__name__, exc_info=exc)
            message = str(exc) or type(exc).__name__
            return ToolResult(name, error=ErrorInfo("failed", message))
        if isinstance(out, ToolFailed):
            return ToolResult(name, error=ErrorInfo("failed", out.message, out.details))
        wrapped = False
        if not isinstance(out, str | dict) and out is not None:
            out = str(out)
        return ToolResult(name, out, None, tuple(coerced), wrapped)
