"""Recursive types in a normalized schema: where references may stand, and unrolling.

A normalized schema holds references only for recursive types (see
:mod:`satchel.schema._normalize`): a top-level ``$defs`` object, and ``{"$ref":
"#/$defs/Name"}`` nodes pointing into it. Providers differ:

* MCP (``Tool.inputSchema`` is JSON Schema 2020-12), Anthropic (``input_schema`` is
  "JSON schema") and OpenAI take ``$defs`` and ``$ref``; OpenAI's Structured Outputs
  guide says so for strict mode too ("Definitions are supported", "Recursive schemas
  are supported").
* Gemini's ``Schema`` is "a select subset of an OpenAPI 3.0 schema object" whose
  fields (listed in :mod:`satchel.schema._gemini`) have no ``$ref``/``$defs``, so
  :func:`unroll` expands each reference to a bounded depth and ends the chain with a
  schema that still accepts the deeper value: the tool's own validation, which knows
  the real type, checks it.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Final

from satchel._errors import SchemaError
from satchel.schema._keywords import (
    SUBSCHEMA_KEYWORDS,
    SUBSCHEMA_LIST_KEYWORDS,
    SUBSCHEMA_MAP_KEYWORDS,
    JsonObject,
    add_note,
    as_list,
    as_object,
    pointer,
    types_of,
    walk,
)

__all__ = ["DEFS_PREFIX", "UNROLL_DEPTH", "recursive_refs", "reference_problems", "unroll"]

DEFS_PREFIX: Final = "#/$defs/"
"""How a reference to a recursive type starts in a normalized schema."""

UNROLL_DEPTH: Final = 3
"""How many levels of a recursive type :func:`unroll` writes out by default."""


def reference_problems(schema: Mapping[str, Any], base: str = "") -> Iterator[tuple[str, str]]:
    """``(pointer, message)`` for each reference a normalized schema may not hold: a
    ``$defs``/``definitions`` below the top, a definition that is not recursive, or a
    ``$ref`` that is not ``#/$defs/<name>`` with ``<name>`` defined at the top.
    """
    defs = as_object(schema.get("$defs")) or {}
    if "$defs" in schema and as_object(schema.get("$defs")) is None:
        yield base, "'$defs' must map names to schemas."
    on_cycle = recursive_refs(schema, lambda ref: defs.get(ref[len(DEFS_PREFIX) :]))
    for name in defs:
        if f"{DEFS_PREFIX}{name}" not in on_cycle:
            yield pointer(base, "$defs", name), f"'{name}' is not recursive: inline it."
    for where, node in walk(schema, base):
        if where != base and "$defs" in node:
            yield where, "'$defs' is only allowed at the top level."
        if "definitions" in node:
            yield where, "'definitions' is not used; recursive types go in '$defs' at the top."
        ref = node.get("$ref")
        if "$ref" not in node:
            continue
        if not isinstance(ref, str) or not ref.startswith(DEFS_PREFIX):
            yield where, f"'$ref' {ref!r} must point into '$defs' at the top (#/$defs/<name>)."
        elif ref[len(DEFS_PREFIX) :] not in defs:
            yield where, f"'$ref' {ref!r} names a type that '$defs' does not define."


def unroll(schema: Mapping[str, Any], depth: int = UNROLL_DEPTH) -> JsonObject:
    """``schema`` with every reference to a recursive type written out, ``depth`` levels
    deep, and no ``$defs`` left.

    Past ``depth`` levels, a reference becomes a schema of the recursive type's JSON
    type with no further detail (``{"type": "object"}`` for a model), described as
    nesting further; the value is still accepted there.

    Args:
        schema: A normalized schema (its references point into its top ``$defs``).
        depth: How many times one chain of references is expanded (at least 1).

    Raises:
        SchemaError: A reference points at nothing (the schema is not normalized).

    Example:
        >>> node = {"type": "object", "properties": {"kids": {"type": "array",
        ...         "items": {"$ref": "#/$defs/N"}}}}
        >>> out = unroll({**node, "$defs": {"N": node}}, depth=1)
        >>> out["properties"]["kids"]["items"]["properties"]["kids"]["items"]["type"]
        'object'
    """
    top = dict(schema)
    defs = as_object(top.pop("$defs", None)) or {}
    if not defs:
        return copy.deepcopy(top)
    return _expand(top, defs, max(1, depth), 0)


def _expand(node: JsonObject, defs: JsonObject, depth: int, level: int) -> JsonObject:
    ref = node.get("$ref")
    if isinstance(ref, str):
        name = ref[len(DEFS_PREFIX) :] if ref.startswith(DEFS_PREFIX) else None
        target = as_object(defs.get(name)) if name is not None else None
        if target is None:
            raise SchemaError(f"The $ref {ref!r} points at nothing in this schema.")
        siblings = {k: v for k, v in node.items() if k != "$ref"}
        if level >= depth:
            return _cut(target, siblings)
        merged = {**target, **siblings}  # siblings are annotations (a description)
        return _expand(merged, defs, depth, level + 1)
    out: JsonObject = {}
    for key, value in node.items():
        if key in SUBSCHEMA_KEYWORDS and (obj := as_object(value)) is not None:
            out[key] = _expand(obj, defs, depth, level)
        elif key in SUBSCHEMA_LIST_KEYWORDS and (items := as_list(value)) is not None:
            out[key] = [
                _expand(obj, defs, depth, level) if (obj := as_object(item)) is not None else item
                for item in items
            ]
        elif key in SUBSCHEMA_MAP_KEYWORDS and (mapping := as_object(value)) is not None:
            out[key] = {
                name: _expand(obj, defs, depth, level)
                if (obj := as_object(item)) is not None
                else item
                for name, item in mapping.items()
            }
        else:
            out[key] = copy.deepcopy(value)
    return out


def _cut(target: JsonObject, siblings: JsonObject) -> JsonObject:
    """Where unrolling stops: the type's JSON type and words, no structure."""
    kinds = types_of(target)
    out: JsonObject = {}
    if kinds == ["object"] or (not kinds and "properties" in target):
        out["type"] = "object"
    elif kinds == ["array"]:
        out["type"] = "array"
        out["items"] = {}
    description = siblings.get("description", target.get("description"))
    out["description"] = add_note(
        description, "Nested further: the same shape as the level above (not spelled out here)."
    )
    return out


def recursive_refs(
    root: Mapping[str, Any], lookup: Callable[[str], object | None]
) -> frozenset[str]:
    """Every local ``$ref`` used in ``root`` from which a chain of references leads back
    to itself (the first of the inliner's two passes).

    Args:
        root: A schema as written (not normalized).
        lookup: The value a reference points at, or ``None`` when it points at nothing.
    """
    return _RefGraph(root, lookup).recursive()


class _RefGraph:
    def __init__(self, root: Mapping[str, Any], lookup: Callable[[str], object | None]) -> None:
        self._lookup = lookup
        self._edges: dict[str, set[str]] = {}
        pending = _refs_in(root)
        while pending:
            ref = pending.pop()
            if ref in self._edges:
                continue
            target = lookup(ref)
            self._edges[ref] = _refs_in(target) if target is not None else set()
            pending |= self._edges[ref] - self._edges.keys()

    def recursive(self) -> frozenset[str]:
        """Every reference from which a chain of references leads back to itself."""
        found: set[str] = set()
        for start in self._edges:
            seen: set[str] = set()
            frontier = set(self._edges[start])
            while frontier:
                ref = frontier.pop()
                if ref == start:
                    found.add(start)
                    break
                if ref not in seen:
                    seen.add(ref)
                    frontier |= self._edges.get(ref, set())
        return frozenset(found)


def _refs_in(node: object) -> set[str]:
    """The ``$ref`` strings a schema uses (not following them), where the inliner looks."""
    found: set[str] = set()
    stack = [node]
    while stack:
        obj = as_object(stack.pop())
        if obj is None:
            continue
        ref = obj.get("$ref")
        if isinstance(ref, str) and ref.startswith("#"):
            found.add(ref)
        for key, value in obj.items():
            if key in ("$defs", "definitions"):
                continue
            if key in SUBSCHEMA_KEYWORDS or key == "additionalItems":
                stack.extend(as_list(value) or [value])
            elif key in SUBSCHEMA_LIST_KEYWORDS:
                stack.extend(as_list(value) or [])
            elif key in SUBSCHEMA_MAP_KEYWORDS:
                stack.extend((as_object(value) or {}).values())
    return found
