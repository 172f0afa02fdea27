"""What flows between a chain's steps: each step's input and output fields, and
whether a value of one JSON schema can be handed to a parameter of another.

The check is deliberately about types, not values: a ``string`` may flow into an
``enum`` of strings (the step validates the value when it runs), but a ``string``
never flows into an ``integer``, and two enums with no value in common never meet.
A schema that says nothing about its type (``{}``) fits anything.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from satchel.tools import ToolSpec

__all__ = ["input_fields", "misfit", "output_fields", "schema_types"]

JsonSchema = Mapping[str, Any]

_TEXT_OUTPUT: JsonSchema = {"type": "string"}


def input_fields(spec: ToolSpec) -> tuple[dict[str, JsonSchema], frozenset[str]]:
    """A tool's parameters (name -> schema) and the names it requires."""
    schema = spec.input_schema
    props = cast(Mapping[str, JsonSchema], schema.get("properties") or {})
    required = cast(list[str], schema.get("required") or [])
    return dict(props), frozenset(required)


def output_fields(spec: ToolSpec) -> tuple[dict[str, JsonSchema], bool]:
    """A tool's output fields (name -> schema) and whether the set is open (more
    fields may come than are listed: a tool without an output schema).

    A plain-value output is the field ``result`` (satchel sends it as
    ``{"result": value}``); a free-text output is ``result`` too.
    """
    schema = spec.output_schema
    if schema is None:
        return {"result": _TEXT_OUTPUT}, True
    props = schema.get("properties")
    extra = schema.get("additionalProperties")
    if isinstance(props, Mapping):
        return dict(cast(Mapping[str, JsonSchema], props)), extra not in (None, False)
    if schema.get("type") == "object":
        return {}, True
    return {"result": schema}, False


def _literal_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def schema_types(schema: JsonSchema) -> frozenset[str] | None:
    """The JSON types a schema admits, or ``None`` for any."""
    declared = schema.get("type")
    if isinstance(declared, str):
        return frozenset({declared})
    if isinstance(declared, list):
        return frozenset(str(t) for t in cast(list[Any], declared))
    for key in ("anyOf", "oneOf"):
        branches = schema.get(key)
        if isinstance(branches, list):
            found: set[str] = set()
            for branch in cast(list[JsonSchema], branches):
                sub = schema_types(branch)
                if sub is None:
                    return None
                found |= sub
            return frozenset(found)
    if "const" in schema:
        return frozenset({_literal_type(schema["const"])})
    values = schema.get("enum")
    if isinstance(values, list):
        return frozenset(_literal_type(v) for v in cast(list[Any], values))
    return None


def _describe(types: frozenset[str]) -> str:
    return " or ".join(sorted(types))


def misfit(source: JsonSchema, target: JsonSchema) -> str | None:
    """Why a value of schema ``source`` cannot be passed where ``target`` is
    expected, or ``None`` when it can. ``null`` in the source is ignored (an optional
    value that is there flows)."""
    src, dst = schema_types(source), schema_types(target)
    if src is not None and dst is not None:
        accepted: set[str] = set(dst) | ({"integer"} if "number" in dst else set[str]())
        wrong = set(src) - accepted - {"null"}
        if wrong or (not (set(src) - {"null"}) and "null" not in dst):
            return f"gives {_describe(src)} but it takes {_describe(dst)}"
        if src <= {"array"} and dst <= {"array"}:
            items_s, items_d = source.get("items"), target.get("items")
            if isinstance(items_s, Mapping) and isinstance(items_d, Mapping):
                inner = misfit(cast(JsonSchema, items_s), cast(JsonSchema, items_d))
                if inner is not None:
                    return f"has items that {inner}"
    enum_s, enum_d = source.get("enum"), target.get("enum")
    if isinstance(enum_s, list) and isinstance(enum_d, list):
        allowed = cast(list[Any], enum_d)
        stray = [v for v in cast(list[Any], enum_s) if v not in allowed and v is not None]
        if stray:
            return f"may give {stray!r}, which it does not accept (it takes {allowed!r})"
    return None
