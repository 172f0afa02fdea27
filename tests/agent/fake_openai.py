"""A local server that speaks OpenAI's Chat Completions wire format (the documented
request and response JSON), scripted per test, so the real ``openai`` SDK can be
driven with no network (a ``satchel run`` subprocess reaches it by ``--base-url``)."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

Reply = Callable[[dict[str, Any]], tuple[int, dict[str, Any]]]


def completion(
    text: str | None = None, calls: Sequence[tuple[str, dict[str, Any]]] = ()
) -> dict[str, Any]:
    """A ``chat.completion`` object with ``text`` and/or tool calls."""
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if calls:
        message["tool_calls"] = [
            {
                "id": f"call_{index}_{name}",
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(args)},
            }
            for index, (name, args) in enumerate(calls)
        ]
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": "fake-model",
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if calls else "stop",
            }
        ],
        "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18},
    }


def error(status: int, message: str, code: str | None = None) -> tuple[int, dict[str, Any]]:
    """An OpenAI error body."""
    return status, {"error": {"message": message, "type": "invalid_request_error", "code": code}}


def scripted(steps: list[dict[str, Any]]) -> Reply:
    """Answer the n-th request with ``steps[n]`` (the last one repeats)."""
    count = {"n": 0}

    def reply(body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        step = steps[min(count["n"], len(steps) - 1)]
        count["n"] += 1
        return 200, step

    return reply


class FakeOpenAI:
    """The app; :attr:`requests` keeps every request body it received."""

    def __init__(self, reply: Reply) -> None:
        self.reply = reply
        self.requests: list[dict[str, Any]] = []
        self.app = Starlette(routes=[Route("/v1/chat/completions", self._chat, methods=["POST"])])

    async def _chat(self, request: Request) -> JSONResponse:
        if request.headers.get("authorization") != "Bearer test-key":
            return JSONResponse(error(401, "Incorrect API key provided.")[1], status_code=401)
        body = await request.json()
        self.requests.append(body)
        status, payload = self.reply(body)
        return JSONResponse(payload, status_code=status)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def serving(fake: FakeOpenAI) -> Iterator[str]:
    """Serve ``fake`` on a free loopback port in a thread; yields the base URL."""
    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(fake.app, host="127.0.0.1", port=port, log_level="error")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline:
            raise RuntimeError("the fake OpenAI server did not start")
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
