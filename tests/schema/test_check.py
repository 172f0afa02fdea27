"""The checkers catch hand-written schemas that break each provider's rules."""

from __future__ import annotations

from typing import Any

import pytest

from satchel import SatchelUsageError
from satchel.schema import DIALECTS, Dialect, Violation, check, check_definition, for_dialect


def _rules(schema: Any, dialect: Dialect) -> set[str]:
    return {v.rule for v in check(schema, dialect)}


GOOD: dict[Dialect, dict[str, Any]] = {
    "mcp": {"type": "object", "properties": {"q": {"type": "string", "default": "x"}}},
    "anthropic": {"type": "object", "properties": {"q": {"type": "string"}}},
    "openai": {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]},
    "openai-strict": {
        "type": "object",
        "properties": {"q": {"type": ["string", "null"], "format": "date"}},
        "required": ["q"],
        "additionalProperties": False,
    },
    "gemini": {
        "type": "object",
        "properties": {"q": {"type": "string", "nullable": True, "format": "date-time"}},
        "required": ["q"],
    },
}


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_good_schema_has_no_violations(dialect: Dialect) -> None:
    assert check(GOOD[dialect], dialect) == []


_INTO_DEFS = {
    "type": "object",
    "properties": {"a": {"$ref": "#/$defs/A"}},
    "$defs": {"A": {"type": "object", "properties": {"next": {"$ref": "#/$defs/A"}}}},
}


@pytest.mark.parametrize("dialect", ["mcp", "openai", "openai-strict", "anthropic"])
def test_a_ref_into_the_top_level_defs_is_accepted_where_the_provider_takes_refs(
    dialect: Dialect,
) -> None:
    assert check(for_dialect(_INTO_DEFS, dialect), dialect) == []


def test_gemini_takes_no_ref_or_defs_at_all() -> None:
    found = check(_INTO_DEFS, "gemini")
    assert Violation("/properties/a", "no-ref", "'$ref' found; Gemini's Schema has none.") in found
    assert Violation("", "no-ref", "'$defs' found; Gemini's Schema has none.") in found


@pytest.mark.parametrize("dialect", ["mcp", "openai", "openai-strict", "anthropic"])
def test_a_dangling_ref_or_nested_defs_is_caught(dialect: Dialect) -> None:
    dangling = {"type": "object", "properties": {"a": {"$ref": "#/$defs/B"}}, "$defs": {}}
    elsewhere = {"type": "object", "properties": {"a": {"$ref": "#/properties/b"}}}
    nested = {
        "type": "object",
        "properties": {"a": {"type": "object", "$defs": {"A": {"type": "string"}}}},
    }
    not_recursive = {
        "type": "object",
        "properties": {"a": {"$ref": "#/$defs/A"}},
        "$defs": {"A": {"type": "string"}},
    }
    assert ("/$defs/A", "local-ref") in [(v.path, v.rule) for v in check(not_recursive, dialect)]
    assert ("/properties/a", "local-ref") in [(v.path, v.rule) for v in check(dangling, dialect)]
    assert ("/properties/a", "local-ref") in [(v.path, v.rule) for v in check(elsewhere, dialect)]
    assert ("/properties/a", "local-ref") in [(v.path, v.rule) for v in check(nested, dialect)]


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_top_level_that_is_not_an_object_is_caught(dialect: Dialect) -> None:
    assert "root-type" in _rules({"type": "string"}, dialect)
    assert "root-type" in _rules({"anyOf": [{"type": "object"}]}, dialect)
    assert "root-combinator" in _rules({"type": "object", "oneOf": [{}, {}]}, dialect)


@pytest.mark.parametrize("dialect", ["mcp", "anthropic", "openai"])
def test_malformed_json_schema_is_caught(dialect: Dialect) -> None:
    schema = {"type": "object", "properties": {"a": {"type": "text", "minLength": -1}}}
    found = check(schema, dialect)
    assert {v.path for v in found} == {"/properties/a/type", "/properties/a/minLength"}
    assert {v.rule for v in found} == {"json-schema"}


def test_strict_catches_a_missing_additional_properties_and_required() -> None:
    schema = {
        "type": "object",
        "properties": {
            "a": {"type": "string"},
            "b": {"type": "object", "properties": {"c": {"type": "integer"}}, "required": ["c"]},
        },
        "required": ["a"],
        "additionalProperties": False,
    }
    found = check(schema, "openai-strict")
    assert [(v.path, v.rule) for v in found] == [
        ("/required", "strict.required"),
        ("/properties/b", "strict.additional-properties"),
    ]


def test_strict_catches_unsupported_keywords_formats_and_untyped_values() -> None:
    schema = {
        "type": "object",
        "properties": {
            "a": {"type": "string", "minLength": 1, "format": "uri", "default": "x"},
            "b": {"description": "anything"},
            "c": {"type": "array"},
            "d": {"allOf": [{"type": "string"}]},
        },
        "required": ["a", "b", "c", "d"],
        "additionalProperties": False,
    }
    found = {(v.path, v.rule) for v in check(schema, "openai-strict")}
    assert found == {
        ("/properties/a/minLength", "strict.keyword"),
        ("/properties/a/default", "strict.keyword"),
        ("/properties/a/format", "strict.format"),
        ("/properties/b", "strict.untyped"),
        ("/properties/c", "strict.array-items"),
        ("/properties/d/allOf", "strict.keyword"),
    }


def _nested(depth: int) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(depth):
        schema = {
            "type": "object",
            "properties": {"x": schema},
            "required": ["x"],
            "additionalProperties": False,
        }
    return schema


def test_strict_allows_ten_levels_of_nesting_and_no_more() -> None:
    assert check(_nested(10), "openai-strict") == []
    assert "strict.depth" in _rules(_nested(11), "openai-strict")


def test_strict_catches_too_many_enum_values_and_properties() -> None:
    big = {f"p{i}": {"type": "string", "enum": ["a", "b"]} for i in range(501)}
    schema = {
        "type": "object",
        "properties": big,
        "required": list(big),
        "additionalProperties": False,
    }
    assert _rules(schema, "openai-strict") == {"strict.enum-count"}
    many = {f"p{i}": {"type": "integer"} for i in range(5001)}
    schema = {
        "type": "object",
        "properties": many,
        "required": list(many),
        "additionalProperties": False,
    }
    assert _rules(schema, "openai-strict") == {"strict.property-count"}


def test_strict_catches_a_long_enum_of_long_strings() -> None:
    values = [f"{i:03d}" + "x" * 60 for i in range(251)]
    schema = {
        "type": "object",
        "properties": {"e": {"type": "string", "enum": values}},
        "required": ["e"],
        "additionalProperties": False,
    }
    assert _rules(schema, "openai-strict") == {"strict.enum-size"}


def test_gemini_catches_keywords_outside_its_schema_subset() -> None:
    schema = {
        "type": "object",
        "properties": {
            "a": {"type": "object", "properties": {"b": {"type": "string"}}},
            "m": {"type": "object", "additionalProperties": {"type": "integer"}},
            "c": {"const": "x", "type": "string"},
            "u": {"oneOf": [{"type": "string"}, {"type": "integer"}]},
        },
        "additionalProperties": False,
    }
    found = {(v.path, v.rule) for v in check(schema, "gemini")}
    assert found == {
        ("/additionalProperties", "gemini.keyword"),
        ("/properties/m/additionalProperties", "gemini.keyword"),
        ("/properties/c/const", "gemini.keyword"),
        ("/properties/u/oneOf", "gemini.keyword"),
        ("/properties/u", "gemini.untyped"),
    }


def test_gemini_catches_types_enums_formats_and_shapes_it_refuses() -> None:
    schema = {
        "type": "object",
        "properties": {
            "t": {"type": ["string", "null"]},
            "e": {"type": "integer", "enum": [1, 2]},
            "f": {"type": "string", "format": "uri"},
            "a": {"type": "array"},
            "o": {"type": "object", "properties": {}},
            "r": {"type": "object", "properties": {"x": {"type": "string"}}, "required": ["y"]},
            "bad-name": {"type": "string"},
        },
    }
    found = {(v.path, v.rule) for v in check(schema, "gemini")}
    assert found == {
        ("/properties/t/type", "gemini.type"),
        ("/properties/e/enum", "gemini.enum"),
        ("/properties/f/format", "gemini.format"),
        ("/properties/a", "gemini.array-items"),
        ("/properties/o/properties", "gemini.empty-properties"),
        ("/properties/r/required", "gemini.required"),
        ("/properties/bad-name", "gemini.parameter-name"),
    }


def test_check_definition_catches_a_bad_envelope_name_and_description() -> None:
    definition = {
        "type": "function",
        "function": {"name": "bad name!", "description": "", "parameters": {"type": "object"}},
    }
    rules = {v.rule for v in check_definition(definition, "openai")}
    assert rules == {"definition.name", "definition.description"}
    assert {v.rule for v in check_definition({"name": "x"}, "anthropic")} == {
        "definition.description",
        "definition.shape",
    }


def test_check_definition_checks_the_schema_inside_with_paths_into_the_definition() -> None:
    definition = {
        "name": "t",
        "description": "T.",
        "input_schema": {"type": "object", "properties": {"a": {"$ref": "#/x"}}},
    }
    assert [(v.path, v.rule) for v in check_definition(definition, "anthropic")] == [
        ("/input_schema/properties/a", "local-ref")
    ]


def test_check_definition_wants_an_explicit_strict_flag_for_openai_strict() -> None:
    definition = {
        "type": "function",
        "function": {"name": "t", "description": "T.", "parameters": GOOD["openai-strict"]},
    }
    assert {v.rule for v in check_definition(definition, "openai-strict")} == {"definition.strict"}


def test_check_definition_catches_gemini_names_and_mcp_annotations() -> None:
    gemini = {"name": "9lives", "description": "Cats.", "parameters": GOOD["gemini"]}
    assert {v.rule for v in check_definition(gemini, "gemini")} == {"gemini.name"}
    mcp = {
        "name": "t",
        "description": "T.",
        "inputSchema": {"type": "object"},
        "outputSchema": {"type": "array"},
        "annotations": {"readOnlyHint": "yes", "dangerHint": True},
        "extra": 1,
    }
    found = {(v.path, v.rule) for v in check_definition(mcp, "mcp")}
    assert found == {
        ("/extra", "definition.keyword"),
        ("/outputSchema", "root-type"),
        ("/annotations/readOnlyHint", "mcp.annotations"),
        ("/annotations/dangerHint", "mcp.annotations"),
    }


def test_an_unknown_dialect_is_a_usage_error() -> None:
    with pytest.raises(SatchelUsageError):
        check({"type": "object"}, "llama")  # type: ignore[arg-type]
