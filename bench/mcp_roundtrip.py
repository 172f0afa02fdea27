"""MCP round trips: one trivial tool call through ``satchel.mcp`` and through FastMCP.

Both servers serve the same async ``echo(text) -> str`` tool and run as child processes
of this script; the client is the official SDK's, the same for both. Per transport
(stdio, streamable HTTP) and server it measures, in one run:

* latency: sequential calls, one at a time (mean, p50, p99);
* throughput: ``--concurrency`` callers sharing one session.

It prints each figure and satchel's ratio to FastMCP (latency: satchel / FastMCP, lower
is better; throughput: satchel / FastMCP, higher is better). Nothing here fails on a
timing.

Run:  uv run --group bench python bench/mcp_roundtrip.py [--calls 1000] [--concurrency 8]
"""

from __future__ import annotations

import os
import sys

# This file is named mcp.py: keep its folder off sys.path so `import mcp` finds the SDK.
_SCRIPT = os.path.abspath(__file__)
_HERE = os.path.dirname(_SCRIPT)
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _HERE]

import argparse  # noqa: E402
import re  # noqa: E402
import socket  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
from collections.abc import AsyncIterator  # noqa: E402
from contextlib import asynccontextmanager  # noqa: E402
from dataclasses import dataclass  # noqa: E402
from typing import Any  # noqa: E402

import anyio  # noqa: E402
from anyio.streams.text import TextReceiveStream  # noqa: E402

SERVERS = ("satchel", "fastmcp")
TRANSPORTS = ("stdio", "http")
TEXT = "hello, world"


async def echo(text: str) -> str:
    """Send the text back unchanged.

    Args:
        text: The text to send back.
    """
    return text


# -- the servers (child processes) -------------------------------------------------------


def _bound_socket() -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    return sock


def _announce(url: str) -> None:
    print(f"READY {url}", file=sys.stderr, flush=True)


def serve_satchel(transport: str) -> None:
    from satchel import ToolRegistry, tool
    from satchel.mcp import create_server

    server = create_server(ToolRegistry([tool(echo)]), name="bench")
    if transport == "stdio":
        anyio.run(server.run_stdio)
    else:
        anyio.run(lambda: server.run_http("127.0.0.1", 0, on_ready=_announce))


def serve_fastmcp(transport: str) -> None:
    from fastmcp import FastMCP

    app = FastMCP("bench")
    app.tool(echo)
    if transport == "stdio":
        app.run("stdio", show_banner=False)
        return
    sock = _bound_socket()
    _announce(f"http://127.0.0.1:{sock.getsockname()[1]}/mcp")
    app.run("http", show_banner=False, path="/mcp", sockets=[sock], log_level="warning")


# -- the client ------------------------------------------------------------------------


@asynccontextmanager
async def connect(server: str, transport: str) -> AsyncIterator[Any]:
    from mcp import Client, StdioServerParameters

    argv = [_SCRIPT, "serve", server, transport]
    if transport == "stdio":
        params = StdioServerParameters(command=sys.executable, args=argv)
        async with Client(params, mode="legacy", cache=None) as client:
            yield client
        return
    process = await anyio.open_process([sys.executable, *argv], stdout=None)
    assert process.stderr is not None
    errors = TextReceiveStream(process.stderr)
    seen = ""
    try:
        with anyio.fail_after(60):
            while (found := re.search(r"READY (\S+)", seen)) is None:
                seen += await errors.receive()

        async def drain() -> None:
            async for _ in errors:
                pass

        async with anyio.create_task_group() as tg:
            tg.start_soon(drain)
            async with Client(found.group(1), mode="legacy", cache=None) as client:
                yield client
            tg.cancel_scope.cancel()
    finally:
        process.terminate()
        with anyio.move_on_after(10, shield=True):
            await process.wait()


@dataclass
class Figures:
    mean_ms: float
    p50_ms: float
    p99_ms: float
    per_second: float


async def measure(server: str, transport: str, calls: int, concurrency: int) -> Figures:
    async with connect(server, transport) as client:
        for _ in range(50):  # warm up
            await client.call_tool("echo", {"text": TEXT})
        times: list[float] = []
        for _ in range(calls):
            start = time.perf_counter()
            result = await client.call_tool("echo", {"text": TEXT})
            times.append(time.perf_counter() - start)
            assert not result.is_error
        remaining = calls * 2

        async def caller() -> None:
            nonlocal remaining
            while remaining > 0:
                remaining -= 1
                await client.call_tool("echo", {"text": TEXT})

        start = time.perf_counter()
        async with anyio.create_task_group() as tg:
            for _ in range(concurrency):
                tg.start_soon(caller)
        elapsed = time.perf_counter() - start
    times.sort()
    return Figures(
        mean_ms=statistics.fmean(times) * 1e3,
        p50_ms=times[len(times) // 2] * 1e3,
        p99_ms=times[int(len(times) * 0.99)] * 1e3,
        per_second=calls * 2 / elapsed,
    )


async def main(calls: int, concurrency: int) -> None:
    import fastmcp
    import mcp

    del mcp
    print(f"satchel.mcp vs FastMCP {fastmcp.__version__}; official SDK client, handshake era")
    print(f"{calls} sequential calls, then {calls * 2} calls from {concurrency} concurrent callers")
    print()
    header = (
        f"{'transport':<9} {'server':<8} {'mean ms':>8} {'p50 ms':>8} {'p99 ms':>8} {'calls/s':>9}"
    )
    print(header)
    print("-" * len(header))
    results: dict[tuple[str, str], Figures] = {}
    for transport in TRANSPORTS:
        for server in SERVERS:
            figures = await measure(server, transport, calls, concurrency)
            results[(server, transport)] = figures
            print(
                f"{transport:<9} {server:<8} {figures.mean_ms:>8.3f} {figures.p50_ms:>8.3f} "
                f"{figures.p99_ms:>8.3f} {figures.per_second:>9.0f}"
            )
    print()
    print("satchel / FastMCP (latency: lower is better; throughput: higher is better)")
    for transport in TRANSPORTS:
        ours, theirs = results[("satchel", transport)], results[("fastmcp", transport)]
        print(
            f"{transport:<9} mean latency x{ours.mean_ms / theirs.mean_ms:.2f}   "
            f"p50 x{ours.p50_ms / theirs.p50_ms:.2f}   "
            f"throughput x{ours.per_second / theirs.per_second:.2f}"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    sub = parser.add_subparsers(dest="command")
    run = sub.add_parser("serve", help="(internal) run one of the servers")
    run.add_argument("server", choices=SERVERS)
    run.add_argument("transport", choices=TRANSPORTS)
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=8)
    options = parser.parse_args()
    if options.command == "serve":
        {"satchel": serve_satchel, "fastmcp": serve_fastmcp}[options.server](options.transport)
    else:
        anyio.run(main, options.calls, options.concurrency)
