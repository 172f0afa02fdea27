"""Output types built from models: lists of models, optional models, unions, maps and
recursive models, through every dialect and a real call."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import jsonschema
import pytest
from pydantic import BaseModel, Field

from satchel import ToolRegistry, tool
from satchel.schema import DIALECTS, Dialect, check_definition

pytestmark = pytest.mark.anyio


class Point(BaseModel):
    x: int
    y: int


class Circle(BaseModel):
    kind: Literal["circle"] = "circle"
    radius: float


class Square(BaseModel):
    kind: Literal["square"] = "square"
    side: float


class Folder(BaseModel):
    name: str
    folders: list[Folder] = []


@tool
def points() -> list[Point]:
    """Two points."""
    return [Point(x=1, y=2), Point(x=3, y=4)]


@tool
def maybe_point(present: bool) -> Point | None:
    """A point, or nothing.

    Args:
        present: Whether there is a point.
    """
    return Point(x=0, y=0) if present else None


@tool
def shape(round_: bool) -> Circle | Square:
    """A circle or a square.

    Args:
        round_: Whether the shape is round.
    """
    return Circle(radius=1.5) if round_ else Square(side=2.0)


@tool
def tagged_shape() -> Annotated[Circle | Square, Field(discriminator="kind")]:
    """A shape told apart by its kind."""
    return Square(side=3.0)


@tool
def named_points() -> dict[str, Point]:
    """Points by name."""
    return {"origin": Point(x=0, y=0)}


@tool
def tree() -> Folder:
    """A folder tree."""
    return Folder(name="root", folders=[Folder(name="a", folders=[Folder(name="b")])])


@tool
def forest() -> list[Folder]:
    """Several folder trees."""
    return [Folder(name="one"), Folder(name="two", folders=[Folder(name="three")])]


CASES: list[tuple[Any, dict[str, Any]]] = [
    (points, {}),
    (maybe_point, {"present": True}),
    (maybe_point, {"present": False}),
    (shape, {"round_": True}),
    (shape, {"round_": False}),
    (tagged_shape, {}),
    (named_points, {}),
    (tree, {}),
    (forest, {}),
]
REGISTRY = ToolRegistry([points, maybe_point, shape, tagged_shape, named_points, tree, forest])


@pytest.mark.parametrize("dialect", DIALECTS)
def test_tools_whose_outputs_are_built_from_models_serve_in_every_dialect(
    dialect: Dialect,
) -> None:
    definitions = REGISTRY.schemas(dialect)
    assert len(definitions) == len(REGISTRY)
    for definition in definitions:
        assert check_definition(definition, dialect) == [], definition


def test_mcp_output_schemas_describe_the_models_inside_the_result() -> None:
    by_name = {d["name"]: d["outputSchema"] for d in REGISTRY.schemas("mcp")}
    assert by_name["points"]["properties"]["result"]["items"]["properties"] == {
        "x": {"type": "integer"},
        "y": {"type": "integer"},
    }
    assert by_name["tree"]["properties"]["folders"]["items"] == {"$ref": "#/$defs/Folder"}


@pytest.mark.parametrize(("fn", "args"), CASES, ids=lambda v: getattr(v, "__name__", str(v)))
async def test_each_output_is_returned_and_fits_its_own_output_schema(
    fn: Any, args: dict[str, Any]
) -> None:
    result = await REGISTRY.call(fn.spec.name, args)
    assert result.ok, result.to_text()
    structured = result.structured()
    assert structured is not None
    jsonschema.validate(structured, fn.spec.output_schema)
