"""Mounting other MCP servers' tools: a small SDK server written for these tests
(``servers/toy_server.py``, in both protocol eras) and a second ``satchel serve``."""

from __future__ import annotations

import logging
import os
import shlex
import signal
import sys
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client

from satchel import RegistryEvent, RemoteToolError, SatchelUsageError, ToolRegistry
from satchel.mcp import RemoteTool, local_tool_name, mount_mcp

from .conftest import (
    EXAMPLES,
    STARTUP,
    TOY_SERVER,
    http_server,
    satchel_args,
    satchel_stdio,
    toy_command,
)

pytestmark = pytest.mark.anyio

ERAS = [pytest.param(False, id="modern"), pytest.param(True, id="legacy")]


def _toy(registry: ToolRegistry, *, legacy: bool = False, **options: float):
    command, *args = toy_command(legacy=legacy)
    return mount_mcp(registry, prefix="toy", command=command, args=args, **options)


async def _wait_for(registry: ToolRegistry, name: str) -> None:
    arrived = anyio.Event()

    def check(event: RegistryEvent) -> None:
        if event.name == name:
            arrived.set()

    unsubscribe = registry.subscribe(check)
    try:
        if name not in registry:
            await arrived.wait()
    finally:
        unsubscribe()


@pytest.mark.parametrize("legacy", ERAS)
async def test_mounted_tools_are_registered_with_prefix_annotations_and_schemas(
    legacy: bool,
) -> None:
    registry = ToolRegistry()
    with anyio.fail_after(STARTUP):
        async with _toy(registry, legacy=legacy) as mounted:
            names = registry.names()
            greet = registry.get("toy_greet")
            result = await registry.call("toy_greet", {"name": "Ada"})
            version = mounted.protocol_version
            mapping = mounted.tools
        after = registry.names()

    assert version == ("2025-11-25" if legacy else "2026-07-28")
    assert names == [
        "toy_greet",
        "toy_dotted_name",
        "toy_pid",
        "toy_sleep",
        "toy_crash",
        "toy_grow",
        "toy_outline",
    ]
    assert mapping["toy_dotted_name"] == "dotted.name"
    assert isinstance(greet, RemoteTool)
    assert greet.spec.annotations.read_only is True
    assert greet.spec.annotations.open_world is False
    assert greet.spec.input_schema["required"] == ["name"]
    assert result.output == "hello Ada"
    assert after == []


async def test_a_recursive_remote_schema_is_mounted_and_a_broken_one_skipped_by_name(
    caplog: pytest.LogCaptureFixture,
) -> None:
    registry = ToolRegistry()
    outline = {"heading": "a", "sections": [{"heading": "b", "sections": [{"heading": "c"}]}]}
    with caplog.at_level(logging.WARNING, logger="satchel"), anyio.fail_after(STARTUP):
        async with _toy(registry):
            tool = registry.get("toy_outline")
            counted = await registry.call("toy_outline", {"root": outline})
            refused = await registry.call("toy_outline", {"root": {"sections": []}})
            names = registry.names()
            definitions = {d["name"]: d for d in registry.schemas("mcp")}

    assert tool is not None
    assert "$defs" in tool.spec.input_schema
    assert counted.output == "3"
    assert refused.error is not None
    assert refused.error.kind == "invalid_arguments"
    assert "toy_broken" not in names
    assert definitions["toy_outline"]["inputSchema"]["$defs"]
    assert any("'broken'" in r.getMessage() for r in caplog.records)


async def test_arguments_are_checked_against_the_remote_schema_before_sending() -> None:
    registry = ToolRegistry()
    with anyio.fail_after(STARTUP):
        async with _toy(registry):
            result = await registry.call("toy_greet", {"name": 42})

    assert result.error is not None
    assert result.error.kind == "invalid_arguments"
    assert "`name`" in result.error.message


@pytest.mark.parametrize("legacy", ERAS)
async def test_tools_list_changed_is_followed(legacy: bool) -> None:
    registry = ToolRegistry()
    with anyio.fail_after(STARTUP):
        async with _toy(registry, legacy=legacy):
            grown = await registry.call("toy_grow", {})
            await _wait_for(registry, "toy_extra_1")
            extra = await registry.call("toy_extra_1", {})

    assert grown.output == "extra_1"
    assert extra.output == "extra_1"


@pytest.mark.parametrize("legacy", ERAS)
async def test_a_server_dying_mid_call_fails_that_call_and_the_next_call_reconnects(
    legacy: bool,
) -> None:
    registry = ToolRegistry()
    with anyio.fail_after(STARTUP * 2):
        async with _toy(registry, legacy=legacy) as mounted:
            first_pid = (await registry.call("toy_pid", {})).output
            crashed = await registry.call("toy_crash", {})
            again = await registry.call("toy_greet", {"name": "again"})
            second_pid = (await registry.call("toy_pid", {})).output
            connected = mounted.connected

    assert crashed.error is not None
    assert crashed.error.kind == "failed"
    assert "closed the connection" in crashed.error.message
    assert crashed.error.details["prefix"] == "toy"
    assert again.output == "hello again"
    assert first_pid != second_pid
    assert connected


async def test_a_server_killed_from_outside_fails_the_call_in_flight_then_reconnects() -> None:
    registry = ToolRegistry()
    with anyio.fail_after(STARTUP * 2):
        async with _toy(registry):
            pid = int(str((await registry.call("toy_pid", {})).output))
            outcome: dict[str, object] = {}

            async def slow_call() -> None:
                outcome["result"] = await registry.call("toy_sleep", {"seconds": 30})

            async with anyio.create_task_group() as tg:
                tg.start_soon(slow_call)
                await anyio.wait_all_tasks_blocked()
                os.kill(pid, signal.SIGKILL)
            back = await registry.call("toy_greet", {"name": "back"})

    result = outcome["result"]
    assert getattr(result, "error").kind == "failed"  # noqa: B009
    assert "closed the connection" in getattr(result, "error").message  # noqa: B009
    assert back.output == "hello back"


async def test_a_call_past_call_timeout_is_a_timeout_result() -> None:
    registry = ToolRegistry()
    with anyio.fail_after(STARTUP):
        async with _toy(registry, call_timeout=0.5):
            slow = await registry.call("toy_sleep", {"seconds": 10})
            quick = await registry.call("toy_greet", {"name": "still fine"})

    assert slow.error is not None
    assert slow.error.kind == "timeout"
    assert quick.output == "hello still fine"


async def test_mounting_a_command_that_is_not_a_server_raises_remote_tool_error() -> None:
    registry = ToolRegistry()
    with anyio.fail_after(STARTUP), pytest.raises(RemoteToolError, match="Could not mount"):
        await mount_mcp(
            registry, prefix="bad", command=sys.executable, args=["-c", "print('hi')"], timeout=20
        )
    assert registry.names() == []


async def test_a_name_clash_with_an_existing_tool_is_a_usage_error() -> None:
    registry = ToolRegistry()
    registry.register_raw(
        name="toy_greet", description="Mine.", parameters={"type": "object"}, run=str
    )
    with anyio.fail_after(STARTUP), pytest.raises(SatchelUsageError, match="toy_greet"):
        await _toy(registry)
    assert registry.names() == ["toy_greet"]


def test_local_names_are_sanitised_and_kept_unique() -> None:
    assert local_tool_name("fs", "read.file") == "fs_read_file"
    assert local_tool_name("fs", "read file", taken={"fs_read_file"}) == "fs_read_file_2"
    long = local_tool_name("p", "x" * 100)
    assert len(long) == 64
    assert long != local_tool_name("p", "x" * 99)


def test_mount_needs_exactly_one_of_command_and_url() -> None:
    with pytest.raises(SatchelUsageError, match="exactly one"):
        mount_mcp(ToolRegistry(), prefix="x")
    with pytest.raises(SatchelUsageError, match="exactly one"):
        mount_mcp(ToolRegistry(), prefix="x", command="a", url="http://b")
    with pytest.raises(SatchelUsageError, match="prefix"):
        mount_mcp(ToolRegistry(), prefix="bad prefix!", command="a")


async def test_a_satchel_serve_mounts_another_satchel_serve_and_a_toy_server(
    tmp_path: Path,
) -> None:
    # A mounted server gets the MCP SDK's small default environment, so its database
    # is named explicitly (else it would be the real user data directory's).
    inner = shlex.join(satchel_args("--tools", EXAMPLES, "--db", str(tmp_path / "inner.db")))
    toy = shlex.join([sys.executable, TOY_SERVER])
    listed = anyio.Event()

    async def on_message(message: object) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            listed.set()

    async def approve(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        # toy_crash is destructive: the human (this callback) approves it when asked.
        return types.ElicitResult(action="accept", content={"approve": True})

    params = satchel_stdio("--mount", f"inner={inner}", "--mount", f"toy={toy}")
    with anyio.fail_after(STARTUP * 3):
        async with Client(
            params, mode="legacy", message_handler=on_message, elicitation_callback=approve
        ) as client:
            names = {t.name for t in (await client.list_tools()).tools}
            total = await client.call_tool("inner_add", {"a": 20, "b": 22})
            missing = await client.call_tool("inner_notes", {"operation": "read", "title": "x"})
            crashed = await client.call_tool("toy_crash", {})
            back = await client.call_tool("toy_greet", {"name": "back"})
            await client.call_tool("toy_grow", {})
            await listed.wait()
            grown = {t.name for t in (await client.list_tools()).tools}

    assert {"inner_add", "inner_notes", "inner_echo", "inner_word_count", "toy_greet"} <= names
    assert total.structured_content == {"result": 42}
    assert missing.is_error is True
    assert missing.meta is not None
    assert missing.meta["satchel/error"]["kind"] == "retry"  # kinds survive the hop
    assert crashed.is_error is True
    assert isinstance(crashed.content[0], types.TextContent)
    assert "closed the connection" in crashed.content[0].text
    assert isinstance(back.content[0], types.TextContent)
    assert back.content[0].text == "hello back"
    assert "toy_extra_1" in grown


async def test_serve_mounts_a_token_protected_http_server_with_a_mount_header() -> None:
    token = "mount-header-token-1234"
    with anyio.fail_after(STARTUP * 3):
        async with http_server("--tools", EXAMPLES, "--token", token) as url:
            params = satchel_stdio(
                "--mount",
                f"remote={url}",
                "--mount-header",
                "remote:Authorization=Bearer ${REMOTE_TOKEN}",
            )
            params.env = {**os.environ, "REMOTE_TOKEN": token}
            async with Client(params, mode="legacy") as client:
                names = {t.name for t in (await client.list_tools()).tools}
                total = await client.call_tool("remote_add", {"a": 40, "b": 2})
    assert {"remote_add", "remote_word_count"} <= names
    assert total.structured_content == {"result": 42}


async def test_credentials_in_a_mount_url_stay_out_of_its_error_and_logs(
    caplog: pytest.LogCaptureFixture,
) -> None:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = int(probe.getsockname()[1])
    registry = ToolRegistry()
    url = f"http://ada:T0KEN-secret@127.0.0.1:{port}/mcp"
    with (
        caplog.at_level(logging.DEBUG),
        anyio.fail_after(STARTUP),
        pytest.raises(RemoteToolError, match="Could not mount") as raised,
    ):
        await mount_mcp(registry, prefix="remote", url=url, timeout=5)
    assert f"127.0.0.1:{port}" in raised.value.message
    assert "T0KEN" not in raised.value.message + caplog.text
