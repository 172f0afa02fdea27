"""Function tools made with ``@tool``."""

from __future__ import annotations

from typing import Annotated

import pytest
from pydantic import BaseModel, Field

from satchel import FunctionTool, SatchelUsageError, ToolContext, ToolRegistry, tool
from tool_fixtures import add, tag_count

pytestmark = pytest.mark.anyio


def test_schema_comes_from_signature_and_docstring() -> None:
    spec = add.spec
    assert spec.description == "Add two integers."
    assert spec.category == "math"
    assert spec.actions == ("read",)
    props = spec.input_schema["properties"]
    assert props["a"] == {"type": "integer", "description": "First addend."}
    assert spec.input_schema["required"] == ["a", "b"]
    assert spec.output_schema == {
        "type": "object",
        "properties": {"result": {"type": "integer"}},
        "required": ["result"],
    }


async def test_plain_return_values_are_wrapped_as_result() -> None:
    result = await ToolRegistry([add]).call("add", {"a": 1, "b": 2})
    assert result.output == 3
    assert result.structured() == {"result": 3}
    assert result.to_text() == "3"


def test_decorated_function_is_still_callable() -> None:
    assert add(2, 3) == 5


def test_bare_decorator_and_keyword_decorator_both_work() -> None:
    @tool
    def ping() -> str:
        """Answer pong."""
        return "pong"

    @tool(name="pong_tool", read_only=True)
    def pong() -> str:
        """Answer ping."""
        return "ping"

    assert isinstance(ping, FunctionTool)
    assert ping.spec.name == "ping"
    assert pong.spec.name == "pong_tool"
    assert pong.spec.annotations.read_only is True


async def test_context_parameter_is_injected_and_not_in_the_schema() -> None:
    assert "ctx" not in tag_count.spec.input_schema["properties"]
    result = await ToolRegistry([tag_count]).call(
        "tag_count", {"tags": {"names": ["a", "b"]}}, ctx=ToolContext(agent="bob")
    )
    assert result.output == {"count": 2, "agent_len": 3}


async def test_defaults_and_field_constraints_are_honoured() -> None:
    @tool
    def repeat(
        text: str, times: Annotated[int, Field(ge=1, le=3, description="How often.")] = 2
    ) -> str:
        """Repeat text.

        Args:
            text: The text.
        """
        return text * times

    props = repeat.spec.input_schema["properties"]
    assert props["times"]["maximum"] == 3
    assert props["times"]["default"] == 2
    assert props["times"]["description"] == "How often."
    registry = ToolRegistry([repeat])
    assert (await registry.call("repeat", {"text": "ab"})).output == "abab"
    bad = await registry.call("repeat", {"text": "ab", "times": 9})
    assert bad.error is not None
    assert "`times`" in bad.error.message
    assert "less than or equal to 3" in bad.error.message


async def test_async_function_tools_are_awaited() -> None:
    @tool
    async def shout(text: str) -> str:
        """Shout text.

        Args:
            text: What to shout.
        """
        return text.upper()

    assert (await ToolRegistry([shout]).call("shout", {"text": "hi"})).output == "HI"


async def test_unknown_fields_are_refused_by_name() -> None:
    result = await ToolRegistry([add]).call("add", {"a": 1, "b": 2, "c": 3})
    assert result.error is not None
    assert "`c` is not a known field" in result.error.message


async def test_model_return_type_is_the_output_schema() -> None:
    class Out(BaseModel):
        total: int

    @tool
    def total(values: list[int]) -> Out:
        """Sum values.

        Args:
            values: Numbers to sum.
        """
        return Out(total=sum(values))

    assert total.spec.output_wrapped is False
    result = await ToolRegistry([total]).call("total", {"values": [1, 2]})
    assert result.structured() == {"total": 3}


def test_var_args_are_refused() -> None:
    def spread(*values: int) -> int:
        """Sum values."""
        return sum(values)

    with pytest.raises(SatchelUsageError, match=r"\*args"):
        tool(spread)


def test_function_without_docstring_is_refused() -> None:
    def bare(x: int) -> int:
        return x

    with pytest.raises(SatchelUsageError, match="no description"):
        tool(bare)


async def test_json_encoded_list_is_decoded_and_reported() -> None:
    @tool
    def count(items: list[str]) -> int:
        """Count items.

        Args:
            items: The items.
        """
        return len(items)

    result = await ToolRegistry([count]).call("count", {"items": '["a", "b"]'})
    assert result.output == 2
    assert result.coerced == ("items",)
    assert result.to_dict()["coerced"] == ["items"]


async def test_json_string_is_not_decoded_where_a_string_is_expected() -> None:
    @tool
    def echo(text: str) -> str:
        """Echo text.

        Args:
            text: The text.
        """
        return text

    result = await ToolRegistry([echo]).call("echo", {"text": '["a"]'})
    assert result.output == '["a"]'
    assert result.coerced == ()


async def test_strict_mode_nulls_for_optional_fields_mean_absent() -> None:
    @tool
    def greet(name: str, greeting: str = "Hello") -> str:
        """Greet someone.

        Args:
            name: Who to greet.
            greeting: The greeting word.
        """
        return f"{greeting}, {name}"

    registry = ToolRegistry([greet])
    result = await registry.call("greet", {"name": "Ada", "greeting": None})
    assert result.output == "Hello, Ada"
    assert result.coerced == ("greeting (null)",)
    required_null = await registry.call("greet", {"name": None})
    assert required_null.error is not None
    assert required_null.error.kind == "invalid_arguments"
