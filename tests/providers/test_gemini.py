from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from satchel import SatchelUsageError, ToolRegistry
from satchel.providers import (
    ToolCall,
    gemini_function_responses,
    gemini_tool_content,
    parse_gemini_function_calls,
    run_tool_calls_sync,
)

# A generateContent response (REST, camelCase) asking for two calls.
RESPONSE: dict[str, Any] = {
    "candidates": [
        {
            "content": {
                "role": "model",
                "parts": [
                    {"text": "Let me work that out."},
                    {"functionCall": {"name": "add", "args": {"a": 2, "b": 5}}},
                    {"functionCall": {"name": "echo", "args": {"text": "hello"}}},
                ],
            },
            "finishReason": "STOP",
            "index": 0,
        }
    ],
    "usageMetadata": {"promptTokenCount": 88, "candidatesTokenCount": 24},
    "modelVersion": "gemini-2.5-flash",
}


class _FunctionCall(BaseModel):
    """Stands in for google-genai's types.FunctionCall (snake_case attributes)."""

    id: str | None = None
    name: str | None = None
    args: dict[str, Any] | None = None


class _Part(BaseModel):
    text: str | None = None
    function_call: _FunctionCall | None = None


class _Content(BaseModel):
    role: str = "model"
    parts: list[_Part]


def test_function_calls_round_trip_to_function_response_parts(registry: ToolRegistry) -> None:
    calls = parse_gemini_function_calls(RESPONSE)

    assert calls == [
        ToolCall(None, "add", {"a": 2, "b": 5}),
        ToolCall(None, "echo", {"text": "hello"}),
    ]
    assert gemini_tool_content(run_tool_calls_sync(registry, calls)) == {
        "role": "user",
        "parts": [
            {"functionResponse": {"name": "add", "response": {"result": 7}}},
            {"functionResponse": {"name": "echo", "response": {"result": "hello"}}},
        ],
    }


def test_content_parts_and_single_part_parse_like_the_response() -> None:
    content = RESPONSE["candidates"][0]["content"]
    expected = parse_gemini_function_calls(RESPONSE)

    assert parse_gemini_function_calls(content) == expected
    assert parse_gemini_function_calls(content["parts"]) == expected
    assert parse_gemini_function_calls(content["parts"][1]) == expected[:1]
    assert parse_gemini_function_calls({"candidates": []}) == []


def test_sdk_objects_with_ids_are_read_and_the_id_is_echoed(registry: ToolRegistry) -> None:
    content = _Content(
        parts=[
            _Part(text="ok"),
            _Part(function_call=_FunctionCall(id="fc-1", name="word_count", args={"text": "a b"})),
        ]
    )

    calls = parse_gemini_function_calls(content)

    assert calls == [ToolCall("fc-1", "word_count", {"text": "a b"})]
    assert gemini_function_responses(run_tool_calls_sync(registry, calls)) == [
        {"functionResponse": {"id": "fc-1", "name": "word_count", "response": {"count": 2}}}
    ]


def test_bare_function_calls_parse_too() -> None:
    bare = [_FunctionCall(name="add", args={"a": 1, "b": 1}), {"name": "echo", "args": None}]

    assert parse_gemini_function_calls(bare) == [
        ToolCall(None, "add", {"a": 1, "b": 1}),
        ToolCall(None, "echo", {}),
    ]


def test_an_error_becomes_an_error_response_the_model_can_read(registry: ToolRegistry) -> None:
    calls = [ToolCall(None, "ad", {"a": 1, "b": 2})]

    [part] = gemini_function_responses(run_tool_calls_sync(registry, calls))

    error = part["functionResponse"]["response"]["error"]
    assert error["kind"] == "unknown_tool"
    assert "add" in error["details"]["suggestions"]


@pytest.mark.parametrize(
    ("payload", "words"),
    [
        ([{"functionCall": {"args": {}}}], "parts[0].functionCall.name"),
        ([{"functionCall": {"name": "add", "id": 5}}], "parts[0].functionCall.id"),
        ([{"functionCall": "add"}], "is a str"),
        ({"candidates": {"content": {}}}, "must be a list"),
        (1.5, "got float"),
    ],
)
def test_malformed_function_calls_raise_a_usage_error(payload: object, words: str) -> None:
    with pytest.raises(SatchelUsageError) as info:
        parse_gemini_function_calls(payload)

    assert words in info.value.message
