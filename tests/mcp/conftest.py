"""Helpers for the MCP tests: real ``satchel serve`` processes, raw stdio frames, and an
in-process registry with an elicitation tool."""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import httpx2
from anyio.streams.text import TextReceiveStream
from mcp import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

HERE = Path(__file__).parent
TOY_SERVER = str(HERE / "servers" / "toy_server.py")
FILE_TOOLS = f"{HERE / 'servers' / 'file_tools.py'}:registry"
"""``--tools`` target: ``delete_file`` (destructive by its ``delete`` action) and
``touch_file`` (a write), acting on real files."""
EXAMPLES = "satchel.examples:registry"
STARTUP = 60  # seconds allowed for a server process to start (imports are slow on 2 cores)


def satchel_args(*args: str) -> list[str]:
    """``python -m satchel serve ...`` as an argument list."""
    return [sys.executable, "-m", "satchel", "serve", *args]


def satchel_stdio(*args: str) -> StdioServerParameters:
    """SDK parameters that spawn ``satchel serve ARGS`` over stdio, in this process's
    environment (the SDK would pass only a few variables: without ``XDG_DATA_HOME``
    the server's default database would be the real user data directory's)."""
    return StdioServerParameters(
        command=sys.executable, args=["-m", "satchel", "serve", *args], env=dict(os.environ)
    )


def toy_command(*, legacy: bool = False) -> list[str]:
    return [sys.executable, TOY_SERVER, *(["--legacy"] if legacy else [])]


class RawStdio:
    """A ``satchel serve`` process spoken to in raw newline-delimited frames."""

    def __init__(self, process: anyio.abc.Process) -> None:
        self.process = process
        assert process.stdout is not None
        self._lines = TextReceiveStream(process.stdout)
        self._buffer = ""

    async def send_bytes(self, data: bytes) -> None:
        assert self.process.stdin is not None
        await self.process.stdin.send(data)

    async def send(self, message: dict[str, Any]) -> None:
        await self.send_bytes(json.dumps(message).encode() + b"\n")

    async def receive(self) -> dict[str, Any]:
        while "\n" not in self._buffer:
            self._buffer += await self._lines.receive()
        line, self._buffer = self._buffer.split("\n", 1)
        return json.loads(line)

    async def request(self, message: dict[str, Any]) -> dict[str, Any]:
        """Send a request and return the response with its id (skipping notifications)."""
        await self.send(message)
        while True:
            reply = await self.receive()
            if reply.get("id") == message["id"]:
                return reply

    async def initialize(self) -> dict[str, Any]:
        reply = await self.request(
            {
                "jsonrpc": "2.0",
                "id": "init",
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "raw-test", "version": "0"},
                },
            }
        )
        await self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return reply


@asynccontextmanager
async def raw_stdio(*args: str) -> AsyncIterator[RawStdio]:
    """Start ``satchel serve ARGS`` and talk raw JSON-RPC to it; stop it afterwards."""
    process = await anyio.open_process(satchel_args(*args), stderr=None)
    try:
        yield RawStdio(process)
    finally:
        if process.stdin is not None:
            await process.stdin.aclose()
        with anyio.move_on_after(10, shield=True):
            await process.wait()
        if process.returncode is None:
            process.kill()
            with anyio.CancelScope(shield=True):
                await process.wait()


_URL = re.compile(r"serving MCP at (\S+)")


@asynccontextmanager
async def http_server(
    *args: str, env: dict[str, str] | None = None, open_files: int | None = None
) -> AsyncIterator[str]:
    """Start ``satchel serve --http 127.0.0.1:0 ARGS``; yield its endpoint URL.

    ``open_files`` lowers the server's open-file limit (``ulimit -n``)."""
    command = satchel_args("--http", "127.0.0.1:0", *args)
    if open_files is not None:
        command = ["sh", "-c", f'ulimit -n {open_files} && exec "$0" "$@"', *command]
    process = await anyio.open_process(
        command,
        stdout=None,
        env={**os.environ, **(env or {})},
    )
    assert process.stderr is not None
    errors = TextReceiveStream(process.stderr)
    seen = ""
    try:
        with anyio.fail_after(STARTUP):
            while (found := _URL.search(seen)) is None:
                seen += await errors.receive()

        async def drain() -> None:
            async for _ in errors:
                pass

        async with anyio.create_task_group() as tg:
            tg.start_soon(drain)
            yield found.group(1)
            tg.cancel_scope.cancel()
    finally:
        process.terminate()
        with anyio.move_on_after(10, shield=True):
            await process.wait()
        if process.returncode is None:
            process.kill()
            with anyio.CancelScope(shield=True):
                await process.wait()


def http_transport(url: str, token: str | None = None):
    """A streamable HTTP transport that sends ``token`` as a bearer token."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return _authorized(url, headers)


@asynccontextmanager
async def _authorized(url: str, headers: dict[str, str]) -> AsyncIterator[Any]:
    async with (
        httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=300)) as http,
        streamable_http_client(url, http_client=http) as streams,
    ):
        yield streams


MEMORY_TOOLS = ("context", "recall", "search", "send_message")
"""The built-in memory tools every ``satchel serve`` offers beside ``--tools``."""
