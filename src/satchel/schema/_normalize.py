"""Normalization: one self-contained object schema out of pydantic's (or a human's) output.

``normalize`` inlines every ``$ref`` that is not part of a cycle, strips ``title``
keywords and other keywords no provider needs (``$schema``, ``$id``, ``$comment``,
``discriminator``), upgrades a few draft-04/07 spellings to 2020-12 (tuple ``items``,
boolean ``exclusiveMinimum``, boolean ``required`` inside a property), merges ``allOf``
and one-branch unions, and turns a discriminated union on ``operation`` into one flat
object. Multi-operation flattening lives in :mod:`satchel.schema._operations`.

Recursive types (a tree node whose ``children`` are nodes, a JSON value that holds JSON
values) cannot be inlined. They are kept as the one place a normalized schema may hold
references: a top-level ``$defs`` with each recursive type, and ``{"$ref":
"#/$defs/Name"}`` wherever one is used. MCP, Anthropic and OpenAI (strict mode too)
accept that; :func:`satchel.schema.unroll` expands it to a bounded depth for dialects
that take no references (Gemini). Two passes make this idempotent: the first finds
which references lie on a cycle, the second inlines every other one.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from typing import Any, cast
from urllib.parse import unquote

from satchel._errors import SchemaError
from satchel.schema._keywords import (
    SUBSCHEMA_KEYWORDS,
    SUBSCHEMA_LIST_KEYWORDS,
    SUBSCHEMA_MAP_KEYWORDS,
    JsonObject,
    as_list,
    as_object,
    canonical,
    is_null_schema,
    json_text,
    pointer,
    types_of,
    walk,
)
from satchel.schema._operations import (
    OperationInfo,
    flatten_operations,
    operation_infos,
    union_variants,
)
from satchel.schema._recursive import recursive_refs
from satchel.schema._validity import schema_problems

__all__ = ["inline", "merge", "normalize", "operations", "strip_top_null"]

# Keywords removed everywhere: identifiers and annotations no provider needs. "title"
# is removed as a keyword only; a *property* called "title" lives under "properties"
# and is never touched.
_DROPPED = frozenset(
    {
        "title",
        "$schema",
        "$id",
        "$defs",
        "definitions",
        "$comment",
        "$anchor",
        "$dynamicAnchor",
        "discriminator",
    }
)
# Subschema keywords where a boolean schema is kept as it is (it reads naturally there).
_BOOLEAN_KEPT = frozenset(
    {"additionalProperties", "unevaluatedProperties", "unevaluatedItems", "items"}
)
# Annotations: when two schemas are merged, the outer one's value wins.
_ANNOTATIONS = frozenset(
    {"description", "default", "examples", "deprecated", "readOnly", "writeOnly"}
)
_LOWER_BOUNDS = frozenset(
    {"minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties", "minContains"}
)
_UPPER_BOUNDS = frozenset(
    {"maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties", "maxContains"}
)
_NEVER: JsonObject = {"not": {}}
_MAX_NODES = 50_000


def normalize(schema: Mapping[str, Any]) -> dict[str, Any]:
    """Make a tool's input schema self-contained and provider-neutral.

    The input is what pydantic's ``model_json_schema()`` or ``TypeAdapter.json_schema()``
    produces for a tool's input (a model, or an ``Annotated`` union discriminated on a
    field named ``operation``), or a hand-written JSON schema such as an MCP server's
    ``inputSchema``. The output:

    * has every ``$ref`` inlined, except references to a recursive type, which point
      into a top-level ``$defs`` holding only such types (see the module docstring);
    * has no ``title`` keyword anywhere (properties *named* ``title`` stay);
    * is ``{"type": "object", "properties": {...}, ...}`` at the top level;
    * has a discriminated union on ``operation`` flattened into one object whose
      ``operation`` property is a required string enum of every operation (see
      :func:`operations` for the per-operation facts);
    * is well-formed JSON Schema 2020-12.

    The input is never mutated.

    Args:
        schema: The JSON schema of a tool's input.

    Returns:
        A new normalized schema dict.

    Raises:
        SchemaError: The schema is a union or non-object at the top level, has a
            non-local or dangling ``$ref``, or is not well-formed JSON Schema.

    Example:
        >>> normalize({"title": "In", "type": "object",
        ...            "properties": {"title": {"title": "Title", "type": "string"}}})
        {'type': 'object', 'properties': {'title': {'type': 'string'}}}
    """
    top = strip_top_null(inline(schema))
    defs = top.pop("$defs", None)
    variants = union_variants(top)
    result = flatten_operations(top, variants) if variants is not None else _object_top(top)
    if defs is not None:
        result["$defs"] = defs
    problems = list(schema_problems(result))
    if problems:
        listed = "; ".join(f"{where or '/'}: {message}" for where, message in problems[:5])
        raise SchemaError(
            f"The schema is not well-formed JSON Schema: {listed}.",
            details={"problems": [{"path": p, "message": m} for p, m in problems]},
        )
    return result


def operations(schema: Mapping[str, Any]) -> dict[str, OperationInfo]:
    """Each operation of a multi-operation input, read from the exact union.

    Give it the *original* schema (before :func:`normalize`), so a caller can name the
    operation and the missing field when a call fails validation against the union.

    Args:
        schema: The JSON schema of a tool's input, as pydantic produced it.

    Returns:
        Operation name -> :class:`OperationInfo`, in union order; empty when the input is
        not a union discriminated on ``operation`` (an ordinary object, or an already
        normalized schema).

    Raises:
        SchemaError: As :func:`normalize` does.

    Example:
        >>> union = {"oneOf": [
        ...     {"properties": {"operation": {"const": "get"}, "id": {}}, "required": ["id"]},
        ...     {"properties": {"operation": {"const": "list"}}},
        ... ]}
        >>> operations(union)["get"]
        OperationInfo(name='get', fields=('id',), required=('id',), description=None)
    """
    top = strip_top_null(inline(schema))
    top.pop("$defs", None)
    variants = union_variants(top)
    return {} if variants is None else operation_infos(variants)


def inline(schema: Mapping[str, Any]) -> JsonObject:
    """Inline every ``$ref`` in ``schema`` and tidy it, without touching its top level.

    References to a recursive type stay references; the types they name are returned
    in a ``$defs`` object at the top (absent when nothing is recursive).

    Raises:
        SchemaError: As :func:`normalize` does for references and malformed values.
    """
    if not isinstance(cast(object, schema), Mapping):
        raise SchemaError(f"A schema must be a JSON object, not {type(schema).__name__}.")
    root = dict(schema)
    inliner = _Inliner(root)
    try:
        result = inliner.run()
    except RecursionError as exc:
        raise SchemaError("The schema is nested too deeply to normalize.") from exc
    if inliner.defs:
        result["$defs"] = dict(sorted(inliner.defs.items()))
    for _, node in walk(result):
        if isinstance(node.get("required"), bool):  # draft-03 flag nobody lifted
            del node["required"]
    return result


def strip_top_null(top: JsonObject) -> JsonObject:
    """Drop a ``null`` alternative at the top level (tool arguments are never null)."""
    kinds = top.get("type")
    if (listed := as_list(kinds)) is not None and "null" in listed:
        rest = [k for k in listed if k != "null"]
        top = {**top, "type": rest[0] if len(rest) == 1 else rest}
    for key in ("anyOf", "oneOf"):
        branches = as_list(top.get(key))
        if branches is None:
            continue
        kept = [b for b in branches if not is_null_schema(b)]
        if len(kept) == len(branches) or not kept:
            continue
        rest = {k: v for k, v in top.items() if k != key}
        if len(kept) == 1 and (only := as_object(kept[0])) is not None:
            top = _simplify(merge(rest, only, "/"), "/")
        else:
            top = {**rest, key: kept}
    return top


def _object_top(top: JsonObject) -> JsonObject:
    kinds = types_of(top)
    if "type" in top and kinds != ["object"]:
        raise SchemaError(
            f"A tool's input schema must describe a JSON object at the top level, but this "
            f"one has type {json_text(top['type'])}. Put the value in a model with one field "
            f"(for example {{'value': ...}}).",
            details={"type": top["type"]},
        )
    for key in ("enum", "const", "not"):
        if key in top:
            raise SchemaError(
                f"A tool's input schema cannot use '{key}' at the top level: OpenAI and "
                f"Anthropic reject it there. Move the constraint onto a property."
            )
    result: JsonObject = {"type": "object"}
    if "description" in top:
        result["description"] = top["description"]
    result["properties"] = top.get("properties", {})
    result.update((k, v) for k, v in top.items() if k not in result and k != "type")
    return result


class _Inliner:
    """Expands every ``$ref`` that is not on a cycle; keeps the others as references
    into ``defs`` (see the module docstring)."""

    def __init__(self, root: JsonObject) -> None:
        self._root = root
        self._cache: dict[str, JsonObject] = {}
        self._nodes = 0
        self._recursive = recursive_refs(root, self._lookup_or_none)
        self._names: dict[str, str] = {}
        self.defs: dict[str, JsonObject] = {}

    def run(self) -> JsonObject:
        return self._schema(self._root, ("#",), "", top=True)

    def _schema(
        self, node: object, stack: tuple[str, ...], where: str, *, top: bool = False
    ) -> JsonObject:
        self._nodes += 1
        if self._nodes > _MAX_NODES:
            raise SchemaError(
                f"Inlining this schema's references would produce more than {_MAX_NODES} "
                f"subschemas; simplify the model."
            )
        if node is True:
            return {}
        if node is False:
            return copy.deepcopy(_NEVER)
        obj = as_object(node)
        if obj is None:
            raise SchemaError(
                f"Expected a schema (a JSON object) at {where or '/'}, found "
                f"{json_text(node)[:60]}."
            )
        if "$ref" in obj:
            target = self._deref(obj["$ref"], stack, where, top=top)
            rest = {k: v for k, v in obj.items() if k != "$ref"}
            own = self._schema(rest, stack, where) if rest else {}
            return _simplify(merge(own, target, where), where) if own else target
        out: JsonObject = {}
        tuple_form = False
        for key, value in obj.items():
            if key in _DROPPED or key == "additionalItems":
                continue
            here = pointer(where, key)
            if key == "items" and (items := as_list(value)) is not None:
                out["prefixItems"] = [
                    self._schema(item, stack, pointer(here, i)) for i, item in enumerate(items)
                ]
                tuple_form = True
            elif key in SUBSCHEMA_KEYWORDS:
                if isinstance(value, bool) and key in _BOOLEAN_KEPT:
                    if not (key == "items" and value):  # "items": true says nothing
                        out[key] = value
                else:
                    out[key] = self._schema(value, stack, here)
            elif key in SUBSCHEMA_LIST_KEYWORDS:
                items = as_list(value)
                if items is None:
                    raise SchemaError(f"'{key}' at {where or '/'} must be a list of schemas.")
                out[key] = [
                    self._schema(item, stack, pointer(here, i)) for i, item in enumerate(items)
                ]
            elif key in SUBSCHEMA_MAP_KEYWORDS:
                mapping = as_object(value)
                if mapping is None:
                    raise SchemaError(f"'{key}' at {where or '/'} must map names to schemas.")
                out[key] = {
                    name: self._schema(item, stack, pointer(here, name))
                    for name, item in mapping.items()
                }
            else:
                out[key] = copy.deepcopy(value)
        if tuple_form and "additionalItems" in obj:
            extra = obj["additionalItems"]
            out["items"] = (
                extra
                if isinstance(extra, bool)
                else self._schema(extra, stack, pointer(where, "additionalItems"))
            )
        _lift_boolean_required(out)
        return _simplify(out, where)

    def _deref(
        self, ref: object, stack: tuple[str, ...], where: str, *, top: bool = False
    ) -> JsonObject:
        if not isinstance(ref, str):
            raise SchemaError(f"'$ref' at {where or '/'} must be a string.")
        if not ref.startswith("#"):
            raise SchemaError(
                f"Cannot inline the $ref {ref!r} at {where or '/'}: only references inside "
                f"the same schema ('#/...') are supported."
            )
        if ref in self._recursive:
            name = self._define(ref, stack, where)
            # The top level must be an object, not a reference: it gets a copy.
            return copy.deepcopy(self.defs[name]) if top else {"$ref": f"#/$defs/{name}"}
        if ref in stack:  # unreachable: every ref on a cycle is recursive; kept as a guard
            raise SchemaError(f"The $ref {ref!r} at {where or '/'} refers to itself.")
        cached = self._cache.get(ref)
        if cached is None:
            cached = self._schema(self._lookup(ref, where), (*stack, ref), ref[1:])
            self._cache[ref] = cached
        return copy.deepcopy(cached)

    def _define(self, ref: str, stack: tuple[str, ...], where: str) -> str:
        """The ``$defs`` name of the recursive type ``ref``, defining it on first use."""
        name = self._names.get(ref)
        if name is not None:
            return name
        base = _DEF_NAME.sub("_", self._type_name(ref)).strip("_") or "Type"
        name, n = base, 1
        while name in self.defs:
            n += 1
            name = f"{base}{n}"
        self._names[ref] = name
        self.defs[name] = {}  # reserved: a reference back to it while it is built
        self.defs[name] = self._schema(self._lookup(ref, where), (*stack, ref), ref[1:])
        return name

    def _lookup_or_none(self, ref: str) -> object | None:
        try:
            return self._lookup(ref, "")
        except SchemaError:
            return None

    def _lookup(self, ref: str, where: str) -> object:
        fragment = unquote(ref[1:])
        if not fragment:
            return self._root
        if not fragment.startswith("/"):
            raise SchemaError(
                f"Cannot inline the $ref {ref!r} at {where or '/'}: anchors are not "
                f"supported, only JSON pointers."
            )
        node: object = self._root
        for raw in fragment[1:].split("/"):
            token = raw.replace("~1", "/").replace("~0", "~")
            obj = as_object(node)
            items = as_list(node)
            if obj is not None and token in obj:
                node = obj[token]
            elif (
                items is not None
                and token.isascii()
                and token.isdigit()
                and int(token) < len(items)
            ):
                node = items[int(token)]
            else:
                raise SchemaError(
                    f"The $ref {ref!r} at {where or '/'} points at nothing in this schema."
                )
        return node

    def _type_name(self, ref: str) -> str:
        for prefix in ("#/$defs/", "#/definitions/"):
            if ref.startswith(prefix) and "/" not in ref[len(prefix) :]:
                return unquote(ref[len(prefix) :]).replace("~1", "/").replace("~0", "~")
        if ref == "#":
            title = self._root.get("title")
            return title if isinstance(title, str) else "Root"
        return ref.rsplit("/", 1)[-1]


_DEF_NAME = re.compile(r"[^A-Za-z0-9_.-]+")


def _lift_boolean_required(out: JsonObject) -> None:
    """Draft-03 wrote ``"required": true`` inside a property; move it to the parent."""
    properties = as_object(out.get("properties"))
    if properties is None:
        return
    lifted: list[str] = []
    for name, prop in properties.items():
        obj = as_object(prop)
        if obj is not None and isinstance(obj.get("required"), bool) and obj.pop("required"):
            lifted.append(name)
    if lifted:
        current = as_list(out.get("required")) or []
        out["required"] = [*current, *(n for n in lifted if n not in current)]


def _simplify(out: JsonObject, where: str) -> JsonObject:
    """Tidy one schema whose subschemas are already normalized."""
    for key in ("anyOf", "oneOf"):
        branches = as_list(out.get(key))
        if branches is None:
            continue
        kept: list[Any] = []
        seen: set[str] = set()
        for branch in branches:
            text = canonical(branch)
            if branch == _NEVER or text in seen:
                continue
            seen.add(text)
            kept.append(branch)
        if len(kept) == 1 and (only := as_object(kept[0])) is not None:
            rest = {k: v for k, v in out.items() if k != key}
            return _simplify(merge(rest, only, where), where)
        if kept:
            out[key] = kept
        else:  # a union of nothing accepts nothing
            del out[key]
            out["not"] = {}
    parts = as_list(out.get("allOf"))
    if parts is not None:
        merged = {k: v for k, v in out.items() if k != "allOf"}
        for part in parts:
            obj = as_object(part)
            if obj is not None:
                merged = merge(merged, obj, where)
        return _simplify(merged, where)
    for bound, exclusive in (("minimum", "exclusiveMinimum"), ("maximum", "exclusiveMaximum")):
        flag = out.get(exclusive)
        if isinstance(flag, bool):  # draft-04 spelling
            del out[exclusive]
            if flag and bound in out:
                out[exclusive] = out.pop(bound)
    _openapi_nullable(out)
    kinds = as_list(out.get("type"))
    if kinds is not None:
        unique = list(dict.fromkeys(k for k in kinds if isinstance(k, str)))
        if len(unique) == len(kinds):
            out["type"] = unique[0] if len(unique) == 1 else unique
    required = out.get("required")
    if (names := as_list(required)) is not None:
        if not names:
            del out["required"]
        elif all(isinstance(n, str) for n in names):
            out["required"] = list(dict.fromkeys(names))
    return out


def _openapi_nullable(out: JsonObject) -> None:
    """OpenAPI 3.0 writes ``"nullable": true``; JSON Schema adds ``null`` to the type."""
    if "nullable" not in out:
        return
    if out.pop("nullable") is not True:
        return
    kind = out.get("type")
    if isinstance(kind, str) and kind != "null":
        out["type"] = [kind, "null"]
    elif (kinds := as_list(kind)) is not None and "null" not in kinds:
        out["type"] = [*kinds, "null"]
    elif (branches := as_list(out.get("anyOf"))) is not None and not any(
        is_null_schema(b) for b in branches
    ):
        out["anyOf"] = [*branches, {"type": "null"}]
    values = as_list(out.get("enum"))
    if values is not None and None not in values:
        out["enum"] = [*values, None]


def merge(outer: JsonObject, inner: JsonObject, where: str) -> JsonObject:
    """Both schemas at once (their conjunction), written as one schema.

    Annotations such as ``description`` and ``default`` keep ``outer``'s value.

    Raises:
        SchemaError: The two set one keyword to values that cannot be combined.
    """
    out = dict(outer)
    for key, value in inner.items():
        if key not in out or key in _ANNOTATIONS:
            out.setdefault(key, value)
            continue
        mine = out[key]
        if mine == value:
            continue
        if (
            key == "properties"
            and (a := as_object(mine)) is not None
            and (b := as_object(value)) is not None
        ):
            props = dict(a)
            for name, sub in b.items():
                left, right = as_object(props.get(name)), as_object(sub)
                if left is not None and right is not None:
                    props[name] = merge(left, right, pointer(where, "properties", name))
                else:
                    props.setdefault(name, sub)
            out[key] = props
        elif key == "required" and (a := as_list(mine)) is not None:
            out[key] = list(dict.fromkeys([*a, *(as_list(value) or [])]))
        elif key == "type":
            out[key] = _merge_types(mine, value, where)
        elif key in _LOWER_BOUNDS and _both_numbers(mine, value):
            out[key] = max(mine, value)
        elif key in _UPPER_BOUNDS and _both_numbers(mine, value):
            out[key] = min(mine, value)
        else:
            raise SchemaError(
                f"Cannot combine two schemas at {where or '/'} (allOf or a one-branch "
                f"union): they set '{key}' to {json_text(mine)[:60]} and "
                f"{json_text(value)[:60]}. Write the combined schema by hand."
            )
    return out


def _both_numbers(a: object, b: object) -> bool:
    return all(isinstance(v, int | float) and not isinstance(v, bool) for v in (a, b))


def _merge_types(a: object, b: object, where: str) -> object:
    left = [a] if isinstance(a, str) else as_list(a) or []
    right = [b] if isinstance(b, str) else as_list(b) or []
    both = [t for t in left if t in right]
    if "integer" in left and "number" in right and "integer" not in both:
        both.append("integer")
    if "number" in left and "integer" in right and "integer" not in both:
        both.append("integer")
    if not both:
        raise SchemaError(
            f"Cannot combine two schemas at {where or '/'}: their types "
            f"{json_text(a)} and {json_text(b)} have nothing in common."
        )
    return both[0] if len(both) == 1 else both
