from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict

from satchel import SatchelUsageError, ToolRegistry, ToolResult
from satchel.providers import (
    ToolCall,
    anthropic_tool_results,
    parse_anthropic_tool_uses,
    run_tool_calls_sync,
)

# A Messages API response that stopped to use tools.
MESSAGE: dict[str, Any] = {
    "id": "msg_01Aq9w938a90dw8q",
    "type": "message",
    "role": "assistant",
    "model": "claude-sonnet-4-5",
    "content": [
        {"type": "text", "text": "I'll add those and write a note."},
        {
            "type": "tool_use",
            "id": "toolu_01A09q90qw90lq917835lq9",
            "name": "add",
            "input": {"a": 19, "b": 23},
        },
        {
            "type": "tool_use",
            "id": "toolu_01B7bK2d4XcJ3cZkU1aXyQ8s",
            "name": "notes",
            "input": {"operation": "read", "title": "shopping"},
        },
    ],
    "stop_reason": "tool_use",
    "stop_sequence": None,
    "usage": {"input_tokens": 512, "output_tokens": 96},
}


class _Block(BaseModel):
    """Stands in for the anthropic SDK's content blocks (read by attribute)."""

    model_config = ConfigDict(extra="allow")
    type: str


class _Message(BaseModel):
    model_config = ConfigDict(extra="allow")
    role: str
    content: list[_Block]


def test_tool_uses_round_trip_to_one_user_message_with_errors_flagged(
    registry: ToolRegistry,
) -> None:
    calls = parse_anthropic_tool_uses(MESSAGE)

    assert calls == [
        ToolCall("toolu_01A09q90qw90lq917835lq9", "add", {"a": 19, "b": 23}),
        ToolCall(
            "toolu_01B7bK2d4XcJ3cZkU1aXyQ8s", "notes", {"operation": "read", "title": "shopping"}
        ),
    ]
    reply = anthropic_tool_results(run_tool_calls_sync(registry, calls))
    assert reply["role"] == "user"
    first, second = reply["content"]
    assert first == {
        "type": "tool_result",
        "tool_use_id": "toolu_01A09q90qw90lq917835lq9",
        "content": "42",
        "is_error": False,
    }
    assert second["tool_use_id"] == "toolu_01B7bK2d4XcJ3cZkU1aXyQ8s"
    assert second["is_error"] is True
    assert second["content"].startswith("Error (retry): There is no note titled 'shopping'")


def test_sdk_message_content_list_and_single_block_parse_alike() -> None:
    expected = parse_anthropic_tool_uses(MESSAGE)
    sdk_message = _Message.model_validate(MESSAGE)

    assert parse_anthropic_tool_uses(sdk_message) == expected
    assert parse_anthropic_tool_uses(sdk_message.content) == expected
    assert parse_anthropic_tool_uses(MESSAGE["content"]) == expected
    assert parse_anthropic_tool_uses(MESSAGE["content"][1]) == expected[:1]


def test_text_thinking_and_server_tool_blocks_are_skipped() -> None:
    content = [
        {"type": "thinking", "thinking": "Let me search.", "signature": "sig"},
        {
            "type": "server_tool_use",
            "id": "srvtoolu_01",
            "name": "web_search",
            "input": {"query": "x"},
        },
        {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_01", "content": []},
        {"type": "text", "text": "Done."},
    ]

    assert parse_anthropic_tool_uses(content) == []
    assert parse_anthropic_tool_uses({"role": "assistant", "content": "Just text."}) == []


def test_input_that_is_not_an_object_yields_invalid_arguments(registry: ToolRegistry) -> None:
    block = {"type": "tool_use", "id": "toolu_1", "name": "add", "input": [1, 2]}

    [call] = parse_anthropic_tool_uses([block])
    [(_, result)] = run_tool_calls_sync(registry, [call])

    assert result.error is not None
    assert result.error.kind == "invalid_arguments"
    assert anthropic_tool_results([(call, result)])["content"][0]["is_error"] is True


def test_tool_use_without_input_means_no_arguments() -> None:
    block = {"type": "tool_use", "id": "toolu_1", "name": "list_things"}

    assert parse_anthropic_tool_uses([block]) == [ToolCall("toolu_1", "list_things", {})]


@pytest.mark.parametrize(
    ("payload", "words"),
    [
        ([{"type": "tool_use", "name": "add", "input": {}}], "content[0].id"),
        ([{"type": "tool_use", "id": 12, "name": "add", "input": {}}], "content[0].id"),
        ([{"type": "tool_use", "id": "toolu_1", "input": {}}], "content[0].name"),
        ({"role": "assistant", "content": {"type": "text"}}, "must be a list"),
        ({"id": "msg_1"}, "neither"),
        (None, "got NoneType"),
    ],
)
def test_malformed_tool_use_envelopes_raise_a_usage_error(payload: object, words: str) -> None:
    with pytest.raises(SatchelUsageError) as info:
        parse_anthropic_tool_uses(payload)

    assert words in info.value.message


def test_tool_results_need_the_call_id() -> None:
    with pytest.raises(SatchelUsageError, match="has none"):
        anthropic_tool_results([(ToolCall(None, "add", {}), ToolResult("add", 1))])
