from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict

from satchel import SatchelUsageError, ToolRegistry, ToolResult
from satchel.providers import (
    ToolCall,
    openai_responses_outputs,
    openai_tool_messages,
    parse_openai_responses_calls,
    parse_openai_tool_calls,
    run_tool_calls_sync,
)

# An assistant message as Chat Completions returns it (choices[0].message).
CHAT_MESSAGE: dict[str, Any] = {
    "role": "assistant",
    "content": None,
    "refusal": None,
    "annotations": [],
    "tool_calls": [
        {
            "id": "call_Vx1ztw6bDk8Qk3jXvFqO2m5R",
            "type": "function",
            "function": {"name": "add", "arguments": '{"a": 40, "b": 2}'},
        },
        {
            "id": "call_q8QmHn1Rz0pLs2YwKtUe7a4B",
            "type": "function",
            "function": {
                "name": "word_count",
                "arguments": '{"text":"the quick brown fox"}',
            },
        },
    ],
}

# A Responses API response: reasoning, then a function call, then a message.
RESPONSE: dict[str, Any] = {
    "id": "resp_67ccd2bed1ec8190b14f964abc0542670bb6a6b452d3795b",
    "object": "response",
    "created_at": 1741476542,
    "status": "completed",
    "model": "gpt-4.1-2025-04-14",
    "output": [
        {"id": "rs_1", "type": "reasoning", "summary": []},
        {
            "id": "fc_67ccd2c0b3dc8190a8b0a73dc4c09bbe0bb6a6b452d3795b",
            "type": "function_call",
            "call_id": "call_12xyz",
            "name": "add",
            "arguments": '{"a":1,"b":2}',
            "status": "completed",
        },
        {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "Adding.", "annotations": []}],
        },
    ],
}


class _Function(BaseModel):
    model_config = ConfigDict(extra="allow")
    name: str
    arguments: str


class _ToolCallObject(BaseModel):
    model_config = ConfigDict(extra="allow")
    id: str
    type: str = "function"
    function: _Function


class _MessageObject(BaseModel):
    """Stands in for the openai SDK's ChatCompletionMessage (read by attribute)."""

    model_config = ConfigDict(extra="allow")
    role: str = "assistant"
    content: str | None = None
    tool_calls: list[_ToolCallObject] | None = None


def test_chat_message_round_trips_to_tool_messages_in_call_order(
    registry: ToolRegistry,
) -> None:
    calls = parse_openai_tool_calls(CHAT_MESSAGE)

    assert calls == [
        ToolCall("call_Vx1ztw6bDk8Qk3jXvFqO2m5R", "add", {"a": 40, "b": 2}),
        ToolCall("call_q8QmHn1Rz0pLs2YwKtUe7a4B", "word_count", {"text": "the quick brown fox"}),
    ]
    messages = openai_tool_messages(run_tool_calls_sync(registry, calls))
    assert messages == [
        {"role": "tool", "tool_call_id": "call_Vx1ztw6bDk8Qk3jXvFqO2m5R", "content": "42"},
        {
            "role": "tool",
            "tool_call_id": "call_q8QmHn1Rz0pLs2YwKtUe7a4B",
            "content": '{"count": 4}',
        },
    ]
    json.dumps(messages)  # ready to send


def test_tool_calls_list_and_single_tool_call_parse_like_the_message() -> None:
    from_message = parse_openai_tool_calls(CHAT_MESSAGE)

    assert parse_openai_tool_calls(CHAT_MESSAGE["tool_calls"]) == from_message
    assert parse_openai_tool_calls(CHAT_MESSAGE["tool_calls"][0]) == from_message[:1]


def test_sdk_objects_are_read_by_attribute() -> None:
    message = _MessageObject.model_validate(CHAT_MESSAGE)

    assert parse_openai_tool_calls(message) == parse_openai_tool_calls(CHAT_MESSAGE)
    assert parse_openai_tool_calls(message.tool_calls) == parse_openai_tool_calls(CHAT_MESSAGE)


def test_message_without_tool_calls_gives_no_calls() -> None:
    assert parse_openai_tool_calls({"role": "assistant", "content": "Hello!"}) == []
    assert parse_openai_tool_calls(_MessageObject(content="Hello!")) == []
    assert parse_openai_tool_calls({"role": "assistant", "tool_calls": None}) == []


def test_non_json_arguments_are_kept_raw_and_reported_as_invalid_arguments(
    registry: ToolRegistry,
) -> None:
    payload = [
        {"id": "call_1", "type": "function", "function": {"name": "add", "arguments": '{"a": 1,'}}
    ]

    [call] = parse_openai_tool_calls(payload)

    assert call.arguments == '{"a": 1,'
    [(_, result)] = run_tool_calls_sync(registry, [call])
    assert result.error is not None
    assert result.error.kind == "invalid_arguments"
    assert "not valid JSON" in result.error.message
    [message] = openai_tool_messages([(call, result)])
    assert message["content"].startswith("Error (invalid_arguments):")


def test_json_arguments_that_are_not_an_object_yield_invalid_arguments(
    registry: ToolRegistry,
) -> None:
    payload = [{"id": "c", "type": "function", "function": {"name": "add", "arguments": "[1, 2]"}}]

    [call] = parse_openai_tool_calls(payload)
    [(_, result)] = run_tool_calls_sync(registry, [call])

    assert result.error is not None
    assert result.error.kind == "invalid_arguments"
    assert "JSON object" in result.error.message


def test_arguments_sent_as_an_object_or_left_out_are_accepted() -> None:
    payload = [
        {"id": "c1", "type": "function", "function": {"name": "add", "arguments": {"a": 1}}},
        {"id": "c2", "type": "function", "function": {"name": "echo"}},
        {"id": "c3", "function": {"name": "add", "arguments": ""}},
    ]

    calls = parse_openai_tool_calls(payload)

    assert [c.arguments for c in calls] == [{"a": 1}, {}, ""]


def test_arguments_of_a_wrong_type_become_json_text_the_registry_rejects(
    registry: ToolRegistry,
) -> None:
    payload = [{"id": "c", "type": "function", "function": {"name": "add", "arguments": 7}}]

    [call] = parse_openai_tool_calls(payload)
    [(_, result)] = run_tool_calls_sync(registry, [call])

    assert call.arguments == "7"
    assert result.error is not None
    assert result.error.kind == "invalid_arguments"


def test_custom_tool_calls_are_skipped() -> None:
    payload = [
        {"id": "c1", "type": "custom", "custom": {"name": "grammar", "input": "x"}},
        {"id": "c2", "type": "function", "function": {"name": "add", "arguments": "{}"}},
    ]

    assert [c.id for c in parse_openai_tool_calls(payload)] == ["c2"]


@pytest.mark.parametrize(
    ("payload", "words"),
    [
        (
            [{"type": "function", "function": {"name": "add", "arguments": "{}"}}],
            "tool_calls[0].id",
        ),
        ([{"id": "", "function": {"name": "add"}}], "tool_calls[0].id"),
        ([{"id": "c", "type": "function", "function": {"arguments": "{}"}}], "function.name"),
        ([{"id": "c", "type": "function", "function": {"name": 3}}], "function.name"),
        ([{"id": "c", "type": "function"}], "no `function`"),
        (["add"], "tool_calls[0] is a str"),
        ({"role": "assistant", "tool_calls": {"id": "c"}}, "must be a list"),
        ({"choices": [{"message": CHAT_MESSAGE}]}, "choices[0].message"),
        ({"unrelated": True}, "neither"),
        (42, "got int"),
        ("call add", "got str"),
    ],
)
def test_malformed_envelopes_raise_a_usage_error_naming_the_field(
    payload: object, words: str
) -> None:
    with pytest.raises(SatchelUsageError) as info:
        parse_openai_tool_calls(payload)

    assert words in info.value.message


def test_tool_messages_need_the_call_id() -> None:
    with pytest.raises(SatchelUsageError, match="has none"):
        openai_tool_messages([(ToolCall(None, "add", {}), ToolResult("add", 1))])


def test_responses_output_round_trips_to_function_call_outputs(registry: ToolRegistry) -> None:
    calls = parse_openai_responses_calls(RESPONSE)

    assert calls == [ToolCall("call_12xyz", "add", {"a": 1, "b": 2})]
    assert openai_responses_outputs(run_tool_calls_sync(registry, calls)) == [
        {"type": "function_call_output", "call_id": "call_12xyz", "output": "3"}
    ]


def test_responses_items_lists_and_single_items_parse_too() -> None:
    items = RESPONSE["output"]

    assert parse_openai_responses_calls(items) == parse_openai_responses_calls(RESPONSE)
    assert parse_openai_responses_calls(items[1]) == parse_openai_responses_calls(RESPONSE)
    assert parse_openai_responses_calls(items[2]) == []
    assert parse_openai_responses_calls({"role": "user", "content": "hi"}) == []


def test_responses_function_call_without_call_id_raises() -> None:
    item = {"type": "function_call", "id": "fc_1", "name": "add", "arguments": "{}"}

    with pytest.raises(SatchelUsageError, match=r"call_id"):
        parse_openai_responses_calls([item])


def test_responses_parser_rejects_what_is_not_a_response() -> None:
    with pytest.raises(SatchelUsageError, match="neither `output` nor `type`"):
        parse_openai_responses_calls({"id": "resp_1"})
    with pytest.raises(SatchelUsageError, match="got int"):
        parse_openai_responses_calls(3)
