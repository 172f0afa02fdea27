"""A local server that speaks OpenAI's Chat Completions wire format (the documented
request and response JSON), scripted per test, so the real ``openai`` SDK can be
driven with no network (a ``satchel run`` subprocess reaches it by ``--base-url``)."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
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


HOLD = {"hold": True}
"""A step of :func:`scripted` that answers nothing: the server holds the request until
the client goes away (a model that takes forever)."""


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
        self.holding = threading.Event()
        """Set once a request the script answers with :data:`HOLD` has arrived."""
        self.app = Starlette(routes=[Route("/v1/chat/completions", self._chat, methods=["POST"])])

    async def _chat(self, request: Request) -> Response:
        if request.headers.get("authorization") != "Bearer test-key":
            return JSONResponse(error(401, "Incorrect API key provided.")[1], status_code=401)
        body = await request.json()
        self.requests.append(body)
        status, payload = self.reply(body)
        if payload is HOLD:
            self.holding.set()
            while (await request.receive())["type"] != "http.disconnect":
                pass
            return Response(status_code=499)  # to nobody: the client has gone
        if body.get("stream") and status == 200:
            return StreamingResponse(_sse(payload), media_type="text/event-stream")
        return JSONResponse(payload, status_code=status)


_STREAM_HEAD = (
    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
)


@contextmanager
def silent_server(*, starts: bool = False) -> Iterator[str]:
    """A server that accepts connections and never answers (``starts``: that sends the
    head of a streamed response, then nothing); yields its base URL."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(16)
        port = listener.getsockname()[1]
        accepted: list[socket.socket] = []
        closing = threading.Event()

        def accept() -> None:
            while not closing.is_set():
                try:
                    connection = listener.accept()[0]
                    accepted.append(connection)
                    if starts:
                        connection.recv(65536)  # the request (small enough for one read)
                        connection.sendall(_STREAM_HEAD)
                except OSError:  # the listener closed
                    return

        thread = threading.Thread(target=accept, daemon=True)
        thread.start()
        try:
            yield f"http://127.0.0.1:{port}/v1"
        finally:
            closing.set()
            listener.shutdown(socket.SHUT_RDWR)
            for connection in accepted:
                connection.close()
            thread.join(timeout=10)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def serving(fake: FakeOpenAI | Any) -> Iterator[str]:
    """Serve ``fake`` (any object with an ASGI ``app``) on a free loopback port in a
    thread; yields the base URL once the server listens."""
    port = free_port()
    ready = threading.Event()

    class _Server(uvicorn.Server):
        async def startup(self, sockets: Any = None) -> None:
            await super().startup(sockets)
            ready.set()

    server = _Server(uvicorn.Config(fake.app, host="127.0.0.1", port=port, log_level="error"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    if not ready.wait(timeout=30):  # a hang guard
        raise RuntimeError("the fake server did not start")
    try:
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def _chunk(choices: list[dict[str, Any]], usage: Any = None) -> str:
    body = {
        "id": "chatcmpl-fake",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": "fake-model",
        "choices": choices,
        "usage": usage,
    }
    return f"data: {json.dumps(body)}\n\n"


async def _sse(completion: dict[str, Any]) -> AsyncIterator[str]:
    """``completion`` as the chunks a streaming server sends: the text in pieces, each
    tool call's id and name first and its arguments in two pieces, then the finish
    reason, the usage, and ``[DONE]``."""
    choice = completion["choices"][0]
    message = choice["message"]
    yield _chunk([{"index": 0, "delta": {"role": "assistant"}, "finish_reason": None}])
    text = message.get("content") or ""
    for start in range(0, len(text), 4):
        piece = text[start : start + 4]
        yield _chunk([{"index": 0, "delta": {"content": piece}, "finish_reason": None}])
    for index, call in enumerate(message.get("tool_calls") or ()):
        head = {"index": index, "id": call["id"], "type": "function"}
        head["function"] = {"name": call["function"]["name"], "arguments": ""}
        yield _chunk([{"index": 0, "delta": {"tool_calls": [head]}, "finish_reason": None}])
        arguments = call["function"]["arguments"]
        half = len(arguments) // 2
        for part in (arguments[:half], arguments[half:]):
            delta = {"tool_calls": [{"index": index, "function": {"arguments": part}}]}
            yield _chunk([{"index": 0, "delta": delta, "finish_reason": None}])
    yield _chunk([{"index": 0, "delta": {}, "finish_reason": choice["finish_reason"]}])
    yield _chunk([], usage=completion["usage"])
    yield "data: [DONE]\n\n"
