"""Checkers: does a parameters schema obey a provider's documented rules?

Each rule has a short id and names the document it comes from. Rules for every
dialect:

* ``root-type`` -- the top level is ``{"type": "object"}``. OpenAI Structured Outputs,
  "Root objects must not be anyOf and must be an object"; OpenAI function calling API
  error "schema must be a JSON Schema of 'type: \"object\"'"; Anthropic Messages API,
  ``input_schema`` "type: object"; MCP specification, ``Tool.inputSchema`` "type:
  'object'"; Gemini ``FunctionDeclaration.parameters`` "must describe an object".
* ``root-combinator`` -- no ``anyOf``/``oneOf``/``allOf``/``enum``/``not`` at the top.
  OpenAI API error "schema must have type 'object' and not have
  'oneOf'/'anyOf'/'allOf'/'enum'/'not' at the top level"; Anthropic API error
  "input_schema does not support oneOf, allOf, or anyOf at the top level".
* ``local-ref`` -- satchel's own rule (DESIGN.md section 1, "every $ref is inlined"),
  relaxed for recursive types: a ``$ref`` only points into the top-level ``$defs``, so
  every provider gets a self-contained schema. ``no-ref`` for ``gemini``: its
  ``Schema`` has no ``$ref`` or ``$defs`` at all (recursive types are unrolled).
* ``json-schema`` -- keyword values well-formed per JSON Schema 2020-12 (MCP 2025-11-25
  "defaults to 2020-12"; Anthropic and OpenAI take JSON Schema). For ``gemini`` the same
  check covers the fields Gemini shares with JSON Schema.

``openai-strict`` and ``gemini`` rules are listed with their checkers below.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, assert_never

from satchel.schema._dialects import Dialect, require_dialect
from satchel.schema._gemini import GEMINI_FIELDS, GEMINI_FORMATS, GEMINI_TYPES, PARAMETER_NAME
from satchel.schema._keywords import (
    JsonObject,
    as_list,
    as_object,
    is_any_schema,
    iter_subschemas,
    pointer,
    types_of,
    walk,
)
from satchel.schema._recursive import reference_problems
from satchel.schema._strict import STRICT_FORMATS, STRICT_KEYWORDS
from satchel.schema._validity import schema_problems

__all__ = ["Violation", "check"]


@dataclass(frozen=True, slots=True)
class Violation:
    """One way a schema breaks a provider's rules.

    Attributes:
        path: JSON pointer to the offending schema or keyword (``""`` is the top).
        rule: Short rule id, such as ``"strict.additional-properties"``.
        message: What is wrong, in words.
    """

    path: str
    rule: str
    message: str


def check(schema: Mapping[str, Any], dialect: Dialect) -> list[Violation]:
    """Check a tool's parameters schema against one provider's documented rules.

    Args:
        schema: The parameters schema as it would be sent to the provider.
        dialect: The provider flavour; one of :data:`DIALECTS`.

    Returns:
        Every violation found, in document order; empty when the schema is fine.

    Raises:
        SatchelUsageError: ``dialect`` is unknown.

    Example:
        >>> found = check({"type": "object", "properties": {"a": {"$ref": "#/x"}}}, "mcp")
        >>> [(v.path, v.rule) for v in found]
        [('/properties/a', 'local-ref')]
    """
    return check_at(schema, require_dialect(dialect), "")


def check_at(schema: object, dialect: Dialect, base: str) -> list[Violation]:
    """:func:`check`, with every path prefixed by the JSON pointer ``base``."""
    root = as_object(schema)
    if root is None:
        return [Violation(base, "root-type", "The parameters schema must be a JSON object.")]
    found = _root_rules(root, base)
    if dialect == "gemini":
        for where, node in walk(root, base):
            for key in ("$ref", "$defs", "definitions"):
                if key in node:
                    found.append(
                        Violation(where, "no-ref", f"'{key}' found; Gemini's Schema has none.")
                    )
    else:
        found.extend(Violation(w, "local-ref", m) for w, m in reference_problems(root, base))
    match dialect:
        case "mcp" | "anthropic" | "openai":
            found.extend(_validity(root, base))
        case "openai-strict":
            found.extend(_validity(root, base))
            found.extend(_strict_rules(root, base))
        case "gemini":
            found.extend(v for v in _validity(root, base) if not v.path.endswith("/type"))
            found.extend(_gemini_rules(root, base))
        case _:
            assert_never(dialect)
    return found


def _root_rules(root: JsonObject, base: str) -> list[Violation]:
    found: list[Violation] = []
    kind = root.get("type")
    if not (kind == "object" or (isinstance(kind, str) and kind.lower() == "object")):
        found.append(
            Violation(base, "root-type", f"The top level must be type 'object', not {kind!r}.")
        )
    for key in ("anyOf", "oneOf", "allOf", "enum", "not"):
        if key in root:
            found.append(
                Violation(
                    pointer(base, key),
                    "root-combinator",
                    f"'{key}' is not allowed at the top level.",
                )
            )
    return found


def _validity(root: JsonObject, base: str) -> list[Violation]:
    return [Violation(where, "json-schema", m) for where, m in schema_problems(root, base)]


# --- openai-strict -------------------------------------------------------------------
# Source for every rule: OpenAI, "Structured Outputs", section "Supported schemas"
# (https://platform.openai.com/docs/guides/structured-outputs#supported-schemas).

_STRICT_MAX_DEPTH = 10  # "up to 10 levels of nesting"
_STRICT_MAX_PROPERTIES = 5000  # "up to 5000 object properties total"
_STRICT_MAX_STRING_TOTAL = 120_000  # names, enum values and const values, in characters
_STRICT_MAX_ENUM_VALUES = 1000  # "up to 1000 enum values across all enum properties"
_STRICT_LARGE_ENUM = 250  # a single enum with more values than this ...
_STRICT_LARGE_ENUM_CHARS = 15_000  # ... may total at most this many characters
# "title" is not in the list, but OpenAI's own SDK sends pydantic titles in strict mode.
_STRICT_TOLERATED = frozenset({"title"})


def _strict_rules(root: JsonObject, base: str) -> list[Violation]:
    found: list[Violation] = []
    totals = {"properties": 0, "enum": 0, "chars": 0}
    for where, node in walk(root, base):
        found.extend(_strict_node(node, where, totals))
    found.extend(_strict_depth(root, base, 1))
    limits = (
        ("properties", _STRICT_MAX_PROPERTIES, "strict.property-count", "object properties"),
        ("enum", _STRICT_MAX_ENUM_VALUES, "strict.enum-count", "enum values"),
        ("chars", _STRICT_MAX_STRING_TOTAL, "strict.string-size", "characters of names and values"),
    )
    for key, limit, rule, what in limits:
        if totals[key] > limit:
            found.append(Violation(base, rule, f"{totals[key]} {what}; at most {limit}."))
    return found


def _strict_node(node: JsonObject, where: str, totals: dict[str, int]) -> list[Violation]:
    found: list[Violation] = []
    if "$ref" in node:  # a recursive type: its definition in "$defs" is checked
        return [
            Violation(pointer(where, key), "strict.keyword", f"'{key}' beside '$ref'.")
            for key in node
            if key not in ("$ref", "description")
        ]
    for key in node:
        if key not in STRICT_KEYWORDS and key not in _STRICT_TOLERATED and key != "$defs":
            found.append(
                Violation(
                    pointer(where, key),
                    "strict.keyword",
                    f"'{key}' is not a keyword Structured Outputs supports.",
                )
            )
    fmt = node.get("format")
    if fmt is not None and fmt not in STRICT_FORMATS:
        found.append(
            Violation(
                pointer(where, "format"), "strict.format", f"Format {fmt!r} is not supported."
            )
        )
    kinds = types_of(node)
    if is_any_schema(node) and "properties" not in node:
        found.append(
            Violation(where, "strict.untyped", "A schema needs a type, enum, const or anyOf.")
        )
    if "array" in kinds and as_object(node.get("items")) is None:
        found.append(Violation(where, "strict.array-items", "An array needs an items schema."))
    properties = as_object(node.get("properties"))
    if "object" in kinds or properties is not None:
        if node.get("additionalProperties") is not False:
            found.append(
                Violation(
                    where,
                    "strict.additional-properties",
                    "Every object must set additionalProperties: false.",
                )
            )
        names = list(properties or {})
        required = [n for n in as_list(node.get("required")) or [] if isinstance(n, str)]
        missing = [n for n in names if n not in required]
        if missing:
            found.append(
                Violation(
                    pointer(where, "required"),
                    "strict.required",
                    f"Every property must be required; missing {', '.join(missing)}.",
                )
            )
        totals["properties"] += len(names)
        totals["chars"] += sum(len(n) for n in names)
    values = as_list(node.get("enum"))
    if values is not None:
        totals["enum"] += len(values)
        chars = sum(len(str(v)) for v in values)
        totals["chars"] += chars
        if len(values) > _STRICT_LARGE_ENUM and chars > _STRICT_LARGE_ENUM_CHARS:
            found.append(
                Violation(
                    pointer(where, "enum"),
                    "strict.enum-size",
                    f"An enum of more than {_STRICT_LARGE_ENUM} values may total at most "
                    f"{_STRICT_LARGE_ENUM_CHARS} characters; this one has {chars}.",
                )
            )
    if "const" in node:
        totals["chars"] += len(str(node["const"]))
    return found


def _strict_depth(node: JsonObject, where: str, depth: int) -> list[Violation]:
    if depth > _STRICT_MAX_DEPTH:
        return [
            Violation(
                where, "strict.depth", f"More than {_STRICT_MAX_DEPTH} levels of nested objects."
            )
        ]
    found: list[Violation] = []
    for child_path, child in iter_subschemas(node, where):
        obj = as_object(child)
        if obj is not None:
            nested = "object" in types_of(obj) or "properties" in obj
            found.extend(_strict_depth(obj, child_path, depth + 1 if nested else depth))
    return found


# --- gemini ----------------------------------------------------------------------------
# Sources: Gemini API reference, Schema (https://ai.google.dev/api/caching#Schema), and
# FunctionDeclaration; API errors quoted in satchel.schema._gemini.


def _gemini_rules(root: JsonObject, base: str) -> list[Violation]:
    found: list[Violation] = []
    for name in as_object(root.get("properties")) or {}:
        if not PARAMETER_NAME.fullmatch(name):
            found.append(
                Violation(
                    pointer(base, "properties", name),
                    "gemini.parameter-name",
                    "Parameter names must start with a letter or underscore and use only "
                    "letters, digits and underscores (64 at most).",
                )
            )
    for where, node in walk(root, base):
        found.extend(_gemini_node(node, where))
    return found


def _gemini_node(node: JsonObject, where: str) -> list[Violation]:
    found: list[Violation] = []
    for key in node:
        if key not in GEMINI_FIELDS:
            found.append(
                Violation(
                    pointer(where, key),
                    "gemini.keyword",
                    f"'{key}' is not a field of Gemini's Schema.",
                )
            )
    kind = node.get("type")
    name = kind.lower() if isinstance(kind, str) else None
    if kind is not None and name not in GEMINI_TYPES:
        found.append(
            Violation(
                pointer(where, "type"),
                "gemini.type",
                f"type must be one of {', '.join(sorted(GEMINI_TYPES))}, not {kind!r}.",
            )
        )
    if kind is None and "anyOf" not in node:
        found.append(Violation(where, "gemini.untyped", "Every schema needs a type or anyOf."))
    values = node.get("enum")
    if values is not None and not (
        (listed := as_list(values)) is not None and all(isinstance(v, str) for v in listed)
    ):
        found.append(
            Violation(pointer(where, "enum"), "gemini.enum", "enum values must be strings.")
        )
    fmt = node.get("format")
    if fmt is not None and fmt not in GEMINI_FORMATS.get(name or "", ()):
        found.append(
            Violation(
                pointer(where, "format"),
                "gemini.format",
                f"Format {fmt!r} is not supported for type {kind!r}.",
            )
        )
    if name == "array" and as_object(node.get("items")) is None:
        found.append(Violation(where, "gemini.array-items", "An array needs items."))
    properties = as_object(node.get("properties"))
    if properties is not None and not properties:
        found.append(
            Violation(
                pointer(where, "properties"),
                "gemini.empty-properties",
                "properties, when given, must be non-empty.",
            )
        )
    required = node.get("required")
    if required is not None:
        names = as_list(required) or []
        unknown = [n for n in names if n not in (properties or {})]
        if unknown or as_list(required) is None:
            found.append(
                Violation(
                    pointer(where, "required"),
                    "gemini.required",
                    f"required names properties that are not defined: {unknown}.",
                )
            )
    if "nullable" in node and not isinstance(node["nullable"], bool):
        found.append(
            Violation(pointer(where, "nullable"), "gemini.nullable", "nullable must be a boolean.")
        )
    return found
