"""The ``gemini`` dialect: the OpenAPI 3.0 subset of Gemini function declarations.

Sources:

* Gemini API reference, ``Schema`` ("Represents a select subset of an OpenAPI 3.0
  schema object"; https://ai.google.dev/api/caching#Schema, the
  ``google.ai.generativelanguage.v1beta.Schema`` message). Its fields are the only
  keywords kept: ``type``, ``format``, ``title``, ``description``, ``nullable``,
  ``enum`` (strings only), ``items``, ``properties``, ``required``, ``minItems``,
  ``maxItems``, ``minLength``, ``maxLength``, ``minProperties``, ``maxProperties``,
  ``minimum``, ``maximum``, ``pattern``, ``anyOf``, ``propertyOrdering``,
  ``default``, ``example``. The API rejects any other field ("Invalid JSON payload
  received. Unknown name ...").
* ``format``: "for NUMBER type: float, double; for INTEGER type: int32, int64"; for
  strings the Gemini Developer API takes only ``enum`` and ``date-time``.
* Gemini function calling guide and ``FunctionDeclaration`` reference: parameter names
  "must start with a letter or an underscore and must only contain chars a-z, A-Z,
  0-9, or underscores with a maximum length of 64".
* API errors observed by many clients: "properties: should be non-empty for OBJECT
  type", "items: missing field" (an array needs ``items`` with a type).

What this module does: ``null`` unions become ``nullable: true``; ``const`` becomes a
one-value string ``enum``; non-string ``enum``/``const`` and every dropped constraint
(``additionalProperties``, ``exclusiveMinimum``/``exclusiveMaximum`` on numbers,
``multipleOf``, ``uniqueItems``, other formats, ...) are said in words in the
description; ``exclusiveMinimum``/``exclusiveMaximum`` on integers become
``minimum``/``maximum`` +/- 1; ``examples`` becomes ``example``; ``oneOf`` becomes
``anyOf``; a free-form map is an object without ``properties``; a value of any type
becomes ``anyOf`` of every Gemini type; an empty ``properties`` is left out.
"""

from __future__ import annotations

import copy
import math
import re
from collections.abc import Mapping

from satchel._errors import SchemaError
from satchel.schema._keywords import (
    JsonObject,
    add_note,
    as_list,
    as_object,
    describe,
    is_any_schema,
    is_null_schema,
    json_text,
    pointer,
    types_of,
    with_notes,
)
from satchel.schema._normalize import merge
from satchel.schema._reshape import constraint_note, reshape

__all__ = ["GEMINI_FIELDS", "GEMINI_FORMATS", "PARAMETER_NAME", "to_gemini"]

GEMINI_FIELDS = frozenset(
    {
        "type",
        "format",
        "title",
        "description",
        "nullable",
        "enum",
        "items",
        "properties",
        "required",
        "minItems",
        "maxItems",
        "minLength",
        "maxLength",
        "minProperties",
        "maxProperties",
        "minimum",
        "maximum",
        "pattern",
        "anyOf",
        "propertyOrdering",
        "default",
        "example",
    }
)
"""The fields of the Gemini API ``Schema`` message."""

GEMINI_TYPES = frozenset({"string", "number", "integer", "boolean", "array", "object"})
"""``Schema.type`` values (the API's enum is upper-case; it takes these names)."""

GEMINI_FORMATS: Mapping[str, frozenset[str]] = {
    "string": frozenset({"enum", "date-time"}),
    "number": frozenset({"float", "double"}),
    "integer": frozenset({"int32", "int64"}),
}
"""The ``format`` values each type takes."""

PARAMETER_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")
"""What a function parameter (a top-level property) may be called."""

_SCALARS: list[JsonObject] = [{"type": "string"}, {"type": "number"}, {"type": "boolean"}]


def _any_value() -> list[JsonObject]:
    """The branches standing for "any JSON value" (Gemini has no untyped schema)."""
    return [
        *copy.deepcopy(_SCALARS),
        {"type": "object"},
        {"type": "array", "items": {"anyOf": [*copy.deepcopy(_SCALARS), {"type": "object"}]}},
    ]


def to_gemini(schema: JsonObject) -> JsonObject:
    """Adapt a normalized schema to Gemini's function-declaration ``parameters``.

    Raises:
        SchemaError: A parameter name is not one Gemini accepts (renaming it would
            break the tool's calls).
    """
    for name in as_object(schema.get("properties")) or {}:
        if not PARAMETER_NAME.fullmatch(name):
            raise SchemaError(
                f"Gemini requires parameter names to start with a letter or underscore and "
                f"to use only letters, digits and underscores (64 at most); rename the "
                f"parameter {name!r}.",
                details={"dialect": "gemini", "parameter": name},
            )
    return _convert(schema, "")


def _pull_null(schema: JsonObject) -> tuple[JsonObject, bool]:
    """Remove every way ``schema`` admits ``null``; say whether it did."""
    out = dict(schema)
    nullable = out.pop("nullable", False) is True
    kinds = types_of(out)
    if "null" in kinds:
        nullable = True
        rest = [k for k in kinds if k != "null"]
        if rest:
            out["type"] = rest[0] if len(rest) == 1 else rest
        else:
            del out["type"]
    branches = as_list(out.get("anyOf"))
    if branches is not None:
        kept = [b for b in branches if not is_null_schema(b)]
        if len(kept) < len(branches):
            nullable = True
            out["anyOf"] = kept
    values = as_list(out.get("enum"))
    if values is not None and None in values:
        nullable = True
        out["enum"] = [v for v in values if v is not None]
        if not out["enum"]:
            del out["enum"]
    if "const" in out and out["const"] is None:
        nullable = True
        del out["const"]
    return out, nullable


def _value_type(values: list[object]) -> str | None:
    if all(isinstance(v, bool) for v in values):
        return "boolean"
    if all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        return "integer"
    if all(isinstance(v, int | float) and not isinstance(v, bool) for v in values):
        return "number"
    return None


def _convert(node: JsonObject, path: str) -> JsonObject:
    reshaped, notes = reshape(node)
    schema, nullable = _pull_null(reshaped)
    branches = as_list(schema.get("anyOf"))
    if branches is not None and len(branches) <= 1:
        rest = {k: v for k, v in schema.items() if k != "anyOf"}
        if branches and (only := as_object(branches[0])) is not None:
            outer, inner = rest.get("description"), only.get("description")
            rest = merge(rest, only, path)
            if isinstance(outer, str) and isinstance(inner, str) and inner not in outer:
                rest["description"] = add_note(outer, inner)
        return _finish(_convert(rest, path), notes, nullable)
    if nullable and is_any_schema(schema) and not schema.get("properties"):
        # null alone ({"type": "null"}): Gemini has no null type
        return _finish({"type": "string"}, [*notes, "Must be null."], nullable)
    schema = _enum_and_const(schema, notes)
    out: JsonObject = {}
    kind = schema.get("type")
    for key, value in schema.items():
        here = pointer(path, key)
        if key == "properties":
            converted = {
                name: _convert(as_object(sub) or {}, pointer(here, name))
                for name, sub in (as_object(value) or {}).items()
            }
            if converted:
                out[key] = converted
        elif key == "items":
            if (items := as_object(value)) is not None:
                out[key] = _convert(items, here)
        elif key == "anyOf":
            out[key] = [
                _convert(as_object(sub) or {}, pointer(here, i))
                for i, sub in enumerate(as_list(value) or [])
            ]
        elif key == "required":
            continue  # filtered once properties are known
        elif key == "format":
            if isinstance(kind, str) and value in GEMINI_FORMATS.get(kind, ()):
                out[key] = value
            else:
                notes.append(f"Format: {value}.")
        elif key in ("exclusiveMinimum", "exclusiveMaximum"):
            continue  # after the loop, once minimum/maximum are known
        elif key == "examples":
            if values := as_list(value):
                out["example"] = copy.deepcopy(values[0])
        elif key == "additionalProperties":
            if (extra := as_object(value)) is not None or value is True:
                kept = (
                    "Other keys are allowed" if schema.get("properties") else "Keys are free-form"
                )
                notes.append(f"{kept}; each value is {_value_words(extra, here)}.")
        elif key in GEMINI_FIELDS:
            out[key] = copy.deepcopy(value)
        elif (note := constraint_note(key, value)) is not None:
            notes.append(note)
    _exclusive_bounds(schema, out, notes)
    if isinstance(out.get("type"), list):  # a type list left beside anyOf: anyOf says it
        del out["type"]
    names = as_object(out.get("properties")) or {}
    required = [n for n in as_list(schema.get("required")) or [] if n in names]
    if required:
        out["required"] = list(dict.fromkeys(required))
    if out.get("type") == "array" and "items" not in out:
        out["items"] = {"anyOf": _any_value()}
    if "type" not in out and "anyOf" not in out:
        if "properties" in out or "properties" in schema:
            out["type"] = "object"
        else:
            out["anyOf"] = _any_value()
    return _finish(out, notes, nullable)


def _value_words(schema: JsonObject | None, path: str) -> str:
    """How a map's values look, in words, or as Gemini JSON when they have structure."""
    if schema is None:
        return "any value"
    if any(key in schema for key in ("properties", "items", "anyOf", "oneOf", "prefixItems")):
        return "like " + json_text(_convert(schema, path))
    return describe(schema)


def _enum_and_const(schema: JsonObject, notes: list[str]) -> JsonObject:
    out = dict(schema)
    if "const" in out:
        value = out.pop("const")
        if isinstance(value, str):
            out["enum"] = [value]
        else:
            notes.append(f"Must be {json_text(value)}.")
            if "type" not in out and (kind := _value_type([value])) is not None:
                out["type"] = kind
    values = as_list(out.get("enum"))
    if values is None:
        return out
    if values and all(isinstance(v, str) for v in values):
        out["type"] = "string"
        return out
    del out["enum"]
    notes.append(f"One of: {', '.join(json_text(v) for v in values)}.")
    if "type" not in out and (kind := _value_type(values)) is not None:
        out["type"] = kind
    return out


def _exclusive_bounds(schema: JsonObject, out: JsonObject, notes: list[str]) -> None:
    """Integers: an exclusive bound is the next whole number in. Numbers: say it."""
    for key, target, lower in (
        ("exclusiveMinimum", "minimum", True),
        ("exclusiveMaximum", "maximum", False),
    ):
        value = schema.get(key)
        if not isinstance(value, int | float) or isinstance(value, bool):
            continue
        if schema.get("type") != "integer":
            notes.append(f"{'Greater' if lower else 'Less'} than {json_text(value)}.")
            continue
        bound = math.floor(value) + 1 if lower else math.ceil(value) - 1
        current = out.get(target)
        if isinstance(current, int | float) and not isinstance(current, bool):
            bound = max(bound, math.ceil(current)) if lower else min(bound, math.floor(current))
        out[target] = bound


def _finish(out: JsonObject, notes: list[str], nullable: bool) -> JsonObject:
    if nullable:
        branches = as_list(out.get("anyOf"))
        if branches is not None:
            for branch in branches:
                if (obj := as_object(branch)) is not None:
                    obj["nullable"] = True
        else:
            out["nullable"] = True
    return with_notes(out, notes)
