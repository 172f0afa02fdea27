"""The ``openai-strict`` dialect: OpenAI Structured Outputs (``"strict": true``).

Source: OpenAI, "Structured Outputs" guide, section "Supported schemas"
(https://platform.openai.com/docs/guides/structured-outputs#supported-schemas), which
function calling with ``strict: true`` follows. What it says, and what this module does:

* "All fields must be required"; an optional field is emulated "by using a union type
  with null" -> every property is listed in ``required``; a property that was optional
  becomes nullable (``["string", "null"]`` for a scalar, ``anyOf`` with ``null`` for
  an object, array, union or enum without a type) and its description says that
  ``null`` means "not given".
* "additionalProperties: false must always be set in objects" -> set on every object.
* Supported keywords: ``type`` (string, number, boolean, integer, object, array),
  ``enum``, ``const``, ``anyOf``, ``properties``, ``required``,
  ``additionalProperties``, ``items``, ``description``; for strings ``pattern`` and
  ``format`` (date-time, time, date, duration, email, hostname, ipv4, ipv6, uuid); for
  numbers ``multipleOf``, ``maximum``, ``exclusiveMaximum``, ``minimum``,
  ``exclusiveMinimum``; for arrays ``minItems``, ``maxItems``. Everything else is
  dropped, and a constraint is said in words in the description instead: ``default``,
  ``examples``, ``minLength``, ``maxLength``, other ``format`` values, ``uniqueItems``,
  ``minProperties``/``maxProperties``, ``patternProperties``, ``propertyNames``,
  ``not``, ``if``/``then``/``else``, ``dependentRequired``/``dependentSchemas``
  ("Composition: allOf, not, dependentRequired, dependentSchemas, if, then, else" are
  listed as not supported).
* ``oneOf`` becomes ``anyOf``; a tuple (``prefixItems``) becomes ``items`` with the
  order said in words.
* "Definitions are supported" and "Recursive schemas are supported": a recursive
  type's ``$ref`` is kept, and its definition in ``$defs`` is converted like the rest.

Some schemas have no strict form, and :func:`to_strict` raises :class:`SchemaError`
for them: a free-form map (an object with no declared properties), a value of any type
(no ``type``), an array whose items have no schema. Strict mode must know every key
and type up front. :func:`satchel.schema.tool_definition` then serves the tool
non-strict (``"strict": false``), which OpenAI documents as a per-function choice.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from satchel._errors import SchemaError
from satchel.schema._keywords import (
    JsonObject,
    as_list,
    as_object,
    is_any_schema,
    is_null_schema,
    pointer,
    types_of,
    with_notes,
)
from satchel.schema._reshape import constraint_note, reshape

__all__ = ["STRICT_FORMATS", "STRICT_KEYWORDS", "accepts_null", "drop_strict_nulls", "to_strict"]

STRICT_FORMATS = frozenset(
    {"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}
)
"""String formats listed under "Supported string properties"."""

STRICT_KEYWORDS = frozenset(
    {
        "type",
        "description",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "enum",
        "const",
        "anyOf",
        "pattern",
        "format",
        "multipleOf",
        "maximum",
        "exclusiveMaximum",
        "minimum",
        "exclusiveMinimum",
        "minItems",
        "maxItems",
    }
)
"""Keywords the "Supported schemas" section lists (``$ref``/``$defs`` aside: satchel
keeps them only for recursive types, which the section also allows)."""

_OPTIONAL_NOTE = "Optional: null means not given."


def to_strict(schema: JsonObject) -> JsonObject:
    """Adapt a normalized schema to OpenAI strict mode.

    Raises:
        SchemaError: Part of the schema has no strict form (see the module docstring).
    """
    return _convert(schema, "", root=True)


def _unservable(path: str, what: str) -> SchemaError:
    return SchemaError(
        f"OpenAI strict mode cannot express {what} (at {path or '/'}): strict mode needs "
        f"every key and type declared. Serve this tool with the 'openai' dialect; "
        f"tool_definition(..., 'openai-strict') falls back to \"strict\": false by itself.",
        details={"dialect": "openai-strict", "path": path},
    )


def _convert(node: JsonObject, path: str, *, root: bool = False) -> JsonObject:
    if "$ref" in node:  # a recursive type, converted once in "$defs"
        ref: JsonObject = {"$ref": node["$ref"]}
        if isinstance(node.get("description"), str):
            ref["description"] = node["description"]
        return ref
    schema, notes = reshape(node)
    if is_any_schema(schema) and not root and "properties" not in schema:
        raise _unservable(path, "a value of any type")
    out: JsonObject = {}
    for key, value in schema.items():
        here = pointer(path, key)
        if key in ("properties", "$defs"):
            out[key] = {
                name: _convert(as_object(sub) or {}, pointer(here, name))
                for name, sub in (as_object(value) or {}).items()
            }
        elif key == "items":
            if (items := as_object(value)) is not None:
                out[key] = _convert(items, here)
        elif key == "anyOf":
            out[key] = [
                _convert(as_object(sub) or {}, pointer(here, i))
                for i, sub in enumerate(as_list(value) or [])
            ]
        elif key in ("additionalProperties", "required"):
            continue  # decided by _close_object
        elif key == "format" and value not in STRICT_FORMATS:
            notes.append(f"Format: {value}.")
        elif key in STRICT_KEYWORDS:
            out[key] = copy.deepcopy(value)
        elif (note := constraint_note(key, value)) is not None:
            notes.append(note)
    kinds = types_of(schema)
    if "array" in kinds and "items" not in out:
        raise _unservable(path, "an array whose items have no schema")
    if "object" in kinds or "properties" in schema or root:
        _close_object(schema, out, path, root=root)
        if "$defs" in out:  # after the properties, as the guide's examples write it
            out["$defs"] = out.pop("$defs")
    return with_notes(out, notes)


def _close_object(schema: JsonObject, out: JsonObject, path: str, *, root: bool) -> None:
    properties = as_object(out.get("properties"))
    extra = schema.get("additionalProperties")
    if properties is None:
        if (not root and extra is not False) or as_object(extra) is not None:
            raise _unservable(path, "an object with free-form keys (a map)")
        properties = {}
    required = {n for n in as_list(schema.get("required")) or [] if isinstance(n, str)}
    for name, prop in properties.items():
        if name not in required:
            properties[name] = _optional(prop)
    if "type" not in out:
        out["type"] = "object"
    out["properties"] = properties
    out["required"] = list(properties)
    out["additionalProperties"] = False


def accepts_null(schema: JsonObject) -> bool:
    """Whether ``schema`` already lets ``null`` through."""
    enum = as_list(schema.get("enum"))
    if enum is not None and None not in enum:
        return False
    if "const" in schema:
        return schema["const"] is None
    if "null" in types_of(schema) or (enum is not None and not types_of(schema)):
        return True
    return any(is_null_schema(b) for b in as_list(schema.get("anyOf")) or [])


def _optional(schema: JsonObject) -> JsonObject:
    """``schema``, also accepting ``null``, described as optional."""
    if accepts_null(schema):
        return with_notes(dict(schema), [_OPTIONAL_NOTE])
    kinds: Any = schema.get("type")
    if "anyOf" in schema:
        out = {**schema, "anyOf": [*schema["anyOf"], {"type": "null"}]}
    elif isinstance(kinds, str) and kinds not in ("object", "array") and "const" not in schema:
        out = {**schema, "type": [kinds, "null"]}
        if (values := as_list(schema.get("enum"))) is not None and None not in values:
            out["enum"] = [*values, None]
    else:
        inner = {k: v for k, v in schema.items() if k != "description"}
        out = {"anyOf": [inner, {"type": "null"}]}
        if "description" in schema:
            out["description"] = schema["description"]
    return with_notes(out, [_OPTIONAL_NOTE])


def drop_strict_nulls(arguments: Mapping[str, Any], schema: Mapping[str, Any]) -> dict[str, Any]:
    """Undo strict mode's "optional means nullable" on a model's tool-call arguments.

    Strict mode makes the model send every property, ``null`` for one it means to leave
    out (each optional property's description says "null means not given"). This
    removes each ``null`` whose property is optional in ``schema``, in nested objects and
    lists of objects too, so the arguments validate against the tool's own model (where
    ``mode: str = "w"`` does not take ``None``, and a multi-operation model may forbid
    another operation's fields). A ``null`` for a required property is kept. Meant for
    calls made under ``openai-strict``: elsewhere an explicit ``null`` for an optional
    field whose default is not ``None`` would read as "use the default".

    Args:
        arguments: The arguments a model sent.
        schema: The tool's *normalized* input schema (not the strict one).

    Returns:
        A new arguments dict; ``arguments`` is not changed.

    Example:
        >>> schema = {"type": "object", "properties": {"mode": {"type": "string"}}}
        >>> drop_strict_nulls({"mode": None}, schema)
        {}
    """
    return _drop_in_object(dict(arguments), dict(schema))


def _drop_in_object(value: JsonObject, schema: JsonObject) -> JsonObject:
    properties = as_object(schema.get("properties")) or {}
    required = set(as_list(schema.get("required")) or [])
    out: JsonObject = {}
    for key, item in value.items():
        prop = as_object(properties.get(key))
        if prop is None:
            out[key] = item
        elif item is None and key not in required:
            continue
        else:
            out[key] = _drop_in_value(item, prop)
    return out


def _drop_in_value(value: object, schema: JsonObject) -> object:
    if (obj := as_object(value)) is not None:
        for candidate in [schema, *(as_list(schema.get("anyOf")) or [])]:
            form = as_object(candidate)
            props = as_object(form.get("properties")) if form is not None else None
            if form is not None and props is not None and set(obj) <= set(props):
                return _drop_in_object(obj, form)
        return value
    if (items := as_list(value)) is not None:
        forms = [schema, *(as_list(schema.get("anyOf")) or [])]
        item_schema = next(
            (s for f in forms if (o := as_object(f)) and (s := as_object(o.get("items")))),
            None,
        )
        if item_schema is not None:
            return [_drop_in_value(item, item_schema) for item in items]
    return value
