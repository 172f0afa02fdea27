"""The stdio transport: newline-delimited JSON-RPC on the process's stdin and stdout.

Why not the SDK's ``stdio_server``: it drops a malformed line without a word and reads a
line of any length into memory. This transport answers every bad frame the way JSON-RPC
2.0 says (``-32700`` for text that is not JSON, ``-32600`` for JSON that is not a
message, with the message's id when it has a usable one), refuses a frame longer than
``max_message_bytes`` without buffering it, and keeps serving.

While it runs, the wire lives on private duplicates of fds 0 and 1; fd 1 itself points
at stderr and fd 0 at the null device, so a stray ``print()`` in a tool (or a child
process) can never corrupt the protocol, and nothing else can steal its input.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import threading
from collections.abc import AsyncGenerator, Callable
from contextlib import asynccontextmanager

import anyio
import anyio.from_thread
import anyio.lowlevel
import anyio.to_thread
import mcp_types as types
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.shared.message import SessionMessage
from pydantic import ValidationError
from pydantic_core import PydanticSerializationError

from satchel.mcp.server._envelope import (
    BAD_ID_MESSAGE,
    bad_request_id,
    frame_error,
)
from satchel.mcp.server._envelope import (
    error_message as _error,
)

__all__ = ["DEFAULT_DRAIN_SECONDS", "DEFAULT_MAX_MESSAGE_BYTES", "frame_error", "stdio_transport"]

logger = logging.getLogger("satchel.mcp.stdio")

DEFAULT_MAX_MESSAGE_BYTES = 4 * 1024 * 1024
"""The longest frame served (4 MiB, as the SDK's HTTP body limit); longer ones get an
error reply and are skipped."""

DEFAULT_DRAIN_SECONDS = 30.0
"""How long requests still running when the input ends may take to answer."""

_READ_CHUNK = 64 * 1024

ReadStreams = tuple[
    MemoryObjectReceiveStream[SessionMessage | Exception],
    MemoryObjectSendStream[SessionMessage],
]


def _claim_std_fds() -> tuple[int, int, Callable[[], None]]:
    """Move the wire to private fds; point fd 0 at /dev/null and fd 1 at stderr."""
    sys.stdout.flush()
    wire_in = os.dup(0)
    wire_out = os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)

    def restore() -> None:
        sys.stdout.flush()
        os.dup2(wire_out, 1)
        os.close(wire_out)
        os.dup2(wire_in, 0)
        # wire_in stays open: the reader thread may still be blocked reading it.

    return wire_in, wire_out, restore


def _reader_thread(
    fd: int, chunks: MemoryObjectSendStream[bytes], token: anyio.lowlevel.EventLoopToken
) -> None:
    """Blocking reads of ``fd`` in a daemon thread, handed to the event loop."""
    try:
        while True:
            try:
                data = os.read(fd, _READ_CHUNK)
            except OSError as exc:
                logger.debug("stdin read failed: %s", exc)
                data = b""
            if not data:
                break
            anyio.from_thread.run(chunks.send, data, token=token)
    except (RuntimeError, anyio.BrokenResourceError, anyio.ClosedResourceError):
        return  # the event loop or the transport is gone
    try:
        anyio.from_thread.run_sync(chunks.close, token=token)
    except RuntimeError:
        return


def _frame(message: types.JSONRPCMessage) -> str:
    """``message`` as one line of JSON. A lone surrogate in a string (a tool's output
    may hold one; UTF-8 cannot) is sent as U+FFFD rather than failing the write."""
    try:
        return message.model_dump_json(by_alias=True, exclude_unset=True) + "\n"
    except PydanticSerializationError:
        data = message.model_dump(mode="json", by_alias=True, exclude_unset=True)
        text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace") + "\n"


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


class _InFlight:
    """The ids of requests read but not yet answered, so the end of input can wait for
    their answers (the SDK cancels whatever is still running when its input ends)."""

    def __init__(self) -> None:
        self._ids: set[str | int] = set()
        self._idle = anyio.Event()
        self._idle.set()

    def read(self, message: types.JSONRPCMessage) -> None:
        if isinstance(message, types.JSONRPCRequest):
            self._ids.add(message.id)
            self._idle = anyio.Event() if self._idle.is_set() else self._idle
        elif isinstance(message, types.JSONRPCNotification) and message.method == (
            "notifications/cancelled"
        ):
            raw_id = (message.params or {}).get("requestId")
            if isinstance(raw_id, str | int):
                self._done(raw_id)

    def written(self, message: types.JSONRPCMessage) -> None:
        if (
            isinstance(message, types.JSONRPCResponse | types.JSONRPCError)
            and message.id is not None
        ):
            self._done(message.id)

    def _done(self, request_id: str | int) -> None:
        self._ids.discard(request_id)
        if not self._ids:
            self._idle.set()

    async def drained(self) -> None:
        await self._idle.wait()


class _Framer:
    """Splits the byte stream into lines and turns each into a message or an error."""

    def __init__(
        self,
        messages: MemoryObjectSendStream[SessionMessage | Exception],
        replies: MemoryObjectSendStream[SessionMessage],
        max_bytes: int,
        in_flight: _InFlight,
    ) -> None:
        self._messages = messages
        self._replies = replies
        self._max = max_bytes
        self._in_flight = in_flight
        self._buffer = bytearray()
        self._skipping = False

    async def feed(self, chunk: bytes) -> None:
        start = 0
        while True:
            end = chunk.find(b"\n", start)
            if end == -1:
                if not self._skipping:
                    self._buffer += chunk[start:]
                    if len(self._buffer) > self._max:
                        self._buffer.clear()
                        self._skipping = True
                return
            piece = chunk[start:end]
            start = end + 1
            if self._skipping:
                self._skipping = False
                await self._too_large()
                continue
            if self._buffer:
                self._buffer += piece
                line = bytes(self._buffer)
                self._buffer.clear()
            else:
                line = piece
            await self._line(line)

    async def finish(self) -> None:
        if self._skipping:
            await self._too_large()
        elif self._buffer:
            line = bytes(self._buffer)
            self._buffer.clear()
            await self._line(line)

    async def _too_large(self) -> None:
        logger.warning("refused a frame longer than %d bytes", self._max)
        await self._replies.send(
            _error(
                None,
                types.INVALID_REQUEST,
                f"Invalid Request: the frame is longer than {self._max} bytes.",
            )
        )

    async def _line(self, line: bytes) -> None:
        line = line.strip()
        if not line:
            return
        if len(line) > self._max:
            await self._too_large()
            return
        try:
            message = types.jsonrpc_message_adapter.validate_json(line, by_name=False)
        except ValidationError as exc:
            reply = frame_error(line, exc)
            if reply is not None:
                await self._replies.send(reply)
            return
        if isinstance(message, types.JSONRPCNotification) and bad_request_id(line):
            # The SDK's models read a request with an odd id as a notification.
            await self._replies.send(_error(None, types.INVALID_REQUEST, BAD_ID_MESSAGE))
            return
        self._in_flight.read(message)
        await self._messages.send(SessionMessage(message))


@asynccontextmanager
async def stdio_transport(
    *,
    stdin_fd: int | None = None,
    stdout_fd: int | None = None,
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
    drain_seconds: float = DEFAULT_DRAIN_SECONDS,
) -> AsyncGenerator[ReadStreams, None]:
    """Serve newline-delimited JSON-RPC on two file descriptors.

    Args:
        stdin_fd: The fd to read frames from; the process's stdin when ``None`` (and
            then fds 0 and 1 are diverted while serving, see the module docs).
        stdout_fd: The fd to write frames to; the process's stdout when ``None``.
        max_message_bytes: The longest frame accepted.
        drain_seconds: When the input ends, how long requests still running may take
            to answer before the server stops (so ``requests | satchel serve`` gets
            every answer).

    Yields:
        ``(read_stream, write_stream)`` for :meth:`mcp.server.Server.run`.
    """
    restore: Callable[[], None] | None = None
    if stdin_fd is None or stdout_fd is None:
        wire_in, wire_out, restore = _claim_std_fds()
        stdin_fd = wire_in if stdin_fd is None else stdin_fd
        stdout_fd = wire_out if stdout_fd is None else stdout_fd
    out_fd = stdout_fd
    read_send, read_recv = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_send, write_recv = anyio.create_memory_object_stream[SessionMessage](0)
    chunk_send, chunk_recv = anyio.create_memory_object_stream[bytes](16)
    replies = write_send.clone()

    frames_scope = anyio.CancelScope()
    writer_done = anyio.Event()
    in_flight = _InFlight()

    async def frames() -> None:
        framer = _Framer(read_send, replies, max_message_bytes, in_flight)
        with frames_scope:
            async with read_send, replies, chunk_recv:
                async for chunk in chunk_recv:
                    await framer.feed(chunk)
                await framer.finish()
                with anyio.move_on_after(drain_seconds):
                    await in_flight.drained()

    async def writer() -> None:
        try:
            async with write_recv:
                async for first in write_recv:
                    batch = [first]
                    while True:  # coalesce what is ready into one write
                        try:
                            batch.append(write_recv.receive_nowait())
                        except anyio.WouldBlock:
                            break
                    for m in batch:
                        in_flight.written(m.message)
                    data = "".join(_frame(m.message) for m in batch).encode()
                    try:
                        await anyio.to_thread.run_sync(_write_all, out_fd, data)
                    except OSError as exc:  # the client went away
                        logger.info("stdout closed: %s", exc)
                        return
        finally:
            writer_done.set()

    thread = threading.Thread(
        target=_reader_thread,
        args=(stdin_fd, chunk_send, anyio.lowlevel.current_token()),
        name="satchel-stdin",
        daemon=True,
    )
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(frames)
            tg.start_soon(writer)
            thread.start()
            try:
                yield read_recv, write_send
            finally:
                # Stop reading, then let the writer flush what the server sent.
                frames_scope.cancel()
                write_send.close()
                with anyio.move_on_after(5, shield=True):
                    await writer_done.wait()
                tg.cancel_scope.cancel()
    finally:
        read_recv.close()
        write_send.close()
        if restore is not None:
            restore()
