"""``ToolResult`` serialisation: whatever a tool was given or returned, the result is
valid JSON and valid Unicode."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel

from satchel import ToolRegistry
from satchel.tools import ErrorInfo, ToolResult
from tool_fixtures import WordCount

pytestmark = pytest.mark.anyio

ANY_TEXT = st.text(st.characters(codec=None, exclude_categories=()))
"""Text over every code point, lone surrogates included."""

JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | ANY_TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(ANY_TEXT, inner, max_size=4),
    max_leaves=12,
)


class Echo(BaseModel):
    text: str


def _assert_serialises(result: ToolResult) -> None:
    as_json = result.to_json()
    assert json.loads(as_json.encode()) == json.loads(as_json)
    result.to_text().encode()
    if result.error is not None:
        json.dumps(result.to_dict(), ensure_ascii=False).encode()


async def test_an_invalid_arguments_result_echoing_a_lone_surrogate_serialises() -> None:
    result = await ToolRegistry([WordCount()]).call("word_count", {"text": ["x\ud800"]})

    assert result.error is not None
    assert result.error.kind == "invalid_arguments"
    _assert_serialises(result)
    assert "\ufffd" in result.to_json()


@given(message=ANY_TEXT, details=st.dictionaries(ANY_TEXT, JSONISH, max_size=4))
def test_an_error_result_serialises_whatever_its_message_and_details(
    message: str, details: dict[str, Any]
) -> None:
    result = ToolResult("t", error=ErrorInfo("invalid_arguments", message, details))
    _assert_serialises(result)


@given(output=JSONISH, coerced=st.lists(ANY_TEXT, max_size=2))
def test_an_output_serialises_whatever_text_it_holds(output: Any, coerced: list[str]) -> None:
    _assert_serialises(ToolResult("t", output=output, coerced=tuple(coerced)))
    _assert_serialises(ToolResult("t", output=output, wrapped=True))


@given(text=ANY_TEXT)
def test_a_model_output_serialises_whatever_text_it_holds(text: str) -> None:
    result = ToolResult("t", output=Echo(text=text))
    _assert_serialises(result)
    assert isinstance(json.loads(result.to_json())["output"]["text"], str)


def test_a_surrogate_pair_stays_the_character_it_spells() -> None:
    result = ToolResult("t", output="\ud83d\ude00 and \ud800 alone")
    assert result.to_text() == "\U0001f600 and \ufffd alone"


@given(
    st.recursive(
        st.floats(allow_nan=True, allow_infinity=True) | st.integers() | st.text(max_size=5),
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner),
        max_leaves=10,
    )
)
def test_every_result_is_valid_json_even_with_nan_or_infinity(value: object) -> None:
    for result in (
        ToolResult("t", {"value": value}),
        ToolResult("t", error=ErrorInfo("failed", "m", {"value": value})),
    ):
        json.loads(result.to_json(), parse_constant=_refuse)
        text = result.to_text()
        json.loads(text if result.ok else text.split("\n", 1)[1], parse_constant=_refuse)


def _refuse(name: str) -> None:
    raise AssertionError(f"{name} is not JSON")
