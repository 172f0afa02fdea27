"""A local server that speaks Anthropic's Messages wire format (the documented request
and response JSON), scripted per test, for the real ``anthropic`` SDK."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, StreamingResponse
from starlette.routing import Route

Reply = Callable[[dict[str, Any]], tuple[int, dict[str, Any]]]


def message(
    text: str | None = None, calls: Sequence[tuple[str, dict[str, Any]]] = ()
) -> dict[str, Any]:
    """A ``message`` object with a text block and/or ``tool_use`` blocks."""
    content: list[dict[str, Any]] = []
    if text:
        content.append({"type": "text", "text": text})
    content += [
        {"type": "tool_use", "id": f"toolu_{index}_{name}", "name": name, "input": args}
        for index, (name, args) in enumerate(calls)
    ]
    return {
        "id": "msg_fake",
        "type": "message",
        "role": "assistant",
        "model": "fake-claude",
        "content": content,
        "stop_reason": "tool_use" if calls else "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 13, "output_tokens": 5},
    }


def error(status: int, kind: str, text: str) -> tuple[int, dict[str, Any]]:
    """An Anthropic error body."""
    return status, {"type": "error", "error": {"type": kind, "message": text}}


def scripted(steps: list[dict[str, Any]]) -> Reply:
    """Answer the n-th request with ``steps[n]`` (the last one repeats)."""
    count = {"n": 0}

    def reply(body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        step = steps[min(count["n"], len(steps) - 1)]
        count["n"] += 1
        return 200, step

    return reply


class FakeAnthropic:
    """The app; :attr:`requests` keeps every request body it received."""

    def __init__(self, reply: Reply) -> None:
        self.reply = reply
        self.requests: list[dict[str, Any]] = []
        self.app = Starlette(routes=[Route("/v1/messages", self._messages, methods=["POST"])])

    async def _messages(self, request: Request) -> JSONResponse:
        keys = {request.headers.get("x-api-key"), request.headers.get("authorization")}
        if not keys & {"test-key", "Bearer test-key"}:  # SDK versions send either
            status, body = error(401, "authentication_error", "invalid x-api-key")
            return JSONResponse(body, status_code=status)
        body = await request.json()
        self.requests.append(body)
        status, payload = self.reply(body)
        if body.get("stream") and status == 200:
            return StreamingResponse(_sse(payload), media_type="text/event-stream")
        return JSONResponse(payload, status_code=status)


def _event(kind: str, data: dict[str, Any]) -> str:
    return f"event: {kind}\ndata: {json.dumps({'type': kind, **data})}\n\n"


async def _sse(message: dict[str, Any]) -> AsyncIterator[str]:
    """``message`` as the events a streaming Messages server sends: text in pieces,
    each ``tool_use`` block's JSON input in two partial pieces, then the usage."""
    start = {**message, "content": [], "usage": {"input_tokens": 13, "output_tokens": 0}}
    yield _event("message_start", {"message": start})
    for index, block in enumerate(message["content"]):
        if block["type"] == "text":
            yield _event(
                "content_block_start",
                {"index": index, "content_block": {"type": "text", "text": ""}},
            )
            text = block["text"]
            for at in range(0, len(text), 4):
                delta = {"type": "text_delta", "text": text[at : at + 4]}
                yield _event("content_block_delta", {"index": index, "delta": delta})
        else:
            head = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            yield _event("content_block_start", {"index": index, "content_block": head})
            raw = json.dumps(block["input"])
            for part in (raw[: len(raw) // 2], raw[len(raw) // 2 :]):
                delta = {"type": "input_json_delta", "partial_json": part}
                yield _event("content_block_delta", {"index": index, "delta": delta})
        yield _event("content_block_stop", {"index": index})
    yield _event(
        "message_delta",
        {"delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
         "usage": {"output_tokens": 5}},
    )  # fmt: skip
    yield _event("message_stop", {})
