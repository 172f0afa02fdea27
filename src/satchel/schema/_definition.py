"""Each provider's tool-definition envelope, built and checked.

Shapes and their sources:

* OpenAI Chat Completions ``tools[]``: ``{"type": "function", "function": {"name",
  "description", "parameters", "strict"}}``; the name "must be a-z, A-Z, 0-9, or contain
  underscores and dashes, with a maximum length of 64".
* Anthropic Messages API ``tools[]``: ``{"name", "description", "input_schema"}``; the
  name matches ``^[a-zA-Z0-9_-]{1,64}$``.
* Gemini ``FunctionDeclaration``: ``{"name", "description", "parameters"}``; the name
  "must start with a letter or an underscore" and has at most 64 characters;
  ``parameters`` is left out for a function without parameters ("For function with no
  parameters, this can be left unset"; an empty object is refused by some versions).
* MCP ``Tool``: ``{"name", "title"?, "description", "inputSchema", "outputSchema"?,
  "annotations"?}`` with ``annotations`` holding ``readOnlyHint``,
  ``destructiveHint``, ``idempotentHint``, ``openWorldHint`` (and ``title``);
  ``outputSchema`` is an object schema at the root (MCP 2025-06-18 .. 2025-11-25).

Every dialect: satchel names match ``^[A-Za-z0-9_-]{1,64}$`` (DESIGN.md section 1),
and a definition has a non-empty description.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Final, assert_never

from satchel._errors import SatchelUsageError, SchemaError
from satchel.schema._check import Violation, check_at
from satchel.schema._dialects import Dialect, for_dialect, require_dialect
from satchel.schema._keywords import JsonObject, as_object, pointer
from satchel.schema._normalize import normalize

__all__ = ["EXAMPLES_META_KEY", "check_definition", "tool_definition"]

EXAMPLES_META_KEY: Final = "satchel/examples"
"""The ``_meta`` key of an MCP tool definition that carries the tool's example requests
(:attr:`satchel.tools.ToolSpec.examples`), so a mounted satchel keeps them."""

TOOL_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
"""satchel's rule for tool names, prefixes included (also OpenAI's and Anthropic's)."""

_GEMINI_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.:-]{0,63}")
_ANNOTATION_HINTS = {
    "read_only": "readOnlyHint",
    "destructive": "destructiveHint",
    "idempotent": "idempotentHint",
    "open_world": "openWorldHint",
}
_ENVELOPE_KEYS: Mapping[Dialect, frozenset[str]] = {
    "openai": frozenset({"name", "description", "parameters", "strict"}),
    "openai-strict": frozenset({"name", "description", "parameters", "strict"}),
    "anthropic": frozenset({"name", "description", "input_schema", "type", "cache_control"}),
    "gemini": frozenset({"name", "description", "parameters", "response", "behavior"}),
    "mcp": frozenset(
        {
            "name",
            "title",
            "description",
            "inputSchema",
            "outputSchema",
            "annotations",
            "icons",
            "_meta",
        }
    ),
}
_MCP_ANNOTATIONS = frozenset({"title", *_ANNOTATION_HINTS.values()})


def tool_definition(
    name: str,
    description: str,
    parameters: Mapping[str, Any],
    dialect: Dialect,
    *,
    output_schema: Mapping[str, Any] | None = None,
    annotations: Mapping[str, bool | None] | None = None,
    title: str | None = None,
    examples: Sequence[str] = (),
) -> dict[str, Any]:
    """A tool definition in one provider's own shape, parameters adapted to it.

    ``parameters`` goes through :func:`normalize` (a no-op on a normalized schema) and
    :func:`for_dialect`. For ``openai-strict``, a schema with no strict form (a
    free-form map, a value of any type) is served as a non-strict OpenAI function with
    ``"strict": false`` rather than refused.

    Args:
        name: Tool name, matching ``^[A-Za-z0-9_-]{1,64}$``.
        description: What the tool does, for the model.
        parameters: The input JSON schema.
        dialect: The provider flavour; one of :data:`DIALECTS`.
        output_schema: The output JSON schema; only MCP carries it (``outputSchema``).
        annotations: ``read_only``, ``destructive``, ``idempotent``, ``open_world``
            hints (``None`` values are left out); only MCP carries them.
        title: A human-readable title; only MCP carries it.
        examples: Example requests the tool serves; only MCP carries them, in
            ``_meta`` under :data:`EXAMPLES_META_KEY`.

    Returns:
        A new dict, such as ``{"type": "function", "function": {...}}`` for OpenAI.

    Raises:
        SatchelUsageError: The name is invalid (for Gemini: does not start with a letter
            or underscore), an annotation key is unknown, or ``dialect`` is unknown.
        SchemaError: A schema cannot be served (see :func:`normalize` and
            :func:`for_dialect`).

    Example:
        >>> tool_definition("ping", "Check the service.", {}, "anthropic")
        ... # doctest: +NORMALIZE_WHITESPACE
        {'name': 'ping', 'description': 'Check the service.',
         'input_schema': {'type': 'object', 'properties': {}}}
    """
    known = require_dialect(dialect)
    if not TOOL_NAME.fullmatch(name):
        raise SatchelUsageError(
            f"Tool name {name!r} is invalid: use 1 to 64 letters, digits, '_' or '-'.",
            details={"name": name},
        )
    params = normalize(parameters)
    match known:
        case "openai":
            function: JsonObject = {"name": name, "description": description}
            function["parameters"] = for_dialect(params, "openai")
            return {"type": "function", "function": function}
        case "openai-strict":
            function = {"name": name, "description": description}
            try:
                function["parameters"] = for_dialect(params, "openai-strict")
                function["strict"] = True
            except SchemaError:
                function["parameters"] = for_dialect(params, "openai")
                function["strict"] = False
            return {"type": "function", "function": function}
        case "anthropic":
            return {
                "name": name,
                "description": description,
                "input_schema": for_dialect(params, "anthropic"),
            }
        case "gemini":
            if not _GEMINI_NAME.fullmatch(name):
                raise SatchelUsageError(
                    f"Gemini requires a function name to start with a letter or underscore; "
                    f"{name!r} does not.",
                    details={"name": name, "dialect": "gemini"},
                )
            declaration: JsonObject = {"name": name, "description": description}
            adapted = for_dialect(params, "gemini")
            if adapted.get("properties"):
                declaration["parameters"] = adapted
            return declaration
        case "mcp":
            tool = _mcp_tool(name, description, params, output_schema, annotations, title)
            if examples:
                tool["_meta"] = {EXAMPLES_META_KEY: list(examples)}
            return tool
        case _:
            assert_never(known)


def _mcp_tool(
    name: str,
    description: str,
    params: JsonObject,
    output_schema: Mapping[str, Any] | None,
    annotations: Mapping[str, bool | None] | None,
    title: str | None,
) -> JsonObject:
    tool: JsonObject = {"name": name}
    if title is not None:
        tool["title"] = title
    tool["description"] = description
    tool["inputSchema"] = for_dialect(params, "mcp")
    if output_schema is not None:
        tool["outputSchema"] = for_dialect(normalize(output_schema), "mcp")
    hints: JsonObject = {}
    for key, value in (annotations or {}).items():
        if key not in _ANNOTATION_HINTS:
            raise SatchelUsageError(
                f"Unknown tool annotation {key!r}; use {', '.join(_ANNOTATION_HINTS)}.",
                details={"annotation": key},
            )
        if value is not None:
            hints[_ANNOTATION_HINTS[key]] = value
    if hints:
        tool["annotations"] = hints
    return tool


def check_definition(definition: Mapping[str, Any], dialect: Dialect) -> list[Violation]:
    """Check a whole tool definition: its envelope, name, description and schemas.

    Args:
        definition: A definition as sent to the provider (for example one made by
            :func:`tool_definition`).
        dialect: The provider flavour; one of :data:`DIALECTS`.

    Returns:
        Every violation found; empty when the definition is fine. Paths are JSON
        pointers into ``definition``.

    Raises:
        SatchelUsageError: ``dialect`` is unknown.
    """
    known = require_dialect(dialect)
    root = as_object(definition) or dict(definition)
    found: list[Violation] = []
    match known:
        case "openai" | "openai-strict":
            if root.get("type") != "function":
                found.append(
                    Violation("/type", "definition.shape", "OpenAI tools need type 'function'.")
                )
            function = as_object(root.get("function"))
            if function is None:
                return [
                    *found,
                    Violation("/function", "definition.shape", "'function' object missing."),
                ]
            found.extend(_unknown_keys(function, known, "/function"))
            found.extend(_name_and_description(function, "/function", gemini=False))
            strict = function.get("strict")
            if known == "openai-strict" and not isinstance(strict, bool):
                found.append(
                    Violation(
                        "/function/strict",
                        "definition.strict",
                        'openai-strict definitions say "strict": true (or false when the '
                        "schema has no strict form).",
                    )
                )
            rules: Dialect = "openai-strict" if strict is True else "openai"
            found.extend(_schema(function, "parameters", rules, "/function", required=True))
        case "anthropic":
            found.extend(_unknown_keys(root, known, ""))
            found.extend(_name_and_description(root, "", gemini=False))
            found.extend(_schema(root, "input_schema", known, "", required=True))
        case "gemini":
            found.extend(_unknown_keys(root, known, ""))
            found.extend(_name_and_description(root, "", gemini=True))
            found.extend(_schema(root, "parameters", known, "", required=False))
        case "mcp":
            found.extend(_unknown_keys(root, known, ""))
            found.extend(_name_and_description(root, "", gemini=False))
            found.extend(_schema(root, "inputSchema", known, "", required=True))
            found.extend(_schema(root, "outputSchema", known, "", required=False))
            found.extend(_mcp_annotations(root))
        case _:
            assert_never(known)
    return found


def _unknown_keys(envelope: JsonObject, dialect: Dialect, base: str) -> list[Violation]:
    allowed = _ENVELOPE_KEYS[dialect]
    return [
        Violation(pointer(base, key), "definition.keyword", f"Unknown definition field {key!r}.")
        for key in envelope
        if key not in allowed
    ]


def _name_and_description(envelope: JsonObject, base: str, *, gemini: bool) -> list[Violation]:
    found: list[Violation] = []
    name = envelope.get("name")
    if not isinstance(name, str) or not TOOL_NAME.fullmatch(name):
        found.append(
            Violation(
                pointer(base, "name"),
                "definition.name",
                f"Tool name {name!r} must match ^[A-Za-z0-9_-]{{1,64}}$.",
            )
        )
    elif gemini and not _GEMINI_NAME.fullmatch(name):
        found.append(
            Violation(
                pointer(base, "name"),
                "gemini.name",
                f"Gemini function names start with a letter or underscore; {name!r} does not.",
            )
        )
    description = envelope.get("description")
    if not isinstance(description, str) or not description.strip():
        found.append(
            Violation(
                pointer(base, "description"),
                "definition.description",
                "A tool needs a non-empty description: it is how the model decides to call it.",
            )
        )
    return found


def _schema(
    envelope: JsonObject, key: str, dialect: Dialect, base: str, *, required: bool
) -> list[Violation]:
    where = pointer(base, key)
    if key not in envelope:
        if required:
            return [Violation(where, "definition.shape", f"'{key}' is missing.")]
        return []
    return check_at(envelope[key], dialect, where)


def _mcp_annotations(tool: JsonObject) -> list[Violation]:
    if "annotations" not in tool:
        return []
    hints = as_object(tool["annotations"])
    if hints is None:
        return [Violation("/annotations", "mcp.annotations", "annotations must be an object.")]
    found: list[Violation] = []
    for key, value in hints.items():
        where = pointer("/annotations", key)
        if key not in _MCP_ANNOTATIONS:
            found.append(Violation(where, "mcp.annotations", f"Unknown annotation {key!r}."))
        elif key == "title" and not isinstance(value, str):
            found.append(Violation(where, "mcp.annotations", "title must be a string."))
        elif key != "title" and not isinstance(value, bool):
            found.append(Violation(where, "mcp.annotations", f"{key} must be a boolean."))
    return found
