"""Is a dict a well-formed JSON Schema 2020-12 document? A fast structural check.

The official meta-schema (validated with ``jsonschema``) takes about 2 ms per tool
schema because of its ``$dynamicRef`` vocabularies; this module checks the same
keyword value shapes that the meta-schema states (JSON Schema Validation 2020-12,
sections 6.1-6.5, and Core 2020-12, section 10) in a single pass. Unknown keywords are
allowed, as the specification allows them.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from satchel.schema._keywords import (
    JSON_TYPES,
    SUBSCHEMA_KEYWORDS,
    SUBSCHEMA_LIST_KEYWORDS,
    SUBSCHEMA_MAP_KEYWORDS,
    as_list,
    as_object,
    pointer,
)

_NON_NEGATIVE_INTEGER = frozenset(
    {
        "minLength",
        "maxLength",
        "minItems",
        "maxItems",
        "minProperties",
        "maxProperties",
        "minContains",
        "maxContains",
    }
)
_NUMBER = frozenset({"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"})
_STRING = frozenset(
    {
        "pattern",
        "format",
        "description",
        "title",
        "$comment",
        "contentEncoding",
        "contentMediaType",
        "$id",
        "$schema",
        "$anchor",
        "$ref",
        "$dynamicRef",
        "$dynamicAnchor",
    }
)
_BOOLEAN = frozenset({"uniqueItems", "deprecated", "readOnly", "writeOnly"})
_ARRAY = frozenset({"enum", "examples"})


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _is_non_negative_integer(value: object) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return value >= 0
    return isinstance(value, float) and value.is_integer() and value >= 0


def _is_unique_strings(value: object) -> bool:
    items = as_list(value)
    if items is None or not all(isinstance(item, str) for item in items):
        return False
    return len(set(items)) == len(items)


def _type_problem(value: object) -> str | None:
    if isinstance(value, str):
        return None if value in JSON_TYPES else f"unknown type {value!r}"
    items = as_list(value)
    if items is None or not items:
        return "'type' must be a type name or a non-empty list of them"
    if not _is_unique_strings(items):
        return "'type' list must hold unique strings"
    unknown = [item for item in items if item not in JSON_TYPES]
    return f"unknown type {unknown[0]!r}" if unknown else None


def _keyword_problem(key: str, value: object) -> str | None:
    if key in _NON_NEGATIVE_INTEGER and not _is_non_negative_integer(value):
        return f"'{key}' must be a non-negative integer"
    if key in _NUMBER and not _is_number(value):
        return f"'{key}' must be a number"
    if key == "multipleOf" and not (
        isinstance(value, int | float) and _is_number(value) and value > 0
    ):
        return "'multipleOf' must be a number greater than 0"
    if key in _STRING and not isinstance(value, str):
        return f"'{key}' must be a string"
    if key in _BOOLEAN and not isinstance(value, bool):
        return f"'{key}' must be a boolean"
    if key in _ARRAY and as_list(value) is None:
        return f"'{key}' must be an array"
    if key == "required" and not _is_unique_strings(value):
        return "'required' must be an array of unique strings"
    if key == "type":
        return _type_problem(value)
    if key == "dependentRequired":
        obj = as_object(value)
        if obj is None or not all(_is_unique_strings(v) for v in obj.values()):
            return "'dependentRequired' must map names to arrays of unique strings"
    return None


def _is_schema(value: object) -> bool:
    return isinstance(value, bool) or as_object(value) is not None


def _structure_problem(key: str, value: object) -> str | None:
    if key in SUBSCHEMA_KEYWORDS and not _is_schema(value):
        return f"'{key}' must be a schema (an object or a boolean)"
    if key in SUBSCHEMA_LIST_KEYWORDS:
        items = as_list(value)
        if not items or not all(_is_schema(item) for item in items):
            return f"'{key}' must be a non-empty array of schemas"
    if key in SUBSCHEMA_MAP_KEYWORDS:
        obj = as_object(value)
        if obj is None or not all(_is_schema(item) for item in obj.values()):
            return f"'{key}' must be an object whose values are schemas"
    return None


def schema_problems(schema: Mapping[str, Any], path: str = "") -> Iterator[tuple[str, str]]:
    """Yield ``(pointer, message)`` for every malformed keyword value in ``schema``.

    Recurses into every subschema; boolean subschemas are well-formed.
    """
    stack: list[tuple[str, Mapping[str, Any]]] = [(path, schema)]
    while stack:
        here, node = stack.pop()
        children: list[tuple[str, Mapping[str, Any]]] = []
        for key, value in node.items():
            problem = _keyword_problem(key, value) or _structure_problem(key, value)
            if problem is not None:
                yield pointer(here, key), problem
                continue
            if key in SUBSCHEMA_KEYWORDS:
                if (obj := as_object(value)) is not None:
                    children.append((pointer(here, key), obj))
            elif key in SUBSCHEMA_LIST_KEYWORDS:
                for index, item in enumerate(as_list(value) or []):
                    if (obj := as_object(item)) is not None:
                        children.append((pointer(here, key, index), obj))
            elif key in SUBSCHEMA_MAP_KEYWORDS:
                for name, item in (as_object(value) or {}).items():
                    if (obj := as_object(item)) is not None:
                        children.append((pointer(here, key, name), obj))
        stack.extend(reversed(children))
