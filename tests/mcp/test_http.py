"""``satchel serve --http`` as a real process on a loopback port: SDK clients, the bearer
token, and hostile requests."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import anyio
import httpx
import mcp_types as types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from .conftest import EXAMPLES, MEMORY_TOOLS, STARTUP, http_server, http_transport, raw_stdio

pytestmark = pytest.mark.anyio

TOKEN = "correct horse battery staple"
MODERN = "2026-07-28"


def _modern_call(name: str, arguments: dict[str, Any]) -> tuple[dict[str, str], bytes]:
    """A complete 2026-07-28 ``tools/call`` as one raw HTTP request."""
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            "name": name,
            "arguments": arguments,
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": MODERN,
                "io.modelcontextprotocol/clientCapabilities": {},
            },
        },
    }
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": MODERN,
        "Mcp-Method": "tools/call",
        "Mcp-Name": name,
    }
    return headers, json.dumps(body).encode()


async def test_two_clients_at_once_both_land_every_write() -> None:
    with anyio.fail_after(STARTUP + 30):
        async with http_server("--tools", EXAMPLES, "--token", TOKEN) as url:

            async def writer(mode: str, who: str) -> None:
                async with Client(http_transport(url, TOKEN), mode=mode) as client:
                    for i in range(10):
                        result = await client.call_tool(
                            "notes",
                            {"operation": "write", "title": f"{who}-{i}", "content": f"{who} {i}"},
                        )
                        assert result.is_error is False

            async with anyio.create_task_group() as tg:
                tg.start_soon(writer, "legacy", "ann")
                tg.start_soon(writer, "auto", "bob")

            async with Client(http_transport(url, TOKEN)) as reader:
                found = [
                    await reader.call_tool("notes", {"operation": "read", "title": f"{who}-{i}"})
                    for who in ("ann", "bob")
                    for i in range(10)
                ]

    assert [r.structured_content["content"] for r in found if r.structured_content] == [
        f"{who} {i}" for who in ("ann", "bob") for i in range(10)
    ]


async def test_a_missing_or_wrong_token_gets_401_and_nothing_runs() -> None:
    headers, write = _modern_call(
        "notes", {"operation": "write", "title": "secret", "content": "leaked"}
    )
    _, read = _modern_call("notes", {"operation": "read", "title": "secret"})
    with anyio.fail_after(STARTUP + 30):
        async with http_server("--tools", EXAMPLES, env={"SATCHEL_TOKEN": TOKEN}) as url:
            async with httpx.AsyncClient(timeout=30) as http:
                missing = await http.post(url, headers=headers, content=write)
                wrong = await http.post(
                    url, headers={**headers, "Authorization": "Bearer guess"}, content=write
                )
                basic = await http.post(
                    url, headers={**headers, "Authorization": f"Basic {TOKEN}"}, content=write
                )
                after = await http.post(
                    url, headers={**headers, "Authorization": f"Bearer {TOKEN}"}, content=read
                )
            async with Client(http_transport(url, TOKEN)) as client:
                tools = await client.list_tools()

    for refused in (missing, wrong, basic):
        assert refused.status_code == 401
        assert refused.headers["www-authenticate"].startswith("Bearer")
    assert after.status_code == 200
    assert after.json()["result"]["isError"] is True  # the refused write never ran
    assert "no note titled 'secret'" in after.json()["result"]["content"][0]["text"]
    assert len(tools.tools) == 4 + len(MEMORY_TOOLS)


async def test_a_client_without_the_token_cannot_connect() -> None:
    with anyio.fail_after(STARTUP + 30):
        async with http_server("--tools", EXAMPLES, "--token", TOKEN) as url:
            with pytest.raises(BaseException) as raised:  # noqa: PT011 - checked below
                async with Client(http_transport(url, "not the token"), mode="legacy"):
                    pass

    errors = list(_leaves(raised.value))
    assert errors
    assert all(isinstance(e, MCPError) for e in errors), errors


def _leaves(exc: BaseException) -> Iterator[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:  # pyright: ignore[reportUnknownVariableType]
            yield from _leaves(inner)  # pyright: ignore[reportUnknownArgumentType]
    else:
        yield exc


async def test_bad_http_bodies_get_errors_and_the_server_keeps_serving() -> None:
    base = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    headers, _ = _modern_call("add", {})
    with anyio.fail_after(STARTUP + 30):
        async with http_server("--tools", EXAMPLES) as url:
            async with httpx.AsyncClient(timeout=30) as http:
                not_json = await http.post(url, headers=base, content=b"{not json")
                modern_not_json = await http.post(url, headers=headers, content=b"{not json")
                not_rpc = await http.post(url, headers=base, content=b'{"hello": "world"}')
                wrong_params = _modern_call("add", {})[1].replace(
                    b'"arguments": {}', b'"arguments": "1 + 2"'
                )
                bad_params = await http.post(url, headers=headers, content=wrong_params)
                unknown = await http.post(
                    url,
                    headers={**headers, "Mcp-Method": "tools/frobnicate"},
                    content=wrong_params.replace(b'"tools/call"', b'"tools/frobnicate"'),
                )
            too_large = await _declared_body(url, 64 * 1024 * 1024)
            async with Client(http_transport(url)) as client:
                fine = await client.call_tool("add", {"a": 1, "b": 1})

    assert not_json.status_code == 400
    assert not_json.json()["error"]["code"] == -32700
    assert modern_not_json.json()["error"]["code"] == -32700
    assert not_rpc.status_code == 400
    assert bad_params.json()["error"]["code"] == -32602
    assert unknown.json()["error"]["code"] in (-32601, -32602)
    assert too_large.startswith(b"HTTP/1.1 413")
    assert isinstance(fine.content[0], types.TextContent)
    assert fine.structured_content == {"result": 2}


async def _declared_body(url: str, size: int) -> bytes:
    """POST a request that declares ``size`` bytes of body, and return the reply's start
    (the server must refuse it from the header alone)."""
    parts = urlsplit(url)
    assert parts.hostname is not None
    assert parts.port is not None
    async with await anyio.connect_tcp(parts.hostname, parts.port) as stream:
        await stream.send(
            (
                f"POST {parts.path} HTTP/1.1\r\nHost: {parts.netloc}\r\n"
                "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
                f"Content-Length: {size}\r\n\r\n"
            ).encode()
        )
        return await stream.receive()


IDLE_SOCKETS = 400


async def _idle_sockets(url: str, count: int, start: bytes) -> list[anyio.abc.SocketStream]:
    """``count`` connections that each send ``start`` (part of a request) and stop."""
    parts = urlsplit(url)
    assert parts.hostname is not None
    assert parts.port is not None
    sockets: list[anyio.abc.SocketStream] = []
    for _ in range(count):
        stream = await anyio.connect_tcp(parts.hostname, parts.port)
        sockets.append(stream)
        if start:
            await stream.send(start)
    return sockets


async def _until_closed(stream: anyio.abc.SocketStream) -> bytes:
    """Everything the server sends on ``stream`` until it closes the connection."""
    received = b""
    while True:
        try:
            received += await stream.receive()
        except (anyio.EndOfStream, anyio.BrokenResourceError):
            return received


async def test_a_client_with_the_token_is_served_while_hundreds_of_idle_sockets_are_open() -> None:
    # The server may open 256 files; before idle connections were shed, 400 of them
    # used every descriptor and no other client got in.
    with anyio.fail_after(STARTUP + 60):
        async with http_server("--tools", EXAMPLES, "--token", TOKEN, open_files=256) as url:
            idle = await _idle_sockets(url, IDLE_SOCKETS, b"POST /mc")
            try:
                async with Client(http_transport(url, TOKEN)) as client:
                    total = await client.call_tool("add", {"a": 2, "b": 3})
            finally:
                for stream in idle:
                    await stream.aclose()

    assert total.structured_content == {"result": 5}


async def test_connections_that_send_no_complete_request_are_closed_after_the_timeout() -> None:
    with anyio.fail_after(STARTUP + 60):
        async with http_server(
            "--tools", EXAMPLES, env={"SATCHEL_HTTP_REQUEST_TIMEOUT": "1"}
        ) as url:
            partial = await _idle_sockets(url, 50, b"POST /mcp HTTP/1.1\r\nHost: x\r\n")
            silent = await _idle_sockets(url, 5, b"")
            half_body = await _idle_sockets(
                url,
                5,
                b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                b"Accept: application/json, text/event-stream\r\nContent-Length: 100\r\n\r\n{",
            )
            replies: list[bytes] = []
            for stream in [*partial, *silent, *half_body]:
                replies.append(await _until_closed(stream))
                await stream.aclose()
            async with Client(http_transport(url)) as client:
                fine = await client.call_tool("add", {"a": 1, "b": 1})

    assert all(r.startswith(b"HTTP/1.1 408 ") for r in replies[:50])
    assert replies[50:55] == [b""] * 5
    assert fine.structured_content == {"result": 2}


async def test_every_http_request_gets_an_answer_naming_what_is_wrong() -> None:
    base = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    initialize = {
        "jsonrpc": "2.0",
        "id": "init",
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "raw-test", "version": "0"},
        },
    }
    modern_headers, _ = _modern_call("add", {})
    with anyio.fail_after(STARTUP + 30):
        async with http_server("--tools", EXAMPLES) as url, httpx.AsyncClient(timeout=30) as http:
            opened = await http.post(url, headers=base, json=initialize)
            session = {
                **base,
                "Mcp-Session-Id": opened.headers["mcp-session-id"],
                "MCP-Protocol-Version": "2025-11-25",
            }
            await http.post(
                url,
                headers=session,
                json={"jsonrpc": "2.0", "method": "notifications/initialized"},
            )
            odd: list[httpx.Response] = []
            for raw_id in (b"true", b"1.5", b'{"a": 1}', b"null"):
                body = b'{"jsonrpc": "2.0", "id": %s, "method": "ping"}' % raw_id
                odd.append(await http.post(url, headers=session, content=body))
                odd.append(await http.post(url, headers=modern_headers, content=body))
            bad_params = await http.post(
                url,
                headers=session,
                json={
                    "jsonrpc": "2.0",
                    "id": 5,
                    "method": "tools/call",
                    "params": {"name": "add", "arguments": "1 + 2"},
                },
            )

    for reply in odd:
        assert reply.status_code == 400
        assert reply.json()["id"] is None
        assert reply.json()["error"]["code"] == -32600
    assert "'id' must be a string or an integer" in odd[0].json()["error"]["message"]
    assert "params.arguments" in _sse_or_json(bad_params)["error"]["message"]


def _sse_or_json(response: httpx.Response) -> dict[str, Any]:
    if response.headers["content-type"].startswith("text/event-stream"):
        data = [line[5:] for line in response.text.splitlines() if line.startswith("data:")]
        return json.loads(next(d for d in data if d.strip()))
    return response.json()


MALFORMED = [
    b'{"jsonrpc": "2.0", "id": 3, "method": "ping", "params": []}',
    b'{"jsonrpc": "2.0", "id": 4, "method": 5}',
    b'{"jsonrpc": "1.0", "id": 6, "method": "ping"}',
    b'[{"jsonrpc": "2.0", "id": 8, "method": "ping"}]',
    b'"just a string"',
    b"this is not json",
]


async def test_a_malformed_frame_gets_the_same_answer_over_http_and_stdio() -> None:
    base = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    over_http: list[httpx.Response] = []
    over_stdio: list[dict[str, Any]] = []
    with anyio.fail_after(STARTUP + 60):
        async with http_server("--tools", EXAMPLES) as url, httpx.AsyncClient(timeout=30) as http:
            for frame in MALFORMED:
                over_http.append(await http.post(url, headers=base, content=frame))
        async with raw_stdio("--tools", EXAMPLES) as raw:
            for frame in MALFORMED:
                await raw.send_bytes(frame + b"\n")
                over_stdio.append(await raw.receive())

    for frame, answer, expected in zip(MALFORMED, over_http, over_stdio, strict=True):
        assert answer.status_code == 400, frame
        assert answer.json() == expected, frame
    codes = [r["error"]["code"] for r in over_stdio]
    assert codes == [-32600, -32600, -32600, -32600, -32600, -32700]
    assert [r["id"] for r in over_stdio][:3] == [3, 4, 6]  # the frame's own id
    assert all("pydantic" not in r["error"]["message"] for r in over_stdio)
