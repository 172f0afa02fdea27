"""OpenAI: Chat Completions ``tool_calls`` and Responses API ``function_call`` items.

Chat Completions (an assistant message)::

    {"role": "assistant", "content": null, "tool_calls": [
        {"id": "call_abc", "type": "function",
         "function": {"name": "add", "arguments": "{\\"a\\": 1, \\"b\\": 2}"}}]}

is answered with one message per call::

    {"role": "tool", "tool_call_id": "call_abc", "content": "3"}

Responses API output items ``{"type": "function_call", "call_id", "name", "arguments"}``
are answered with ``{"type": "function_call_output", "call_id", "output"}`` input items.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from satchel._errors import SatchelUsageError
from satchel.providers._call import (
    ToolCall,
    answer_id,
    as_list,
    get_field,
    is_record,
    item_list,
    normalize_arguments,
    require_id,
    require_name,
)
from satchel.tools import ToolResult

__all__ = [
    "openai_responses_outputs",
    "openai_tool_messages",
    "parse_openai_responses_calls",
    "parse_openai_tool_calls",
]


def _chat_items(payload: object) -> list[Any]:
    items = as_list(payload)
    if items is not None:
        return items
    if not is_record(payload):
        raise SatchelUsageError(
            "parse_openai_tool_calls() takes an assistant message, its `tool_calls` list, or "
            f"the OpenAI SDK's objects; got {type(payload).__name__}."
        )
    tool_calls = get_field(payload, "tool_calls")
    if tool_calls is not None:
        return item_list(tool_calls, "message.tool_calls")
    if get_field(payload, "function") is not None:
        return [payload]  # a single tool call
    if get_field(payload, "choices") is not None:
        raise SatchelUsageError(
            "parse_openai_tool_calls() got a whole chat completion; pass "
            "`completion.choices[0].message` instead."
        )
    if get_field(payload, "role") is not None or get_field(payload, "content") is not None:
        return []  # a message without tool calls
    raise SatchelUsageError(
        "parse_openai_tool_calls() got an object with neither `tool_calls` nor `function`; "
        "pass the assistant message or its `tool_calls` list."
    )


def parse_openai_tool_calls(message_or_tool_calls: object) -> list[ToolCall]:
    """The function calls in an OpenAI Chat Completions assistant message.

    Args:
        message_or_tool_calls: The assistant message (a dict, or the SDK's
            ``ChatCompletionMessage``), its ``tool_calls`` list, or one tool call.

    Returns:
        One :class:`ToolCall` per ``function`` tool call, in order. Tool calls of other
        types (``custom``) are skipped: they carry free text, not arguments for a
        satchel tool. A message without tool calls gives ``[]``.

    Raises:
        SatchelUsageError: the payload is not a message or a list of tool calls, or a
            tool call lacks its ``id`` or ``function.name``. Bad ``arguments`` do not
            raise: they are kept in :attr:`ToolCall.arguments` and reported to the model
            as ``invalid_arguments`` when the call runs.

    Example:
        >>> calls = parse_openai_tool_calls(completion.choices[0].message)
        >>> results = await run_tool_calls(registry, calls)
        >>> messages.extend(openai_tool_messages(results))
    """
    calls: list[ToolCall] = []
    for i, item in enumerate(_chat_items(message_or_tool_calls)):
        where = f"tool_calls[{i}]"
        if not is_record(item):
            raise SatchelUsageError(f"{where} is a {type(item).__name__}, not a tool call.")
        kind = get_field(item, "type")
        if kind is not None and kind != "function":
            continue
        function = get_field(item, "function")
        if not is_record(function):
            raise SatchelUsageError(f"{where} has no `function` object with a name.")
        calls.append(
            ToolCall(
                require_id(get_field(item, "id"), f"{where}.id", "OpenAI"),
                require_name(get_field(function, "name"), f"{where}.function.name"),
                normalize_arguments(get_field(function, "arguments")),
            )
        )
    return calls


def openai_tool_messages(results: Iterable[tuple[ToolCall, ToolResult]]) -> list[dict[str, Any]]:
    """Chat Completions ``tool`` messages answering each call, in order.

    Each is ``{"role": "tool", "tool_call_id": ..., "content": result.to_text()}``; an
    error's text starts with ``Error (kind):`` so the model can tell it apart.

    Raises:
        SatchelUsageError: a call has no id.
    """
    return [
        {
            "role": "tool",
            "tool_call_id": answer_id(call, "openai_tool_messages"),
            "content": result.to_text(),
        }
        for call, result in results
    ]


def _responses_items(payload: object) -> list[Any]:
    items = as_list(payload)
    if items is not None:
        return items
    if not is_record(payload):
        raise SatchelUsageError(
            "parse_openai_responses_calls() takes a response, its `output` list, or one item; "
            f"got {type(payload).__name__}."
        )
    if get_field(payload, "type") is not None:
        return [payload]  # a single item
    output = get_field(payload, "output")
    if output is not None:
        return item_list(output, "response.output")
    if get_field(payload, "role") is not None:
        return []  # an input message
    raise SatchelUsageError(
        "parse_openai_responses_calls() got an object with neither `output` nor `type`; pass "
        "the response or its `output` list."
    )


def parse_openai_responses_calls(response_or_items: object) -> list[ToolCall]:
    """The function calls in an OpenAI Responses API response.

    Args:
        response_or_items: The response (a dict, or the SDK's ``Response``), its
            ``output`` list (or any list of input/output items), or one item.

    Returns:
        One :class:`ToolCall` per ``function_call`` item, in order, with
        ``id = call_id``. Every other item (messages, reasoning, built-in tool calls) is
        skipped.

    Raises:
        SatchelUsageError: the payload is not a response or a list of items, or a
            ``function_call`` item lacks its ``call_id`` or ``name``.
    """
    calls: list[ToolCall] = []
    for i, item in enumerate(_responses_items(response_or_items)):
        if not is_record(item) or get_field(item, "type") != "function_call":
            continue
        where = f"output[{i}]"
        calls.append(
            ToolCall(
                require_id(get_field(item, "call_id"), f"{where}.call_id", "OpenAI"),
                require_name(get_field(item, "name"), f"{where}.name"),
                normalize_arguments(get_field(item, "arguments")),
            )
        )
    return calls


def openai_responses_outputs(
    results: Iterable[tuple[ToolCall, ToolResult]],
) -> list[dict[str, Any]]:
    """Responses API ``function_call_output`` items answering each call, in order.

    Each is ``{"type": "function_call_output", "call_id": ..., "output":
    result.to_text()}``, ready to append to the next request's ``input``.

    Raises:
        SatchelUsageError: a call has no id.
    """
    return [
        {
            "type": "function_call_output",
            "call_id": answer_id(call, "openai_responses_outputs"),
            "output": result.to_text(),
        }
        for call, result in results
    ]
