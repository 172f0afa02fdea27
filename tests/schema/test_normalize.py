"""normalize(): self-contained object schemas from pydantic and hand-written input."""

from __future__ import annotations

import copy
import json
import re
from typing import Any, Optional

import jsonschema
import pytest
from pydantic import BaseModel, Field, TypeAdapter

from satchel import SchemaError
from satchel.schema import normalize


class Address(BaseModel):
    """A postal address."""

    street: str
    city: str


class Person(BaseModel):
    name: str
    home: Address
    work: Address | None = Field(default=None, description="Office address, if any")
    past: list[Address] = []


class Book(BaseModel):
    title: str = Field(description="The book's title")
    subtitle: str | None = None


class Node(BaseModel):
    label: str
    children: list[Node] = []


class Employee(BaseModel):
    name: str
    manager: Optional[Manager] = None  # noqa: UP045 - a forward reference on purpose


class Manager(BaseModel):
    name: str
    reports: list[Employee]


def _text(schema: dict[str, Any]) -> str:
    return json.dumps(schema)


def test_refs_are_inlined_and_defs_removed() -> None:
    result = normalize(Person.model_json_schema())
    assert "$ref" not in _text(result)
    assert "$defs" not in result
    assert result["properties"]["home"]["properties"]["city"] == {"type": "string"}
    assert result["properties"]["past"]["items"]["required"] == ["street", "city"]


def test_a_field_description_overrides_the_referenced_models_docstring() -> None:
    work = normalize(Person.model_json_schema())["properties"]["work"]
    assert work["description"] == "Office address, if any"
    assert work["anyOf"][0]["description"] == "A postal address."


def test_title_keyword_is_stripped_but_a_property_named_title_is_kept() -> None:
    result = normalize(Book.model_json_schema())
    assert result == {
        "type": "object",
        "properties": {
            "title": {"description": "The book's title", "type": "string"},
            "subtitle": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None},
        },
        "required": ["title"],
    }


def _refs(schema: object) -> set[str]:
    text = json.dumps(schema)
    return set(re.findall(r'"\$ref": "([^"]*)"', text))


def test_a_recursive_model_keeps_one_definition_and_refers_to_it() -> None:
    result = normalize(Node.model_json_schema())
    assert set(result["$defs"]) == {"Node"}
    assert result["properties"]["children"]["items"] == {"$ref": "#/$defs/Node"}
    assert result["$defs"]["Node"]["properties"]["children"]["items"] == {"$ref": "#/$defs/Node"}
    assert result["type"] == "object"  # the top level is written out, not a reference


def test_a_recursive_schema_validates_deep_values_like_the_model() -> None:
    result = normalize(Node.model_json_schema())
    deep: dict[str, Any] = {"label": "1", "children": []}
    for depth in range(2, 12):
        deep = {"label": str(depth), "children": [deep]}
    jsonschema.validate(deep, result)
    broken = {"label": "1", "children": [{"label": 2, "children": []}]}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, result)


def test_mutually_recursive_models_keep_only_the_types_on_the_cycle() -> None:
    Employee.model_rebuild()
    result = normalize(Employee.model_json_schema())
    assert set(result["$defs"]) <= {"Employee", "Manager"}
    assert _refs(result) <= {f"#/$defs/{name}" for name in result["$defs"]}


def test_a_json_pointer_recursion_becomes_a_definition_too() -> None:
    schema = {
        "type": "object",
        "properties": {
            "tree": {
                "type": "object",
                "properties": {"kids": {"type": "array", "items": {"$ref": "#/properties/tree"}}},
            }
        },
    }
    result = normalize(schema)
    assert set(result["$defs"]) == {"tree"}
    assert result["$defs"]["tree"]["properties"]["kids"]["items"] == {"$ref": "#/$defs/tree"}


def test_a_root_self_reference_is_named_after_the_title() -> None:
    schema = {"title": "Tree", "type": "object", "properties": {"kid": {"$ref": "#"}}}
    result = normalize(schema)
    assert result["properties"]["kid"] == {"$ref": "#/$defs/Tree"}
    assert "title" not in result["$defs"]["Tree"]


def test_normalizing_a_recursive_schema_again_changes_nothing() -> None:
    Employee.model_rebuild()
    for model in (Node, Employee):
        once = normalize(model.model_json_schema())
        assert normalize(once) == once


def test_types_that_are_not_on_a_cycle_are_still_inlined_beside_recursive_ones() -> None:
    class Leaf(BaseModel):
        text: str

    class Branch(BaseModel):
        leaf: Leaf
        more: list[Branch] = []

    result = normalize(Branch.model_json_schema())
    assert set(result["$defs"]) == {"Branch"}
    assert result["properties"]["leaf"]["properties"]["text"] == {"type": "string"}


def test_a_type_used_twice_is_not_mistaken_for_recursion() -> None:
    result = normalize(Person.model_json_schema())
    assert result["properties"]["home"] == result["properties"]["past"]["items"]


def test_normalize_never_mutates_its_input() -> None:
    schema = Person.model_json_schema()
    before = copy.deepcopy(schema)
    result = normalize(schema)
    result["properties"]["home"]["properties"]["city"]["type"] = "integer"
    assert schema == before
    assert normalize(schema)["properties"]["home"]["properties"]["city"]["type"] == "string"


def test_normalize_is_idempotent() -> None:
    once = normalize(Person.model_json_schema())
    assert normalize(once) == once


@pytest.mark.parametrize("kind", [int, list[str], str | None])
def test_a_non_object_top_level_is_refused(kind: Any) -> None:
    with pytest.raises(SchemaError, match="object at the top level"):
        normalize(TypeAdapter(kind).json_schema())


def test_a_top_level_union_not_on_operation_is_refused() -> None:
    with pytest.raises(SchemaError, match="discriminated on an 'operation' field"):
        normalize(TypeAdapter(Address | Book).json_schema())


def test_an_optional_model_at_the_top_is_served_as_the_model() -> None:
    result = normalize(TypeAdapter(Address | None).json_schema())
    assert result["required"] == ["street", "city"]


def test_a_bare_schema_becomes_an_object_with_properties() -> None:
    assert normalize({}) == {"type": "object", "properties": {}}
    assert normalize({"properties": {"a": {"type": "string"}}})["type"] == "object"


def test_non_local_and_dangling_refs_are_refused() -> None:
    with pytest.raises(SchemaError, match="only references inside"):
        normalize({"type": "object", "properties": {"a": {"$ref": "https://x.org/s.json"}}})
    with pytest.raises(SchemaError, match="points at nothing"):
        normalize({"type": "object", "properties": {"a": {"$ref": "#/$defs/Missing"}}})


def test_draft_07_spellings_are_upgraded() -> None:
    schema = {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "definitions": {"Pt": {"type": "number", "minimum": 0, "exclusiveMinimum": True}},
        "type": "object",
        "properties": {
            "pair": {"type": "array", "items": [{"$ref": "#/definitions/Pt"}, {"type": "string"}]},
            "name": {"type": "string", "required": True},
        },
    }
    result = normalize(schema)
    pair = result["properties"]["pair"]
    assert pair["prefixItems"][0] == {"type": "number", "exclusiveMinimum": 0}
    assert "items" not in pair
    assert result["required"] == ["name"]
    assert "$schema" not in result


def test_all_of_is_merged_into_one_schema() -> None:
    schema = {
        "type": "object",
        "properties": {
            "a": {
                "allOf": [
                    {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]},
                    {"properties": {"y": {"type": "string"}}, "required": ["y"]},
                ],
                "description": "Both",
            }
        },
    }
    a = normalize(schema)["properties"]["a"]
    assert a == {
        "description": "Both",
        "type": "object",
        "properties": {"x": {"type": "integer"}, "y": {"type": "string"}},
        "required": ["x", "y"],
    }


def test_contradictory_all_of_is_refused() -> None:
    schema = {"properties": {"a": {"allOf": [{"type": "string"}, {"type": "integer"}]}}}
    with pytest.raises(SchemaError, match="nothing in common"):
        normalize(schema)


def test_never_matching_branches_are_dropped_from_unions() -> None:
    schema = {"properties": {"n": {"anyOf": [{"type": "number"}, {"not": {}}, {"type": "null"}]}}}
    n = normalize(schema)["properties"]["n"]
    assert n == {"anyOf": [{"type": "number"}, {"type": "null"}]}


def test_openapi_nullable_becomes_a_null_type() -> None:
    schema = {"properties": {"s": {"type": "string", "nullable": True}}}
    assert normalize(schema)["properties"]["s"] == {"type": ["string", "null"]}


def test_a_malformed_keyword_value_is_a_schema_error() -> None:
    with pytest.raises(SchemaError, match="minLength"):
        normalize({"properties": {"s": {"type": "string", "minLength": "three"}}})
    with pytest.raises(SchemaError, match="must be a JSON object"):
        normalize([1, 2])  # type: ignore[arg-type]
