"""Type hints of function tools are resolved explicitly: the function's module, the
variables its body closes over, then ``localns``."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from satchel import SatchelUsageError, ToolContext, tool

pytestmark = pytest.mark.anyio


async def test_a_local_model_the_function_uses_is_found_through_its_closure() -> None:
    class Point(BaseModel):
        x: int

    @tool
    def norm(p: Point) -> int:
        """Size of a point."""
        assert isinstance(p, Point)
        return abs(p.x)

    result = await norm.call({"p": {"x": -4}}, norm_context())
    assert result.output == 4


async def test_a_local_type_named_only_in_an_annotation_needs_localns() -> None:
    class Colour(BaseModel):
        name: str

    def paint(c: Colour) -> str:
        """Paint."""
        return "ok"

    with pytest.raises(SatchelUsageError, match="localns=locals"):
        tool(paint)

    painted = tool(localns=locals())(paint)
    result = await painted.call({"c": {"name": "red"}}, norm_context())
    assert result.output == "ok"


def norm_context():

    return ToolContext()
