"""Per-provider adaptation of a normalized parameters schema.

* ``mcp``: MCP ``Tool.inputSchema`` is JSON Schema with ``type: "object"`` at the
  root (MCP specification, "Tools", and ``Tool`` in schema.ts). Kept as normalized.
* ``anthropic``: Messages API ``tools[].input_schema`` is "JSON schema for this tool's
  input" with ``type: "object"``, and the API rejects ``oneOf``/``allOf``/``anyOf`` at
  the top level. Kept as normalized (normalization already guarantees both).
* ``openai``: Chat Completions ``tools[].function.parameters`` "described as a JSON
  Schema object"; the API rejects ``oneOf``/``anyOf``/``allOf``/``enum``/``not`` at the
  top level. ``oneOf`` becomes ``anyOf`` everywhere (the Structured Outputs subset lists
  only ``anyOf``, so one schema serves with and without ``strict``); the rest is kept.
* ``openai-strict``: see :mod:`satchel.schema._strict`.
* ``gemini``: see :mod:`satchel.schema._gemini`.

A recursive type stays a ``$ref`` into the top-level ``$defs`` everywhere but Gemini,
where it is unrolled to a bounded depth (:mod:`satchel.schema._recursive`).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any, Literal, assert_never, cast

from satchel._errors import SatchelUsageError, SchemaError
from satchel.schema._gemini import to_gemini
from satchel.schema._keywords import (
    SUBSCHEMA_KEYWORDS,
    SUBSCHEMA_LIST_KEYWORDS,
    SUBSCHEMA_MAP_KEYWORDS,
    JsonObject,
    as_list,
    as_object,
)
from satchel.schema._recursive import reference_problems, unroll
from satchel.schema._strict import to_strict

__all__ = ["DIALECTS", "Dialect", "for_dialect", "require_dialect"]

Dialect = Literal["mcp", "openai", "openai-strict", "anthropic", "gemini"]
"""A tool-schema flavour satchel can produce."""

DIALECTS: tuple[Dialect, ...] = ("mcp", "openai", "openai-strict", "anthropic", "gemini")
"""Every :data:`Dialect`, in a stable order."""


def require_dialect(dialect: object) -> Dialect:
    """``dialect`` as a :data:`Dialect`.

    Raises:
        SatchelUsageError: ``dialect`` is not one of :data:`DIALECTS`.
    """
    for known in DIALECTS:
        if dialect == known:
            return known
    raise SatchelUsageError(
        f"Unknown schema dialect {dialect!r}; choose one of {', '.join(DIALECTS)}.",
        details={"dialect": repr(dialect)},
    )


def for_dialect(schema: Mapping[str, Any], dialect: Dialect) -> dict[str, Any]:
    """Adapt a normalized parameters schema to what one provider accepts.

    The input is not mutated, and no description is lost: where a provider cannot take
    a constraint, the constraint is said in words in the description instead.

    Args:
        schema: A schema returned by :func:`normalize`.
        dialect: The provider flavour; one of :data:`DIALECTS`.

    Returns:
        A new schema dict that passes :func:`check` for ``dialect``.

    Raises:
        SchemaError: ``schema`` is not normalized (``$ref`` left, or not an object at
            the top); or, for ``openai-strict``, part of it has no strict form (a
            free-form map, a value of any type); or, for ``gemini``, a parameter name
            Gemini refuses.
        SatchelUsageError: ``dialect`` is unknown.

    Example:
        >>> from satchel.schema import normalize
        >>> params = normalize({"properties": {"q": {"type": "string"}}, "required": ["q"]})
        >>> for_dialect(params, "openai-strict")  # doctest: +NORMALIZE_WHITESPACE
        {'type': 'object', 'properties': {'q': {'type': 'string'}}, 'required': ['q'],
         'additionalProperties': False}
    """
    known = require_dialect(dialect)
    source = _require_normalized(schema)
    match known:
        case "mcp" | "anthropic":
            return copy.deepcopy(source)
        case "openai":
            return _one_of_to_any_of(source)
        case "openai-strict":
            return to_strict(source)
        case "gemini":
            return to_gemini(unroll(source))
        case _:
            assert_never(known)


def _require_normalized(schema: Mapping[str, Any]) -> JsonObject:
    if not isinstance(cast(object, schema), Mapping):
        raise SchemaError(f"A schema must be a JSON object, not {type(schema).__name__}.")
    source = as_object(schema) or dict(schema)
    if source.get("type") != "object":
        raise SchemaError(
            "for_dialect() takes a normalized schema, with type 'object' at the top; "
            "call normalize() first."
        )
    for where, message in reference_problems(source):
        raise SchemaError(
            f"for_dialect() takes a normalized schema, but at {where or '/'}: {message} "
            "Call normalize() first."
        )
    return source


def _one_of_to_any_of(node: JsonObject) -> JsonObject:
    out: JsonObject = {}
    for key, value in node.items():
        target = "anyOf" if key == "oneOf" and "anyOf" not in node else key
        if key in SUBSCHEMA_KEYWORDS and (obj := as_object(value)) is not None:
            out[target] = _one_of_to_any_of(obj)
        elif key in SUBSCHEMA_LIST_KEYWORDS and (items := as_list(value)) is not None:
            out[target] = [
                _one_of_to_any_of(obj) if (obj := as_object(item)) is not None else item
                for item in items
            ]
        elif key in SUBSCHEMA_MAP_KEYWORDS and (mapping := as_object(value)) is not None:
            out[target] = {
                name: _one_of_to_any_of(obj) if (obj := as_object(item)) is not None else item
                for name, item in mapping.items()
            }
        else:
            out[target] = copy.deepcopy(value)
    return out
