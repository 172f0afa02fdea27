"""The built-in tools' schemas as clients are shown them: what a model uses, no more.

Every MCP client lists the built-ins on every connection, and many put the whole
``tools/list`` in the model's context, on every request. Two parts of the listing were
read by no one:

- **the output schemas' detail**: the model sees each result's JSON, whose field names
  say what they hold, while the full output models (a block's twelve described fields,
  twice in ``context``'s) made more than 40% of the four tools' listing.
  :func:`lean_output_schema` keeps what a client needs to check a structured result
  (its top-level fields, their types, which are required) and states nested objects as
  ``object``;
- **the input schemas' bookkeeping**: the input object's own description ("The input
  of `search`."), ``"default": null`` on every optional field (the
  ``required`` list already says it may be left out) and length bounds no sensible
  argument reaches (a label's 300 characters, a message's 100,000).
  :func:`lean_input_schema` drops them and keeps every field, type, enum, description
  and other default.

:func:`with_lean_schemas` applies both to a tool's definition; calls are still
validated against the tool's own models, so nothing the tool accepts or returns changes.
"""

from __future__ import annotations

from typing import Any, cast

from satchel.registry import WrapperTool
from satchel.tools import BaseTool, ToolSpec

__all__ = ["lean_input_schema", "lean_output_schema", "with_lean_schemas"]

_NULL = {"type": "null"}
_BOUNDS = frozenset({"minLength", "maxLength", "maxItems"})
_DATA = frozenset({"enum", "const", "default", "examples"})


def lean_input_schema(schema: Any) -> Any:
    """``schema`` without ``"default": null`` and without string length and array size
    bounds, everywhere in it; everything else (fields, types, enums, descriptions,
    other defaults) is kept.

    Example:
        >>> lean_input_schema({"type": "object", "properties": {"label": {
        ...     "type": "string", "minLength": 1, "maxLength": 300, "default": None}}})
        {'type': 'object', 'properties': {'label': {'type': 'string'}}}
    """
    if isinstance(schema, list):
        return [lean_input_schema(item) for item in schema]  # pyright: ignore[reportUnknownVariableType]
    if not isinstance(schema, dict):
        return schema
    lean: dict[str, Any] = {}
    for key, value in schema.items():  # pyright: ignore[reportUnknownVariableType]
        if key in _BOUNDS or (key == "default" and value is None):
            continue
        if key in _DATA:
            lean[key] = value
        elif key == "properties" and isinstance(value, dict):  # names, not keywords
            lean[key] = {n: lean_input_schema(v) for n, v in value.items()}  # pyright: ignore[reportUnknownVariableType]
        else:
            lean[key] = lean_input_schema(value)
    return lean


def _lean_type(schema: Any) -> dict[str, Any]:
    """``schema`` of one field, as a type only: nested objects and arrays of them
    without their fields; ``X or null`` as ``["X", "null"]``."""
    if not isinstance(schema, dict):
        return {}
    fields = cast(dict[str, Any], schema)
    options: Any = fields.get("anyOf")
    if isinstance(options, list):
        kept: list[dict[str, Any]] = []
        for option in options:  # pyright: ignore[reportUnknownVariableType]
            lean_option = _lean_type(option)
            if option != _NULL and lean_option not in kept:  # two models: one "object"
                kept.append(lean_option)
        nullable = _NULL in options
        if len(kept) == 1 and isinstance(kept[0].get("type"), str):
            return {"type": [kept[0]["type"], "null"]} if nullable else kept[0]
        return {"anyOf": kept + ([_NULL] if nullable else [])}
    kind: Any = fields.get("type")
    if kind == "array":
        return {"type": "array", "items": _lean_type(fields.get("items"))}
    if kind is None:
        return {}
    lean: dict[str, Any] = {"type": kind}
    if "enum" in fields:
        lean["enum"] = fields["enum"]
    return lean


def lean_output_schema(schema: dict[str, Any] | None) -> dict[str, Any] | None:
    """``schema`` (an object's JSON schema) as its top-level properties' types
    (:func:`_lean_type`) and its ``required`` list; ``None`` stays ``None``.

    Example:
        >>> lean_output_schema({"type": "object", "properties": {"n": {
        ...     "type": "integer", "description": "How many."}}, "required": ["n"]})
        {'type': 'object', 'properties': {'n': {'type': 'integer'}}, 'required': ['n']}
    """
    if schema is None:
        return None
    lean: dict[str, Any] = {"type": "object"}
    properties: Any = schema.get("properties", {})
    lean["properties"] = {name: _lean_type(field) for name, field in properties.items()}
    if "required" in schema:
        lean["required"] = schema["required"]
    return lean


def _without_description(schema: dict[str, Any]) -> dict[str, Any]:
    """The input object without its own description ("The input of `search`."): the
    tool's description says what the input is for."""
    return {key: value for key, value in schema.items() if key != "description"}


class _LeanSchemas(WrapperTool):
    def __init__(self, inner: BaseTool) -> None:
        super().__init__(inner)
        spec = inner.spec
        self._spec = spec.model_copy(
            update={
                "input_schema": _without_description(lean_input_schema(spec.input_schema)),
                "output_schema": lean_output_schema(spec.output_schema),
            }
        )

    @property
    def spec(self) -> ToolSpec:
        return self._spec


def with_lean_schemas(tool: BaseTool) -> BaseTool:
    """``tool``, advertising :func:`lean_input_schema` and :func:`lean_output_schema` of
    its schemas; calls and results are the tool's own.
    :class:`~satchel.builtin.BuiltinTools` applies it to the memory tools.

    Example:
        >>> registry.register(with_lean_schemas(ContextTool(store)))  # doctest: +SKIP
    """
    return _LeanSchemas(tool)
