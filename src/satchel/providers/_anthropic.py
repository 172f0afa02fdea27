"""Anthropic Messages: ``tool_use`` content blocks in, one ``tool_result`` user message out.

An assistant message's content holds blocks such as::

    {"type": "tool_use", "id": "toolu_01A", "name": "add", "input": {"a": 1, "b": 2}}

and every one of them is answered in the next user message::

    {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_01A", "content": "3", "is_error": false}]}
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

__all__ = ["anthropic_tool_results", "parse_anthropic_tool_uses"]


def _blocks(payload: object) -> list[Any]:
    items = as_list(payload)
    if items is not None:
        return items
    if not is_record(payload):
        raise SatchelUsageError(
            "parse_anthropic_tool_uses() takes an assistant message, its `content` list, or "
            f"one content block; got {type(payload).__name__}."
        )
    if get_field(payload, "type") not in (None, "message"):
        return [payload]  # a single content block
    content = get_field(payload, "content")
    if isinstance(content, str):
        return []  # a text-only message
    if content is not None:
        return item_list(content, "message.content")
    if get_field(payload, "role") is not None:
        return []
    raise SatchelUsageError(
        "parse_anthropic_tool_uses() got an object with neither `content` nor `type`; pass "
        "the message or its `content` list."
    )


def parse_anthropic_tool_uses(content_or_message: object) -> list[ToolCall]:
    """The ``tool_use`` blocks of an Anthropic Messages response, as calls.

    Args:
        content_or_message: The assistant message (a dict, or the SDK's ``Message``), its
            ``content`` list, or one content block.

    Returns:
        One :class:`ToolCall` per ``tool_use`` block, in order. Other blocks (text,
        thinking, and server-side tools such as ``server_tool_use``, which Anthropic runs
        itself) are skipped.

    Raises:
        SatchelUsageError: the payload is not a message or a list of blocks, or a
            ``tool_use`` block lacks its ``id`` or ``name``. An ``input`` that is not an
            object does not raise: running the call reports ``invalid_arguments``.

    Example:
        >>> calls = parse_anthropic_tool_uses(response)
        >>> results = await run_tool_calls(registry, calls)
        >>> messages += [{"role": "assistant", "content": response.content},
        ...              anthropic_tool_results(results)]
    """
    calls: list[ToolCall] = []
    for i, block in enumerate(_blocks(content_or_message)):
        if not is_record(block) or get_field(block, "type") != "tool_use":
            continue
        where = f"content[{i}]"
        calls.append(
            ToolCall(
                require_id(get_field(block, "id"), f"{where}.id", "Anthropic"),
                require_name(get_field(block, "name"), f"{where}.name"),
                normalize_arguments(get_field(block, "input")),
            )
        )
    return calls


def anthropic_tool_results(results: Iterable[tuple[ToolCall, ToolResult]]) -> dict[str, Any]:
    """The user message answering every call of the last assistant turn.

    Each result becomes ``{"type": "tool_result", "tool_use_id": ..., "content":
    result.to_text(), "is_error": not result.ok}``, in the order given. Anthropic wants
    all the answers to a turn in this one message, before any other content.

    Raises:
        SatchelUsageError: a call has no id.
    """
    return {
        "role": "user",
        "content": [
            {
                "type": "tool_result",
                "tool_use_id": answer_id(call, "anthropic_tool_results"),
                "content": result.to_text(),
                "is_error": not result.ok,
            }
            for call, result in results
        ],
    }
