"""JSON Schema keyword tables and small typed helpers shared by the schema modules.

Everything here is pure and works on plain ``dict``/``list`` JSON values. The keyword
families follow JSON Schema 2020-12 (https://json-schema.org/draft/2020-12), the
draft every dialect in this package starts from.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any, cast

JsonObject = dict[str, Any]
"""A JSON object as Python holds it: string keys, arbitrary JSON values."""

# Keywords whose value is one subschema (or, for some, a boolean schema).
SUBSCHEMA_KEYWORDS = frozenset(
    {
        "additionalProperties",
        "items",
        "additionalItems",
        "not",
        "if",
        "then",
        "else",
        "contains",
        "propertyNames",
        "unevaluatedProperties",
        "unevaluatedItems",
        "contentSchema",
    }
)
# Keywords whose value is a list of subschemas.
SUBSCHEMA_LIST_KEYWORDS = frozenset({"anyOf", "oneOf", "allOf", "prefixItems"})
# Keywords whose value maps names to subschemas.
SUBSCHEMA_MAP_KEYWORDS = frozenset(
    {"properties", "patternProperties", "dependentSchemas", "$defs", "definitions"}
)

# Keywords that only constrain one JSON type; used to split a type list into anyOf.
STRING_KEYWORDS = frozenset(
    {"minLength", "maxLength", "pattern", "format", "contentEncoding", "contentMediaType"}
)
NUMBER_KEYWORDS = frozenset(
    {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"}
)
ARRAY_KEYWORDS = frozenset(
    {
        "items",
        "prefixItems",
        "additionalItems",
        "minItems",
        "maxItems",
        "uniqueItems",
        "contains",
        "minContains",
        "maxContains",
        "unevaluatedItems",
    }
)
OBJECT_KEYWORDS = frozenset(
    {
        "properties",
        "required",
        "additionalProperties",
        "patternProperties",
        "propertyNames",
        "minProperties",
        "maxProperties",
        "dependentRequired",
        "dependentSchemas",
        "unevaluatedProperties",
    }
)
TYPE_KEYWORDS: Mapping[str, frozenset[str]] = {
    "string": STRING_KEYWORDS,
    "number": NUMBER_KEYWORDS,
    "integer": NUMBER_KEYWORDS,
    "array": ARRAY_KEYWORDS,
    "object": OBJECT_KEYWORDS,
}

JSON_TYPES = ("string", "number", "integer", "boolean", "array", "object", "null")


def as_object(value: object) -> JsonObject | None:
    """Return ``value`` typed as a JSON object, or ``None`` when it is not a dict."""
    if isinstance(value, dict):
        return cast(JsonObject, value)
    return None


def as_list(value: object) -> list[Any] | None:
    """Return ``value`` typed as a JSON array, or ``None`` when it is not a list."""
    if isinstance(value, list):
        return cast(list[Any], value)
    return None


def types_of(schema: Mapping[str, Any]) -> list[str]:
    """The schema's ``type`` as a list of type names (empty when it has none)."""
    kind = schema.get("type")
    if isinstance(kind, str):
        return [kind]
    items = as_list(kind)
    if items is None:
        return []
    return [t for t in items if isinstance(t, str)]


def is_null_schema(schema: object) -> bool:
    """Whether ``schema`` accepts only ``null`` (``{"type": "null"}``, maybe described)."""
    obj = as_object(schema)
    if obj is None:
        return False
    if obj.get("type") == "null":
        return True
    return "const" in obj and obj["const"] is None


def is_object_schema(schema: Mapping[str, Any]) -> bool:
    """Whether ``schema`` describes a JSON object (its type, or ``properties`` alone)."""
    kinds = types_of(schema)
    if kinds:
        return kinds == ["object"]
    return "properties" in schema


def is_any_schema(schema: Mapping[str, Any]) -> bool:
    """Whether ``schema`` says nothing about its value's type (no type, enum, const or union)."""
    return not any(key in schema for key in ("type", "enum", "const", "anyOf", "oneOf", "allOf"))


def json_text(value: object) -> str:
    """Compact JSON text for ``value``, for descriptions a model reads."""
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))


def canonical(value: object) -> str:
    """A stable text key for comparing JSON values."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def pointer(path: str, *tokens: str | int) -> str:
    """Extend the JSON pointer ``path`` with ``tokens`` (escaping ``~`` and ``/``)."""
    for token in tokens:
        text = str(token)
        if "~" in text or "/" in text:
            text = text.replace("~", "~0").replace("/", "~1")
        path = f"{path}/{text}"
    return path


def add_note(description: object, note: str) -> str:
    """``description`` followed by ``note`` as a new sentence."""
    text = description.strip() if isinstance(description, str) else ""
    if not text:
        return note
    if text[-1] not in ".!?:;)":
        text += "."
    return f"{text} {note}"


def with_notes(schema: JsonObject, notes: list[str]) -> JsonObject:
    """Append ``notes`` to ``schema``'s description in place and return ``schema``."""
    for note in notes:
        schema["description"] = add_note(schema.get("description"), note)
    return schema


def summary(schema: Mapping[str, Any]) -> str:
    """A few words naming what ``schema`` accepts, for notes such as "values: integer"."""
    if "const" in schema:
        return json_text(schema["const"])
    enum = as_list(schema.get("enum"))
    if enum is not None:
        return "one of " + ", ".join(json_text(v) for v in enum)
    kinds = types_of(schema)
    if kinds:
        return " or ".join(kinds)
    for key in ("anyOf", "oneOf"):
        branches = as_list(schema.get(key))
        if branches:
            return " or ".join(summary(obj) for b in branches if (obj := as_object(b)) is not None)
    return "any value"


def describe(schema: Mapping[str, Any]) -> str:
    """:func:`summary`, followed by the schema's own description in parentheses."""
    text = summary(schema)
    note = schema.get("description")
    return f"{text} ({note.strip()})" if isinstance(note, str) and note.strip() else text


def iter_subschemas(schema: Mapping[str, Any], path: str) -> Iterator[tuple[str, object]]:
    """Yield ``(pointer, value)`` for every direct subschema position of ``schema``.

    Values are yielded as found (they may be booleans or malformed); callers decide.
    """
    for key, value in schema.items():
        if key in SUBSCHEMA_KEYWORDS:
            items = as_list(value)
            if items is not None:  # draft-07 tuple form of "items"
                for index, item in enumerate(items):
                    yield pointer(path, key, index), item
            else:
                yield pointer(path, key), value
        elif key in SUBSCHEMA_LIST_KEYWORDS:
            for index, item in enumerate(as_list(value) or []):
                yield pointer(path, key, index), item
        elif key in SUBSCHEMA_MAP_KEYWORDS:
            for name, item in (as_object(value) or {}).items():
                yield pointer(path, key, name), item


def walk(schema: Mapping[str, Any], path: str = "") -> Iterator[tuple[str, JsonObject]]:
    """Yield ``(pointer, subschema)`` for ``schema`` and every object subschema inside it."""
    stack: list[tuple[str, Mapping[str, Any]]] = [(path, schema)]
    while stack:
        here, node = stack.pop()
        obj = as_object(node)
        yield here, obj if obj is not None else dict(node)
        children = [
            (where, obj)
            for where, child in iter_subschemas(node, here)
            if (obj := as_object(child)) is not None
        ]
        stack.extend(reversed(children))
