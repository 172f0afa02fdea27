"""How a mount reaches its server: a stdio subprocess or a streamable HTTP endpoint.

:class:`MountTarget` holds what :func:`~satchel.mcp.mount_mcp` was told about the
server and opens a fresh transport for each connection attempt. A stdio transport's
read stream is watched: when the server's output ends (it died), ``on_eof`` is called,
so the connection is known to be lost before a call waits on it.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from types import TracebackType
from typing import Any
from urllib.parse import unquote, urlsplit

import anyio
import httpx2
from mcp import StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._stream_protocols import ReadStream, WriteStream
from mcp.shared.message import SessionMessage

from satchel._redact import strip_userinfo

__all__ = ["MountTarget", "Transport"]

Transport = AbstractAsyncContextManager[
    tuple[ReadStream[SessionMessage | Exception], WriteStream[SessionMessage]]
]


@dataclass(kw_only=True, eq=False)
class MountTarget:
    """The server to mount: ``command`` (with ``args``, ``env``, ``cwd``) for stdio, or
    ``url`` (with ``headers``) for streamable HTTP. Exactly one of the two is set."""

    command: str | None
    args: list[str]
    env: dict[str, str] | None
    cwd: str | None
    url: str | None
    headers: dict[str, str]

    @property
    def label(self) -> str:
        """The URL (without credentials), or the command line, as shown in a mount's
        ``repr``."""
        if self.url is not None:
            return strip_userinfo(self.url)
        return " ".join([self.command or "", *self.args])

    def transport(self, timeout: float, on_eof: Callable[[], None]) -> Transport:
        """A new transport to the server: ``timeout`` is the HTTP client's timeout
        (reads may take 300 s); ``on_eof`` is called when a stdio server's output ends."""
        if self.url is not None:
            url, auth = _credentials_apart(self.url)
            http = httpx2.AsyncClient(
                headers=self.headers, timeout=httpx2.Timeout(timeout, read=300.0), auth=auth
            )
            return _with_client(http, url)
        assert self.command is not None
        params = StdioServerParameters(
            command=self.command, args=self.args, env=self.env, cwd=self.cwd
        )
        return _watched(stdio_client(params), on_eof)


def _credentials_apart(url: str) -> tuple[str, httpx2.BasicAuth | None]:
    """``url`` without its user-info part, and that part as HTTP basic auth: the
    request is the same, and the SDK, which logs the URL, never sees the password."""
    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return url, None
    auth = httpx2.BasicAuth(unquote(parts.username or ""), unquote(parts.password or ""))
    return strip_userinfo(url), auth


class _EofWatch:
    """A read stream that calls ``on_eof`` when the peer's output ends (it died)."""

    def __init__(
        self, inner: ReadStream[SessionMessage | Exception], on_eof: Callable[[], None]
    ) -> None:
        self._inner = inner
        self._on_eof = on_eof

    @property
    def last_context(self) -> Any:
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> SessionMessage | Exception:
        try:
            return await self._inner.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            self._on_eof()
            raise

    def __aiter__(self) -> _EofWatch:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> _EofWatch:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> bool | None:
        await self.aclose()
        return None


@asynccontextmanager
async def _watched(
    transport: Transport, on_eof: Callable[[], None]
) -> AsyncGenerator[
    tuple[ReadStream[SessionMessage | Exception], WriteStream[SessionMessage]], None
]:
    async with transport as (read, write):
        yield _EofWatch(read, on_eof), write


@asynccontextmanager
async def _with_client(
    http: httpx2.AsyncClient, url: str
) -> AsyncGenerator[
    tuple[ReadStream[SessionMessage | Exception], WriteStream[SessionMessage]], None
]:
    async with http, streamable_http_client(url, http_client=http) as streams:
        yield streams
