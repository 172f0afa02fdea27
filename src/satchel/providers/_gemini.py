"""Gemini: ``functionCall`` parts in, ``functionResponse`` parts out.

A model turn holds parts such as ``{"functionCall": {"name": "add", "args": {"a": 1}}}``
(with an optional ``id``); each is answered by a part
``{"functionResponse": {"name": "add", "response": {...}}}`` (with the same ``id`` when the
call had one) in a ``user`` turn. Both the REST API's camelCase keys and the Python SDK's
snake_case attributes (``function_call``) are read.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from satchel._errors import SatchelUsageError
from satchel.providers._call import (
    ToolCall,
    as_list,
    get_field,
    is_record,
    item_list,
    normalize_arguments,
    optional_id,
    require_name,
)
from satchel.tools import ToolResult

__all__ = ["gemini_function_responses", "gemini_tool_content", "parse_gemini_function_calls"]


def _parts(payload: object) -> list[Any]:
    items = as_list(payload)
    if items is not None:
        return items
    if not is_record(payload):
        raise SatchelUsageError(
            "parse_gemini_function_calls() takes a response, a content, its `parts` list, or "
            f"one part; got {type(payload).__name__}."
        )
    candidates = get_field(payload, "candidates")
    if candidates is not None:
        # Like the SDK's `response.function_calls`: the first candidate's calls.
        first = item_list(candidates, "response.candidates")[:1]
        payload = get_field(first[0], "content") if first else None
        if payload is None:
            return []
    parts = get_field(payload, "parts")
    if parts is not None:
        return item_list(parts, "content.parts")
    return [payload]  # a single part, or a bare function call


def parse_gemini_function_calls(response_or_content: object) -> list[ToolCall]:
    """The function calls of a Gemini ``generateContent`` answer.

    Args:
        response_or_content: The response (its first candidate is read, as the SDK's
            ``response.function_calls`` does), a model ``Content``, its ``parts`` list,
            one part, or bare ``FunctionCall`` objects. Dicts in the REST shape and the
            ``google-genai`` SDK's objects are both accepted.

    Returns:
        One :class:`ToolCall` per ``functionCall`` part, in order; ``id`` is ``None``
        when Gemini sent none. Text and other parts are skipped.

    Raises:
        SatchelUsageError: the payload is not one of the shapes above, or a function call
            has no ``name``. ``args`` that are not an object do not raise: running the
            call reports ``invalid_arguments``.
    """
    calls: list[ToolCall] = []
    for i, part in enumerate(_parts(response_or_content)):
        if not is_record(part):
            continue
        call = get_field(part, "functionCall", "function_call")
        if call is None:
            if not isinstance(get_field(part, "name"), str):
                continue  # text, inline data, a thought
            call = part  # a bare FunctionCall
        where = f"parts[{i}].functionCall"
        if not is_record(call):
            raise SatchelUsageError(f"{where} is a {type(call).__name__}, not a function call.")
        calls.append(
            ToolCall(
                optional_id(get_field(call, "id"), f"{where}.id"),
                require_name(get_field(call, "name"), f"{where}.name"),
                normalize_arguments(get_field(call, "args")),
            )
        )
    return calls


def _response_body(result: ToolResult) -> dict[str, Any]:
    if result.error is not None:
        return {"error": result.error.to_dict()}
    structured = result.structured()
    if structured is not None:
        return structured
    return {"result": result.to_dict()["output"]}


def gemini_function_responses(
    results: Iterable[tuple[ToolCall, ToolResult]],
) -> list[dict[str, Any]]:
    """``functionResponse`` parts answering each call, in order.

    ``response`` is the structured output (``{"result": value}`` for a plain value or
    text), or ``{"error": {"kind", "message", "details"}}`` for an error, as Gemini's
    documentation suggests. The call's ``id`` is echoed when it had one.
    """
    parts: list[dict[str, Any]] = []
    for call, result in results:
        body: dict[str, Any] = {}
        if call.id is not None:
            body["id"] = call.id
        body["name"] = call.name
        body["response"] = _response_body(result)
        parts.append({"functionResponse": body})
    return parts


def gemini_tool_content(results: Iterable[tuple[ToolCall, ToolResult]]) -> dict[str, Any]:
    """The ``user`` content answering a model turn: ``{"role": "user", "parts":
    gemini_function_responses(results)}``."""
    return {"role": "user", "parts": gemini_function_responses(results)}
