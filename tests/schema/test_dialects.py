"""Real pydantic models through normalize -> for_dialect -> check, for every dialect."""

from __future__ import annotations

import copy
import datetime
import enum
import json
import uuid
from typing import Annotated, Any, Literal

import pytest
from pydantic import AnyUrl, BaseModel, Field, TypeAdapter

from satchel import SatchelUsageError, SchemaError
from satchel.schema import (
    DIALECTS,
    Dialect,
    check,
    check_definition,
    for_dialect,
    normalize,
    tool_definition,
)
from satchel.schema._recursive import UNROLL_DEPTH


class Color(enum.Enum):
    RED = "red"
    GREEN = "green"


class Priority(enum.IntEnum):
    LOW = 1
    HIGH = 2


class Address(BaseModel):
    """A postal address."""

    street: str
    city: str = Field(description="City name")
    zip_code: str | None = Field(default=None, pattern=r"^\d{5}$")


class Person(BaseModel):
    """A person to add to the address book."""

    name: str = Field(min_length=1, max_length=100, description="Full name")
    age: int = Field(ge=0, le=150)
    email: str | None = None
    address: Address = Field(description="Where the person lives")
    previous: list[Address] = Field(default_factory=list[Address], description="Old addresses")


class Tagged(BaseModel):
    tags: list[str] = Field(default_factory=list[str], max_length=10)
    color: Color = Color.RED
    priority: Priority = Priority.LOW
    mode: Literal["fast", "slow"] = "fast"
    confirm: Literal[True] = True
    level: Literal[1, 2, 3] = 1


class Constrained(BaseModel):
    count: int = Field(gt=0, lt=100, multiple_of=5)
    ratio: float = Field(ge=0.0, le=1.0, description="A fraction")
    code: str = Field(pattern=r"^[A-Z]{3}$", min_length=3, max_length=3)
    when: datetime.datetime
    day: datetime.date | None = None
    ident: uuid.UUID
    link: AnyUrl | None = None


class WithDicts(BaseModel):
    counts: dict[str, int] = Field(description="Counts by word")
    meta: dict[str, Any] | None = None
    by_name: dict[str, Address] = Field(default_factory=dict[str, Address])


class WithTitle(BaseModel):
    title: str = Field(description="A property literally named title")
    subtitle: str | None = None


class Defaults(BaseModel):
    limit: int = Field(default=10, ge=1, le=100)
    query: str = ""
    verbose: bool = False
    ratio: float = 0.5


class Tupled(BaseModel):
    point: tuple[int, int]
    pair: tuple[str, float] = ("a", 1.0)


class Unions(BaseModel):
    value: int | str
    maybe: int | str | None = None
    who: Address | Person = Field(description="Either kind")


class Empty(BaseModel):
    """Takes nothing."""


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

    operation: Literal["delete"]
    path: list[str] = Field(description="Paths to delete")


FileOp = Annotated[Read | Write | Delete, Field(discriminator="operation")]

MODELS: dict[str, dict[str, Any]] = {
    "nested": Person.model_json_schema(),
    "enums_and_literals": Tagged.model_json_schema(),
    "constraints": Constrained.model_json_schema(),
    "dicts": WithDicts.model_json_schema(),
    "title_property": WithTitle.model_json_schema(),
    "defaults": Defaults.model_json_schema(),
    "tuples": Tupled.model_json_schema(),
    "unions": Unions.model_json_schema(),
    "empty": Empty.model_json_schema(),
    "multi_operation": TypeAdapter(FileOp).json_schema(),
}
STRICT_UNSERVABLE = {"dicts"}  # free-form maps have no strict form


def _descriptions(schema: object) -> list[str]:
    found: list[str] = []
    if isinstance(schema, dict):
        for key, value in schema.items():  # pyright: ignore[reportUnknownVariableType]
            if key == "description" and isinstance(value, str):
                found.append(value)
            else:
                found.extend(_descriptions(value))
    elif isinstance(schema, list):
        for item in schema:  # pyright: ignore[reportUnknownVariableType]
            found.extend(_descriptions(item))
    return found


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("model", sorted(MODELS))
def test_every_model_adapts_to_every_dialect_and_passes_its_checker(
    model: str, dialect: Dialect
) -> None:
    normalized = normalize(MODELS[model])
    if dialect == "openai-strict" and model in STRICT_UNSERVABLE:
        with pytest.raises(SchemaError, match="strict mode cannot express"):
            for_dialect(normalized, dialect)
        return
    adapted = for_dialect(normalized, dialect)
    assert check(adapted, dialect) == []


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("model", sorted(MODELS))
def test_every_model_gives_a_definition_that_passes_check_definition(
    model: str, dialect: Dialect
) -> None:
    definition = tool_definition(
        "demo_tool",
        "A demonstration tool.",
        MODELS[model],
        dialect,
        output_schema=Address.model_json_schema(),
        annotations={"read_only": True, "destructive": False, "idempotent": None},
        title="Demo tool",
    )
    assert check_definition(definition, dialect) == []


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("model", sorted(MODELS))
def test_adapting_never_loses_a_description_nor_mutates_its_input(
    model: str, dialect: Dialect
) -> None:
    normalized = normalize(MODELS[model])
    before = copy.deepcopy(normalized)
    try:
        adapted = for_dialect(normalized, dialect)
    except SchemaError:
        return
    assert normalized == before
    out = _descriptions(adapted)
    for text in _descriptions(normalized):
        assert any(text in found for found in out), text


def test_openai_strict_requires_every_property_and_closes_every_object() -> None:
    adapted = for_dialect(normalize(Person.model_json_schema()), "openai-strict")
    assert adapted["required"] == ["name", "age", "email", "address", "previous"]
    assert adapted["additionalProperties"] is False
    address = adapted["properties"]["address"]
    assert address["additionalProperties"] is False
    assert address["required"] == ["street", "city", "zip_code"]


def test_openai_strict_makes_optional_properties_nullable() -> None:
    adapted = for_dialect(normalize(Defaults.model_json_schema()), "openai-strict")
    limit = adapted["properties"]["limit"]
    assert limit["type"] == ["integer", "null"]
    assert "default" not in limit
    assert "Default: 10." in limit["description"]
    assert "null means not given" in limit["description"]
    person = for_dialect(normalize(Person.model_json_schema()), "openai-strict")
    previous = person["properties"]["previous"]
    assert previous["anyOf"][-1] == {"type": "null"}
    assert previous["description"].startswith("Old addresses")


def test_openai_strict_adds_null_to_an_optional_enum() -> None:
    adapted = for_dialect(normalize(Tagged.model_json_schema()), "openai-strict")
    mode = adapted["properties"]["mode"]
    assert mode["type"] == ["string", "null"]
    assert mode["enum"] == ["fast", "slow", None]


def test_openai_strict_says_dropped_constraints_in_words() -> None:
    adapted = for_dialect(normalize(Constrained.model_json_schema()), "openai-strict")
    code = adapted["properties"]["code"]
    assert "minLength" not in code
    assert "maxLength" not in code
    assert code["pattern"] == "^[A-Z]{3}$"
    assert "At least 3 characters." in code["description"]
    assert adapted["properties"]["when"]["format"] == "date-time"
    link = adapted["properties"]["link"]
    assert "Format: uri." in str(link)
    assert "uri" not in [branch.get("format") for branch in link.get("anyOf", [])]


def test_openai_strict_refuses_a_free_form_map_and_definition_falls_back() -> None:
    normalized = normalize(WithDicts.model_json_schema())
    with pytest.raises(SchemaError) as caught:
        for_dialect(normalized, "openai-strict")
    assert caught.value.details["path"] == "/properties/counts"
    definition = tool_definition("t", "Takes maps.", normalized, "openai-strict")
    assert definition["function"]["strict"] is False
    assert check_definition(definition, "openai-strict") == []


def test_openai_strict_definition_sets_strict_true() -> None:
    definition = tool_definition("add", "Add.", Defaults.model_json_schema(), "openai-strict")
    assert definition["function"]["strict"] is True
    assert definition["type"] == "function"


def test_gemini_uses_nullable_and_drops_additional_properties() -> None:
    adapted = for_dialect(normalize(WithDicts.model_json_schema()), "gemini")
    counts = adapted["properties"]["counts"]
    assert counts["type"] == "object"
    assert "additionalProperties" not in counts
    assert "properties" not in counts
    assert "each value is integer" in counts["description"]
    meta = adapted["properties"]["meta"]
    assert meta["nullable"] is True


def test_gemini_turns_const_into_enum_and_non_string_enums_into_words() -> None:
    adapted = for_dialect(normalize(Tagged.model_json_schema()), "gemini")
    confirm = adapted["properties"]["confirm"]
    assert "const" not in confirm
    assert confirm["type"] == "boolean"
    assert "Must be true." in confirm["description"]
    priority = adapted["properties"]["priority"]
    assert "enum" not in priority
    assert priority["type"] == "integer"
    assert "One of: 1, 2." in priority["description"]
    op = for_dialect(normalize(Read.model_json_schema()), "gemini")["properties"]["operation"]
    assert op == {"type": "string", "enum": ["read"]}


def test_gemini_moves_integer_exclusive_bounds_inward() -> None:
    adapted = for_dialect(normalize(Constrained.model_json_schema()), "gemini")
    count = adapted["properties"]["count"]
    assert (count["minimum"], count["maximum"]) == (1, 99)
    assert "A multiple of 5." in count["description"]
    assert adapted["properties"]["ident"].get("format") is None


def test_gemini_definition_leaves_out_parameters_of_a_tool_without_any() -> None:
    definition = tool_definition("ping", "Ping.", Empty.model_json_schema(), "gemini")
    assert definition == {"name": "ping", "description": "Ping."}


def test_gemini_refuses_parameter_names_it_cannot_take() -> None:
    schema = {"type": "object", "properties": {"dry-run": {"type": "boolean"}}}
    with pytest.raises(SchemaError, match="dry-run"):
        for_dialect(normalize(schema), "gemini")


def test_openai_turns_one_of_into_any_of() -> None:
    schema = {
        "type": "object",
        "properties": {"x": {"oneOf": [{"type": "string"}, {"type": "integer"}]}},
    }
    adapted = for_dialect(normalize(schema), "openai")
    assert adapted["properties"]["x"] == {"anyOf": [{"type": "string"}, {"type": "integer"}]}


@pytest.mark.parametrize("dialect", ["mcp", "anthropic"])
def test_json_schema_dialects_keep_the_normalized_schema(dialect: Dialect) -> None:
    normalized = normalize(Constrained.model_json_schema())
    assert for_dialect(normalized, dialect) == normalized


def test_for_dialect_rejects_an_unnormalized_schema() -> None:
    with pytest.raises(SchemaError, match="normalize"):
        for_dialect(Person.model_json_schema(), "mcp")
    with pytest.raises(SchemaError, match="normalize"):
        for_dialect({"type": "object", "properties": {"a": {"$ref": "#/nowhere"}}}, "mcp")


def test_an_unknown_dialect_is_a_usage_error() -> None:
    with pytest.raises(SatchelUsageError, match="Unknown schema dialect"):
        for_dialect(normalize(Empty.model_json_schema()), "cohere")  # type: ignore[arg-type]


def test_tool_definitions_have_each_providers_shape() -> None:
    schema = Defaults.model_json_schema()
    openai = tool_definition("search", "Search.", schema, "openai")
    assert set(openai) == {"type", "function"}
    assert set(openai["function"]) == {"name", "description", "parameters"}
    anthropic = tool_definition("search", "Search.", schema, "anthropic")
    assert set(anthropic) == {"name", "description", "input_schema"}
    gemini = tool_definition("search", "Search.", schema, "gemini")
    assert set(gemini) == {"name", "description", "parameters"}


def test_mcp_definition_carries_title_output_schema_and_hints() -> None:
    tool = tool_definition(
        "read_file",
        "Read a file.",
        Read.model_json_schema(),
        "mcp",
        output_schema=Address.model_json_schema(),
        annotations={"read_only": True, "destructive": None, "open_world": False},
        title="Read file",
    )
    assert tool["title"] == "Read file"
    assert tool["annotations"] == {"readOnlyHint": True, "openWorldHint": False}
    assert tool["outputSchema"]["type"] == "object"
    assert "title" not in tool["outputSchema"]
    assert tool["inputSchema"]["required"] == ["operation", "path"]


def test_tool_definition_refuses_a_bad_name_or_annotation() -> None:
    schema = Empty.model_json_schema()
    with pytest.raises(SatchelUsageError, match="invalid"):
        tool_definition("has space", "x", schema, "openai")
    with pytest.raises(SatchelUsageError, match="Gemini"):
        tool_definition("9lives", "x", schema, "gemini")
    with pytest.raises(SatchelUsageError, match="Unknown tool annotation"):
        tool_definition("ok", "x", schema, "mcp", annotations={"dangerous": True})


def test_dropping_strict_nulls_lets_a_strict_call_validate_against_the_model() -> None:
    from satchel.schema import drop_strict_nulls

    normalized = normalize(Person.model_json_schema())
    strict_call = {
        "name": "Ada",
        "age": 36,
        "email": None,
        "address": {"street": "1 Main St", "city": "London", "zip_code": None},
        "previous": None,
    }
    cleaned = drop_strict_nulls(strict_call, normalized)
    assert cleaned == {
        "name": "Ada",
        "age": 36,
        "address": {"street": "1 Main St", "city": "London"},
    }
    assert Person.model_validate(cleaned).previous == []
    assert strict_call["previous"] is None


def test_dropping_strict_nulls_reaches_into_lists_and_operations() -> None:
    from satchel.schema import drop_strict_nulls

    flat = normalize(TypeAdapter(FileOp).json_schema())
    call = {"operation": "write", "path": "a.txt", "content": "hi", "mode": None, "limit": None}
    cleaned = drop_strict_nulls(call, flat)
    assert cleaned == {"operation": "write", "path": "a.txt", "content": "hi"}
    assert TypeAdapter(FileOp).validate_python(cleaned).mode == "w"  # type: ignore[union-attr]
    people = normalize(
        {"properties": {"items": {"type": "array", "items": Defaults.model_json_schema()}}}
    )
    assert drop_strict_nulls({"items": [{"limit": None, "query": "x"}]}, people) == {
        "items": [{"query": "x"}]
    }


class _Folder(BaseModel):
    name: str
    folders: list[_Folder] = []


def test_gemini_gets_a_recursive_type_unrolled_to_a_bounded_depth() -> None:
    adapted = for_dialect(normalize(_Folder.model_json_schema()), "gemini")
    assert "$ref" not in json.dumps(adapted)
    assert "$defs" not in adapted
    level = adapted
    for _ in range(UNROLL_DEPTH):
        level = level["properties"]["folders"]["items"]
        assert level["properties"]["name"]["type"] == "string"
    cut = level["properties"]["folders"]["items"]
    assert cut["type"] == "object"
    assert "properties" not in cut
    assert "Nested further" in cut["description"]
    assert check(adapted, "gemini") == []


@pytest.mark.parametrize("dialect", ["mcp", "openai", "openai-strict", "anthropic"])
def test_other_dialects_keep_a_recursive_type_as_one_definition(dialect: Dialect) -> None:
    adapted = for_dialect(normalize(_Folder.model_json_schema()), dialect)
    assert set(adapted["$defs"]) == {"Folder"}
    assert check(adapted, dialect) == []
