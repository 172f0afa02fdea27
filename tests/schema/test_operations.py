"""Multi-operation inputs: a union on ``operation`` flattened into one object."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import pytest
from pydantic import BaseModel, Field, TypeAdapter

from satchel import SchemaError
from satchel.schema import OperationInfo, normalize, operations


class Read(BaseModel):
    """Read a file."""

    operation: Literal["read"]
    path: str = Field(description="File path")
    limit: int | None = None


class Write(BaseModel):
    """Write a file."""

    operation: Literal["write"]
    path: str = Field(description="File path")
    content: str = Field(description="Text to write")
    mode: Literal["w", "a"] = "w"


class Delete(BaseModel):
    """Delete files."""

    operation: Literal["delete", "remove"]
    path: list[str] = Field(description="Paths to delete")


FileOp = Annotated[Read | Write | Delete, Field(discriminator="operation")]


def _flat() -> dict[str, Any]:
    return normalize(TypeAdapter(FileOp).json_schema())


def test_a_multi_operation_union_becomes_one_object() -> None:
    flat = _flat()
    assert flat["type"] == "object"
    assert "oneOf" not in flat
    assert "anyOf" not in flat
    assert list(flat["properties"]) == ["operation", "path", "limit", "content", "mode"]


def test_operation_is_a_required_enum_of_every_operation_with_their_docs() -> None:
    operation = _flat()["properties"]["operation"]
    assert operation["type"] == "string"
    assert operation["enum"] == ["read", "write", "delete", "remove"]
    assert "'read': Read a file." in operation["description"]
    assert "'delete' / 'remove': Delete files." in operation["description"]


def test_required_holds_operation_and_fields_every_operation_requires() -> None:
    assert _flat()["required"] == ["operation", "path"]


def test_a_field_not_every_operation_requires_says_where_it_is_required() -> None:
    properties = _flat()["properties"]
    assert properties["content"]["description"] == ("Text to write. Required for write.")
    assert properties["mode"]["description"] == "Optional for write."
    assert properties["limit"]["description"] == "Optional for read."


def test_a_shared_field_with_different_schemas_becomes_any_of_of_each_form() -> None:
    path = _flat()["properties"]["path"]
    string_form, list_form = path["anyOf"]
    assert string_form["type"] == "string"
    assert string_form["description"] == "File path. Form for read, write."
    assert list_form["type"] == "array"
    assert list_form["description"] == ("Paths to delete. Form for delete, remove.")


def test_a_field_required_only_somewhere_names_both_sides() -> None:
    class A(BaseModel):
        operation: Literal["a"]
        x: int

    class B(BaseModel):
        operation: Literal["b"]
        x: int = 0

    flat = normalize(TypeAdapter(Annotated[A | B, Field(discriminator="operation")]).json_schema())
    x = flat["properties"]["x"]
    assert x["description"] == "Required for a; optional for b."
    assert x["default"] == 0
    assert flat["required"] == ["operation"]


def test_operations_reports_each_operations_fields_from_the_exact_union() -> None:
    info = operations(TypeAdapter(FileOp).json_schema())
    assert list(info) == ["read", "write", "delete", "remove"]
    assert info["write"] == OperationInfo(
        name="write",
        fields=("path", "content", "mode"),
        required=("path", "content"),
        description="Write a file.",
    )
    assert info["remove"].fields == ("path",)


def test_operations_of_a_plain_model_or_a_flattened_schema_is_empty() -> None:
    assert operations(Read.model_json_schema()) == {}
    assert operations(_flat()) == {}


def test_a_union_discriminated_on_another_field_is_refused() -> None:
    class Cat(BaseModel):
        kind: Literal["cat"]

    class Dog(BaseModel):
        kind: Literal["dog"]

    schema = TypeAdapter(Annotated[Cat | Dog, Field(discriminator="kind")]).json_schema()
    with pytest.raises(SchemaError, match="Name the discriminator field 'operation'"):
        normalize(schema)
    with pytest.raises(SchemaError):
        operations(schema)


def test_two_variants_claiming_one_operation_are_refused() -> None:
    schema = {
        "oneOf": [
            {"type": "object", "properties": {"operation": {"const": "go"}}},
            {"type": "object", "properties": {"operation": {"enum": ["go", "stop"]}}},
        ]
    }
    with pytest.raises(SchemaError, match="'go' appears in variants 0 and 1"):
        normalize(schema)


def test_closed_variants_give_a_closed_object() -> None:
    schema = {
        "anyOf": [
            {
                "type": "object",
                "properties": {"operation": {"const": "a"}},
                "additionalProperties": False,
            },
            {
                "type": "object",
                "properties": {"operation": {"const": "b"}},
                "additionalProperties": False,
            },
        ]
    }
    assert normalize(schema)["additionalProperties"] is False
