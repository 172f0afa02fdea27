"""Property tests: random pydantic-like schemas, and arbitrary JSON, through the pipeline."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from satchel import SchemaError
from satchel.schema import (
    DIALECTS,
    check,
    check_definition,
    for_dialect,
    normalize,
    tool_definition,
)

Schema = dict[str, Any]

NAMES = st.from_regex(r"[a-z][a-z0-9_]{0,9}", fullmatch=True)
TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), max_size=12)
NUMBERS = st.integers(-1000, 1000)


def _maybe(**optional: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries({}, optional=optional)


def _with(base: Schema, extra: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[Schema]:
    return extra.map(lambda more: {**base, **more})


STRINGS = _with(
    {"type": "string"},
    _maybe(
        minLength=st.integers(0, 4),
        maxLength=st.integers(5, 80),
        pattern=st.sampled_from(["^a", "^[0-9]+$", "[A-Z]{3}"]),
        format=st.sampled_from(["date-time", "date", "uri", "email", "uuid", "ipv4"]),
        default=TEXT,
    ),
)
INTEGERS = _with(
    {"type": "integer"},
    _maybe(
        minimum=NUMBERS,
        maximum=NUMBERS,
        exclusiveMinimum=NUMBERS,
        exclusiveMaximum=NUMBERS,
        multipleOf=st.integers(1, 10),
        default=NUMBERS,
    ),
)
FLOATS = _with(
    {"type": "number"},
    _maybe(
        minimum=st.floats(-1e6, 1e6),
        exclusiveMaximum=st.floats(-1e6, 1e6),
        default=st.floats(-1e6, 1e6),
    ),
)
LEAVES = st.one_of(
    STRINGS,
    INTEGERS,
    FLOATS,
    _with({"type": "boolean"}, _maybe(default=st.booleans())),
    st.lists(TEXT, min_size=1, max_size=5, unique=True).map(
        lambda values: {"type": "string", "enum": values}
    ),
    st.lists(NUMBERS, min_size=1, max_size=4, unique=True).map(
        lambda values: {"type": "integer", "enum": values}
    ),
    TEXT.map(lambda value: {"const": value, "type": "string"}),
    st.sampled_from(
        [
            {},
            {"type": "null"},
            {"type": ["string", "null"]},
            {"type": ["integer", "string"]},
            {"const": 3},
            {"const": True},
            {"type": "object"},
            {"type": "array"},
        ]
    ),
)


def _annotated(schema: Schema, title: str | None, description: str | None) -> Schema:
    out = dict(schema)
    if title is not None:
        out["title"] = title
    if description is not None:
        out["description"] = description
    return out


def annotate(strategy: st.SearchStrategy[Schema]) -> st.SearchStrategy[Schema]:
    """Sprinkle pydantic's titles and descriptions over schemas."""
    return st.builds(_annotated, strategy, st.none() | TEXT, st.none() | TEXT)


def _object(properties: dict[str, Schema], data: st.DataObject, closed: bool) -> Schema:
    names = sorted(properties)
    required = data.draw(st.lists(st.sampled_from(names), unique=True)) if names else []
    schema: Schema = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    if closed:
        schema["additionalProperties"] = False
    return schema


def objects(children: st.SearchStrategy[Schema]) -> st.SearchStrategy[Schema]:
    return st.builds(
        _object,
        st.dictionaries(NAMES, children, max_size=4),
        st.data(),
        st.booleans(),
    )


def _extend(children: st.SearchStrategy[Schema]) -> st.SearchStrategy[Schema]:
    return annotate(
        st.one_of(
            objects(children),
            _with(
                {"type": "array"}, _maybe(minItems=st.integers(0, 2), uniqueItems=st.booleans())
            ).flatmap(lambda base: children.map(lambda items: {**base, "items": items})),
            children.map(lambda value: {"type": "object", "additionalProperties": value}),
            children.map(lambda value: {"anyOf": [value, {"type": "null"}], "default": None}),
            st.lists(children, min_size=2, max_size=3).map(lambda branches: {"anyOf": branches}),
            st.lists(children, min_size=2, max_size=3).map(lambda branches: {"oneOf": branches}),
            st.lists(children, min_size=1, max_size=3).map(
                lambda items: {
                    "type": "array",
                    "prefixItems": items,
                    "minItems": len(items),
                    "maxItems": len(items),
                }
            ),
        )
    )


VALUES = st.recursive(annotate(LEAVES), _extend, max_leaves=12)


def _with_defs(top: Schema, sub: Schema, name: str, description: str | None) -> Schema:
    ref: Schema = {"$ref": "#/$defs/Sub"}
    if description is not None:
        ref["description"] = description
    properties = {**top["properties"], name: ref}
    return {**top, "properties": properties, "$defs": {"Sub": {**sub, "title": "Sub"}}}


def _operations(variants: list[tuple[str, Schema]]) -> Schema:
    branches: list[Schema] = []
    for op, variant in variants:
        properties = {"operation": {"const": op, "type": "string", "title": "Operation"}}
        properties.update(variant["properties"])
        required = ["operation", *variant.get("required", [])]
        branches.append({**variant, "properties": properties, "required": required})
    return {"oneOf": branches, "discriminator": {"propertyName": "operation"}}


TOP_LEVEL = st.one_of(
    annotate(objects(VALUES)),
    st.builds(_with_defs, objects(VALUES), objects(VALUES), NAMES, st.none() | TEXT),
    st.lists(
        st.tuples(st.sampled_from(["read", "write", "list", "drop"]), objects(VALUES)),
        min_size=2,
        max_size=4,
        unique_by=lambda pair: pair[0],
    ).map(_operations),
)

JSON = st.recursive(
    st.none() | st.booleans() | NUMBERS | st.floats(allow_nan=False, allow_infinity=False) | TEXT,
    lambda children: (
        st.lists(children, max_size=3)
        | st.dictionaries(
            st.sampled_from(
                [
                    "type",
                    "properties",
                    "items",
                    "anyOf",
                    "oneOf",
                    "allOf",
                    "$ref",
                    "$defs",
                    "required",
                    "enum",
                    "const",
                    "title",
                    "additionalProperties",
                    "prefixItems",
                    "minLength",
                    "exclusiveMinimum",
                    "nullable",
                    "operation",
                    "not",
                ]
            )
            | TEXT,
            children,
            max_size=4,
        )
    ),
    max_leaves=20,
)
REFS = st.sampled_from(["#", "#/properties/a", "#/$defs/A", "#/$defs/A/items", "#/x", "http://x"])

SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(TOP_LEVEL)
def test_random_schemas_adapt_to_every_dialect_and_pass_its_checker(schema: Schema) -> None:
    before = copy.deepcopy(schema)
    normalized = normalize(schema)
    assert schema == before
    assert normalize(normalized) == normalized
    for dialect in DIALECTS:
        try:
            adapted = for_dialect(normalized, dialect)
        except SchemaError:
            assert dialect == "openai-strict"  # only strict may find no form
        else:
            assert check(adapted, dialect) == [], dialect
        definition = tool_definition("random_tool", "Random.", normalized, dialect)
        assert check_definition(definition, dialect) == [], dialect


@SETTINGS
@given(JSON, REFS)
def test_normalize_raises_nothing_but_schema_error_on_any_json(value: Any, ref: str) -> None:
    candidates = [value, {"type": "object", "properties": {"a": value}}]
    candidates.append({"properties": {"a": {"$ref": ref, "x": value}}, "$defs": {"A": value}})
    for candidate in candidates:
        try:
            normalized = normalize(candidate)
        except SchemaError:
            continue
        assert normalized["type"] == "object"
        assert check(normalized, "mcp") == []
