"""``satchel serve`` over stdio as a real process: through the SDK client, and through
raw frames from a hostile client."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client

from .conftest import EXAMPLES, MEMORY_TOOLS, STARTUP, raw_stdio, satchel_stdio

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_the_sdk_client_lists_and_calls_every_demo_tool_over_stdio(mode: str) -> None:
    with anyio.fail_after(STARTUP):
        async with Client(satchel_stdio("--tools", EXAMPLES), mode=mode) as client:
            assert client.server_info is not None
            assert client.server_info.name == "satchel"
            tools = {t.name: t for t in (await client.list_tools()).tools}
            count = await client.call_tool("word_count", {"text": "a b c d"})
            total = await client.call_tool("add", {"a": 1, "b": 2})
            echo = await client.call_tool("echo", {"text": "ping"})
            wrote = await client.call_tool(
                "notes", {"operation": "write", "title": "k", "content": "v"}
            )
            read = await client.call_tool("notes", {"operation": "read", "title": "k"})
            deleted = await client.call_tool("notes", {"operation": "delete", "title": "k"})
            kept = await client.call_tool("notes", {"operation": "read", "title": "k"})
            wrong = await client.call_tool("add", {"a": [], "b": 2})

    assert set(tools) == {"word_count", "add", "notes", "echo", *MEMORY_TOOLS}
    assert tools["word_count"].annotations is not None
    assert tools["word_count"].annotations.read_only_hint is True
    assert tools["word_count"].output_schema is not None
    assert count.structured_content == {"count": 4}
    assert total.structured_content == {"result": 3}
    assert isinstance(echo.content[0], types.TextContent)
    assert echo.content[0].text == "ping"
    assert wrote.structured_content == {"title": "k", "content": "v", "status": "written"}
    assert read.structured_content == {"title": "k", "content": "v", "status": "read"}
    # A destructive operation waits for a human: nothing is deleted yet.
    assert deleted.is_error is True
    assert deleted.meta is not None
    assert deleted.meta["satchel/error"]["kind"] == "needs_approval"
    assert deleted.meta["satchel/error"]["details"]["status"] == "pending_confirmation"
    assert kept.structured_content == {"title": "k", "content": "v", "status": "read"}
    assert wrong.is_error is True
    assert isinstance(wrong.content[0], types.TextContent)
    assert wrong.content[0].text.startswith("Error (invalid_arguments)")


async def test_malformed_frames_get_json_rpc_errors_and_the_server_keeps_serving() -> None:
    with anyio.fail_after(STARTUP):
        async with raw_stdio("--tools", EXAMPLES) as raw:
            await raw.send_bytes(b"this is not json\n")
            not_json = await raw.receive()
            await raw.send_bytes(b'{"jsonrpc": "2.0", "id": 7, "method": 12}\n')
            bad_method = await raw.receive()
            await raw.send_bytes(b'[{"jsonrpc": "2.0", "id": 8, "method": "ping"}]\n')
            batch = await raw.receive()
            await raw.send_bytes(b'"just a string"\n')
            scalar = await raw.receive()
            await raw.send_bytes(b"\xff\xfe\n")
            binary = await raw.receive()
            await raw.send_bytes(b"\n   \n")  # blank lines are ignored
            init = await raw.initialize()

    assert not_json["error"]["code"] == -32700
    assert not_json["id"] is None
    assert bad_method["error"]["code"] == -32600
    assert bad_method["id"] == 7
    assert batch["error"]["code"] == -32600
    assert "batch" in batch["error"]["message"]
    assert scalar["error"]["code"] == -32600
    assert binary["error"]["code"] == -32700
    assert init["result"]["serverInfo"]["name"] == "satchel"


async def test_protocol_garbage_gets_errors_and_the_server_keeps_serving() -> None:
    with anyio.fail_after(STARTUP):
        async with raw_stdio("--tools", EXAMPLES) as raw:
            await raw.initialize()
            unknown = await raw.request({"jsonrpc": "2.0", "id": 1, "method": "tools/frobnicate"})
            bad_params = await raw.request(
                {
                    "jsonrpc": "2.0",
                    "id": 2,
                    "method": "tools/call",
                    "params": {"name": "add", "arguments": "a=1"},
                }
            )
            no_params = await raw.request({"jsonrpc": "2.0", "id": 3, "method": "tools/call"})
            wrong_types = await raw.request(
                {
                    "jsonrpc": "2.0",
                    "id": 4,
                    "method": "tools/call",
                    "params": {"name": "add", "arguments": {"a": {"deep": [1]}, "b": None}},
                }
            )
            fine = await raw.request(
                {
                    "jsonrpc": "2.0",
                    "id": 5,
                    "method": "tools/call",
                    "params": {"name": "add", "arguments": {"a": 20, "b": 22}},
                }
            )

    assert unknown["error"]["code"] == -32601
    assert bad_params["error"]["code"] == -32602
    assert no_params["error"]["code"] == -32602
    assert wrong_types["result"]["isError"] is True
    assert "invalid_arguments" in wrong_types["result"]["content"][0]["text"]
    assert fine["result"]["structuredContent"] == {"result": 42}


async def test_a_huge_frame_is_refused_without_stopping_the_server() -> None:
    huge = b'{"jsonrpc": "2.0", "id": 9, "method": "ping", "params": {"pad": "' + (
        b"x" * (5 * 1024 * 1024)
    )
    with anyio.fail_after(STARTUP):
        async with raw_stdio("--tools", EXAMPLES) as raw:
            await raw.initialize()
            await raw.send_bytes(huge + b'"}}\n')
            refused = await raw.receive()
            fine = await raw.request(
                {
                    "jsonrpc": "2.0",
                    "id": 10,
                    "method": "tools/call",
                    "params": {"name": "echo", "arguments": {"text": "still here"}},
                }
            )

    assert refused["error"]["code"] == -32600
    assert "longer than" in refused["error"]["message"]
    assert fine["result"]["content"][0]["text"] == "still here"


async def test_stdout_carries_only_protocol_frames_even_when_a_tool_prints(
    tmp_path: Path,
) -> None:
    noisy = anyio.Path(tmp_path) / "noisy.py"
    await noisy.write_text(
        "from satchel import ToolRegistry, tool\n"
        "@tool\n"
        "def shout(text: str) -> str:\n"
        '    """Print, then answer."""\n'
        "    print('NOISE ON STDOUT')\n"
        "    return text.upper()\n"
        "registry = ToolRegistry([shout])\n"
    )
    with anyio.fail_after(STARTUP):
        async with raw_stdio("--tools", f"{noisy}:registry", "--log-level", "debug") as raw:
            await raw.initialize()
            reply = await raw.request(
                {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "tools/call",
                    "params": {"name": "shout", "arguments": {"text": "hi"}},
                }
            )

    # Every line read from stdout parsed as JSON-RPC: the print went to stderr.
    assert reply["result"]["content"][0]["text"] == "HI"


async def test_requests_sent_just_before_stdin_closes_are_all_answered() -> None:
    calls = [
        {
            "jsonrpc": "2.0",
            "id": i,
            "method": "tools/call",
            "params": {
                "name": "notes",
                "arguments": {"operation": "write", "title": f"n{i}", "content": "x"},
            },
        }
        for i in range(1, 6)
    ]
    with anyio.fail_after(STARTUP):
        async with raw_stdio("--tools", EXAMPLES) as raw:
            await raw.initialize()
            for call in calls:
                await raw.send(call)
            assert raw.process.stdin is not None
            await raw.process.stdin.aclose()
            answers = [await raw.receive() for _ in calls]
            code = await raw.process.wait()

    assert sorted(a["id"] for a in answers) == [1, 2, 3, 4, 5]
    assert all(a["result"]["structuredContent"]["status"] == "written" for a in answers)
    assert code == 0


def _call(request_id: int, name: str, arguments: object) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments},
    }


def _nested(depth: int) -> object:
    value: object = []
    for _ in range(depth - 1):
        value = [value]
    return value


async def test_every_request_gets_an_answer_naming_what_is_wrong() -> None:
    request = b'{"jsonrpc": "2.0", "id": %s, "method": "ping"}\n'
    past_python = (
        b'{"jsonrpc": "2.0", "id": 13, "method": "tools/call", "params": {"name": "add", '
        b'"arguments": {"a": ' + b"[" * 5000 + b"]" * 5000 + b"}}}\n"
    )
    with anyio.fail_after(STARTUP):
        async with raw_stdio("--tools", EXAMPLES) as raw:
            await raw.initialize()
            odd_ids: list[dict[str, Any]] = []
            for odd in (b"true", b"1.5", b'{"a": 1}', b"null", b"[1]"):
                await raw.send_bytes(request % odd)
                odd_ids.append(await raw.receive())
            # json.dumps writes a lone surrogate as the escape "\udc00".
            surrogate = await raw.request(_call(11, "add", {"a": "\udc00", "b": 1}))
            nested = await raw.request(_call(12, "add", {"a": _nested(300), "b": 1}))
            await raw.send_bytes(past_python)
            nested_past_python = await raw.receive()
            not_an_object = await raw.request(_call(14, "add", "1 + 2"))
            no_name = await raw.request(
                {"jsonrpc": "2.0", "id": 15, "method": "tools/call", "params": {"arguments": {}}}
            )
            fine = await raw.request(_call(16, "add", {"a": 1, "b": 2}))

    for reply in odd_ids:
        assert reply["id"] is None
        assert reply["error"]["code"] == -32600
        assert "'id' must be a string or an integer" in reply["error"]["message"]
    assert surrogate["error"]["code"] == -32700
    assert "lone surrogate" in surrogate["error"]["message"]
    for deep in (nested, nested_past_python):
        assert deep["error"]["code"] == -32700
        assert "nests" in deep["error"]["message"]
    assert not_an_object["error"]["code"] == -32602
    assert "params.arguments" in not_an_object["error"]["message"]
    assert not_an_object["error"]["data"]["errors"][0]["field"] == "params.arguments"
    assert "params.name" in no_name["error"]["message"]
    assert fine["result"]["structuredContent"] == {"result": 3}
