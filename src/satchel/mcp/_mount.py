"""Mounting another MCP server's tools into a registry, as ordinary tools.

:func:`mount_mcp` connects to a server over stdio (a command) or streamable HTTP (a
URL), lists its tools and registers each as ``{prefix}_{name}``: a :class:`RemoteTool`
that keeps the remote tool's schemas and annotations, validates arguments against the
remote input schema before anything is sent, and forwards the call.

The connection lives in a background task owned by the :class:`MountedServer`:

* it follows the server's tool list (``notifications/tools/list_changed`` on a
  handshake-era connection, a ``subscriptions/listen`` stream on a 2026-07-28 one),
  registering and unregistering tools to match;
* a call that outlives ``call_timeout`` is a ``timeout`` result;
* a server that dies makes the calls in flight ``failed`` results (a
  :class:`~satchel.RemoteToolError` message), and the next call starts it again.

Use it from the event loop that mounted it, and close it from the task that opened it::

    async with mount_mcp(registry, prefix="fs", command="npx", args=[...]) as mounted:
        result = await registry.call("fs_read_file", {"path": "README.md"})
"""

from __future__ import annotations

import logging
import math
import re
import threading
from collections.abc import AsyncGenerator, Callable, Generator, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, cast

import anyio
import anyio.abc
import httpx2
import mcp_types as types
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._stream_protocols import ReadStream, WriteStream
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from satchel import __version__
from satchel._errors import RemoteToolError, SatchelError, SatchelUsageError
from satchel.mcp._remote import RemoteTool, local_tool_name, remote_result
from satchel.registry import ToolRegistry
from satchel.tools import ToolError, ToolResult
from satchel.tools._base import result_from_exception

__all__ = ["MountedServer", "mount_mcp"]

logger = logging.getLogger("satchel.mcp.mount")

_PREFIX = re.compile(r"^[A-Za-z0-9_-]{1,40}$")
_MAX_PAGES = 100

_Transport = AbstractAsyncContextManager[
    tuple[ReadStream[SessionMessage | Exception], WriteStream[SessionMessage]]
]


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
    transport: _Transport, on_eof: Callable[[], None]
) -> AsyncGenerator[
    tuple[ReadStream[SessionMessage | Exception], WriteStream[SessionMessage]], None
]:
    async with transport as (read, write):
        yield _EofWatch(read, on_eof), write


@dataclass(eq=False)
class _Attempt:
    """One connection attempt, awaited by calls that need the connection."""

    done: anyio.Event = field(default_factory=anyio.Event)
    error: str | None = None

    def finish(self, error: str | None) -> None:
        self.error = error
        self.done.set()


@dataclass(eq=False)
class _Live:
    """The live connection: the SDK client, the event that says it was lost, and the
    event that says its tool list changed."""

    client: Client
    lost: anyio.Event = field(default_factory=anyio.Event)
    changed: anyio.Event = field(default_factory=anyio.Event)


def _find_usage_error(exc: BaseException) -> SatchelUsageError | None:
    """The developer's mistake inside ``exc`` (task groups wrap it), if any."""
    if isinstance(exc, SatchelUsageError):
        return exc
    if isinstance(exc, BaseExceptionGroup):
        group = cast(BaseExceptionGroup[BaseException], exc)
        for inner in group.exceptions:
            found = _find_usage_error(inner)
            if found is not None:
                return found
    return None


def _describe(exc: BaseException) -> str:
    if isinstance(exc, BaseExceptionGroup):
        group = cast(BaseExceptionGroup[BaseException], exc)
        return "; ".join(_describe(e) for e in group.exceptions)
    if isinstance(exc, SatchelError):
        return exc.message
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


class MountedServer:
    """Another MCP server whose tools are registered in a registry.

    Made by :func:`mount_mcp`. Start it with ``await`` or ``async with``; stop it with
    :meth:`aclose` (or the end of the ``async with``) from the same task, which also
    removes its tools from the registry.

    Attributes:
        registry: The registry the tools are registered in.
        prefix: The prefix of their names.
    """

    def __init__(
        self,
        registry: ToolRegistry,
        *,
        prefix: str,
        command: str | None = None,
        args: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        url: str | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: float = 30.0,
        call_timeout: float = 60.0,
    ) -> None:
        if (command is None) == (url is None):
            raise SatchelUsageError("mount_mcp() needs exactly one of command= and url=.")
        if not _PREFIX.match(prefix):
            raise SatchelUsageError(
                f"The mount prefix {prefix!r} must be 1-40 letters, digits, '_' or '-'."
            )
        if url is not None and not url.startswith(("http://", "https://")):
            raise SatchelUsageError(f"The mount URL {url!r} must start with http:// or https://.")
        self.registry = registry
        self.prefix = prefix
        self._command = command
        self._args = list(args)
        self._env = dict(env) if env is not None else None
        self._cwd = cwd
        self._url = url
        self._headers = dict(headers or {})
        self.timeout = timeout
        self.call_timeout = call_timeout
        self._names: dict[str, str] = {}  # remote name -> local name, stable for a mount
        self._tools: dict[str, RemoteTool] = {}  # local name -> tool
        self._live: _Live | None = None
        self._newest: _Live | None = None  # the connection being set up, or the live one
        self._attempt = _Attempt()
        self._reconnect = anyio.Event()
        self._task_group: anyio.abc.TaskGroup | None = None
        self._thread: int | None = None
        self._closed = False
        self._server_info: types.Implementation | None = None
        self._protocol_version: str | None = None

    def __repr__(self) -> str:
        target = self._url or " ".join([self._command or "", *self._args])
        return f"<MountedServer {self.prefix!r} {target!r}>"

    # -- facts -----------------------------------------------------------------

    @property
    def tools(self) -> dict[str, str]:
        """The mounted tools: local name -> remote name."""
        return {name: tool.remote_name for name, tool in self._tools.items()}

    @property
    def connected(self) -> bool:
        """True while the connection to the server is up."""
        return self._live is not None and not self._live.lost.is_set()

    @property
    def server_name(self) -> str | None:
        """The remote server's own name, once connected."""
        return None if self._server_info is None else self._server_info.name

    @property
    def protocol_version(self) -> str | None:
        """The MCP protocol version of the last connection."""
        return self._protocol_version

    # -- lifecycle -------------------------------------------------------------

    async def start(self) -> MountedServer:
        """Connect, register the tools and start following the server. Idempotent.

        Raises:
            RemoteToolError: the server could not be started, reached or listed.
            SatchelUsageError: a tool's local name is taken by another tool.
        """
        if self._task_group is not None:
            return self
        if self._closed:
            raise SatchelUsageError(f"{self!r} was closed; mount it again.")
        self._thread = threading.get_ident()
        task_group = anyio.create_task_group()
        await task_group.__aenter__()
        try:
            await task_group.start(self._owner)
        except BaseException:
            task_group.cancel_scope.cancel()
            task_group.cancel_scope.shield = True  # an outer cancellation must not re-fire
            await task_group.__aexit__(None, None, None)
            self._unregister_all()
            raise
        self._task_group = task_group
        return self

    def __await__(self) -> Generator[Any, None, MountedServer]:
        return self.start().__await__()

    async def __aenter__(self) -> MountedServer:
        return await self.start()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Disconnect (stopping a stdio server) and unregister the mounted tools."""
        self._closed = True
        task_group, self._task_group = self._task_group, None
        if task_group is not None:
            task_group.cancel_scope.cancel()
            await task_group.__aexit__(None, None, None)
        self._unregister_all()

    # -- the owner task --------------------------------------------------------

    def _transport(self, on_eof: Callable[[], None]) -> _Transport:
        if self._url is not None:
            http = httpx2.AsyncClient(
                headers=self._headers, timeout=httpx2.Timeout(self.timeout, read=300.0)
            )
            return _with_client(http, self._url)
        assert self._command is not None
        params = StdioServerParameters(
            command=self._command, args=self._args, env=self._env, cwd=self._cwd
        )
        return _watched(stdio_client(params), on_eof)

    def _lose(self, live: _Live) -> None:
        """Mark ``live`` lost; the next call starts a new connection attempt."""
        live.lost.set()
        if self._live is live:
            self._live = None
            self._attempt = _Attempt()

    async def _owner(self, *, task_status: anyio.abc.TaskStatus[None]) -> None:
        first = True
        while True:
            attempt = self._attempt
            live: _Live | None = None
            try:
                # One scope around the whole connection: it times out the connect and
                # the first listing, then its deadline is lifted (a scope cannot end
                # while the client it saw opened is still open).
                with anyio.CancelScope(deadline=anyio.current_time() + self.timeout) as scope:
                    async with AsyncExitStack() as stack:
                        lost = anyio.Event()
                        client = Client(
                            self._transport(lost.set),
                            cache=None,
                            message_handler=self._on_message,
                            client_info=types.Implementation(name="satchel", version=__version__),
                        )
                        await stack.enter_async_context(client)
                        live = self._newest = _Live(client, lost)
                        followers = await stack.enter_async_context(anyio.create_task_group())
                        # Subscribe before listing, so no change falls in between.
                        await followers.start(self._listen, live)
                        await self._sync_tools(client, initial=first)
                        scope.deadline = math.inf
                        self._server_info = client.server_info
                        self._protocol_version = client.protocol_version
                        self._live = live
                        attempt.finish(None)
                        if first:
                            first = False
                            task_status.started()
                        logger.info("mounted %r (%d tools)", self, len(self._tools))
                        followers.start_soon(self._follow, live)
                        await lost.wait()
                        followers.cancel_scope.cancel()
                if scope.cancelled_caught:
                    raise TimeoutError(f"no answer within {self.timeout:g} s")
            except Exception as exc:  # the boundary: any failure of the connection
                misuse = _find_usage_error(exc)
                if misuse is not None:
                    raise misuse from None
                message = _describe(exc)
                if first:
                    raise RemoteToolError(
                        f"Could not mount the MCP server {self!r}: {message}",
                        details={"prefix": self.prefix},
                    ) from exc
                logger.warning("the MCP server %r failed: %s", self, message)
                if not attempt.done.is_set():
                    attempt.finish(message)
            finally:
                if live is not None:
                    self._lose(live)
                if self._attempt is attempt:
                    self._attempt = _Attempt()
                if not attempt.done.is_set():
                    attempt.finish("the connection ended")
            logger.info("the MCP server %r is disconnected; it reconnects on the next call", self)
            await self._reconnect.wait()
            self._reconnect = anyio.Event()

    async def _follow(self, live: _Live) -> None:
        """Re-list the tools whenever the server says they changed."""
        while True:
            await live.changed.wait()
            live.changed = anyio.Event()
            await self._refresh(live)

    async def _listen(
        self, live: _Live, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        """On a 2026-07-28 connection, tool changes arrive on a listen stream (on a
        handshake-era one, as notifications through :meth:`_on_message`). Reports
        started once the stream is acknowledged, or at once when there is none."""
        client = live.client
        caps = client.server_capabilities.tools
        if (
            client.protocol_version not in MODERN_PROTOCOL_VERSIONS
            or caps is None
            or not caps.list_changed
        ):
            task_status.started()
            return
        started = False
        try:
            async with client.listen(tools_list_changed=True) as subscription:
                task_status.started()
                started = True
                async for _event in subscription:
                    live.changed.set()
        except MCPError as exc:
            logger.info("%r does not stream tool changes: %s", self, exc.message)
        except Exception as exc:  # the stream dropped: the server is likely gone
            logger.info("%r stopped streaming tool changes: %s", self, _describe(exc))
            self._lose(live)
        finally:
            if not started:
                task_status.started()

    async def _on_message(self, message: types.ServerNotification | Exception) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            live = self._newest
            if live is not None:
                live.changed.set()

    async def _refresh(self, live: _Live) -> None:
        try:
            with anyio.fail_after(self.timeout):
                await self._sync_tools(live.client, initial=False)
        except Exception as exc:  # the boundary: a failed refresh keeps the old tools
            logger.warning("re-listing the tools of %r failed: %s", self, _describe(exc))

    async def refresh(self) -> None:
        """Re-list the server's tools now (they are followed anyway)."""
        live = await self._connection()
        with anyio.fail_after(self.timeout):
            await self._sync_tools(live.client, initial=False)

    # -- tools -----------------------------------------------------------------

    async def _sync_tools(self, client: Client, *, initial: bool) -> None:
        listing: list[types.Tool] = []
        cursor: str | None = None
        for _ in range(_MAX_PAGES):
            page = await client.list_tools(cursor=cursor)
            listing.extend(page.tools)
            cursor = page.next_cursor
            if cursor is None:
                break
        wanted: dict[str, RemoteTool] = {}
        for remote in listing:
            name = self._names.get(remote.name)
            if name is None:
                taken = set(self._names.values())
                name = local_tool_name(self.prefix, remote.name, taken)
                if name != f"{self.prefix}_{remote.name}":
                    logger.warning(
                        "the tool %r of %r is registered as %r (names allow only "
                        "[A-Za-z0-9_-], at most 64 characters)",
                        remote.name,
                        self,
                        name,
                    )
                self._names[remote.name] = name
            try:
                wanted[name] = RemoteTool(self, remote, name)
            except SatchelUsageError as exc:
                logger.warning("skipped the tool %r of %r: %s", remote.name, self, exc.message)
        self._apply(wanted, initial=initial)

    def _apply(self, wanted: dict[str, RemoteTool], *, initial: bool) -> None:
        for name in [n for n in self._tools if n not in wanted]:
            del self._tools[name]
            if self.registry.get(name) is not None:
                self.registry.unregister(name)
        for name, tool in wanted.items():
            mine = self._tools.get(name)
            if mine is not None and mine.definition == tool.definition:
                continue
            existing = self.registry.get(name)
            if existing is not None and existing is not mine:
                message = (
                    f"Cannot mount {tool.remote_name!r} of {self!r} as {name!r}: the registry "
                    "already has a tool of that name. Mount it under another prefix."
                )
                if initial:
                    raise SatchelUsageError(message)
                logger.error("%s", message)
                continue
            self.registry.register(tool, replace=mine is not None)
            self._tools[name] = tool

    def _unregister_all(self) -> None:
        for name, tool in list(self._tools.items()):
            if self.registry.get(name) is tool:
                self.registry.unregister(name)
        self._tools.clear()

    # -- calls -----------------------------------------------------------------

    async def _connection(self) -> _Live:
        live = self._live
        if live is not None:
            if not live.lost.is_set():
                return live
            self._lose(live)
        if self._closed or self._task_group is None:
            raise RemoteToolError(f"{self!r} is not running (it was closed or never started).")
        attempt = self._attempt
        self._reconnect.set()
        try:
            with anyio.fail_after(self.timeout):
                await attempt.done.wait()
        except TimeoutError:
            raise RemoteToolError(
                f"The MCP server {self!r} did not come back within {self.timeout:g} s."
            ) from None
        live = self._live
        if live is None:
            raise RemoteToolError(
                f"The MCP server {self!r} could not be restarted: {attempt.error}."
            )
        return live

    async def call_remote(
        self, remote: str, args: dict[str, Any], *, tool: str | None = None
    ) -> ToolResult:
        """Call the remote tool ``remote``; never raises for the remote's or the
        connection's failure.

        Args:
            remote: The tool's name on the remote server.
            args: Its arguments (already validated).
            tool: The local name to report in the result.
        """
        name = tool or remote
        if self._thread is not None and threading.get_ident() != self._thread:
            return result_from_exception(
                name,
                RemoteToolError(
                    f"Mounted tools of {self!r} must be called from the event loop that "
                    "mounted them."
                ),
            )
        try:
            live = await self._connection()
        except RemoteToolError as exc:
            return result_from_exception(name, exc)
        try:
            with anyio.fail_after(self.call_timeout):
                result = await live.client.call_tool(remote, args)
        except TimeoutError:
            return ToolResult(
                name,
                error=ToolError(
                    "timeout",
                    f"The MCP server {self.prefix!r} did not finish {remote!r} within "
                    f"{self.call_timeout:g} s. Try again later.",
                    {"prefix": self.prefix, "tool": remote},
                ),
            )
        except MCPError as exc:
            return self._call_error(name, remote, live, exc)
        except Exception as exc:  # the boundary: transport failures become results
            self._lose(live)
            return result_from_exception(
                name,
                RemoteToolError(
                    f"The connection to the MCP server {self.prefix!r} failed while running "
                    f"{remote!r} ({_describe(exc)}); it is reconnected on the next call.",
                    details={"prefix": self.prefix, "tool": remote},
                ),
            )
        return remote_result(name, result)

    def _call_error(self, name: str, remote: str, live: _Live, exc: MCPError) -> ToolResult:
        details = {"prefix": self.prefix, "tool": remote, "code": exc.code}
        if exc.code == types.CONNECTION_CLOSED or live.lost.is_set():
            self._lose(live)
            message = (
                f"The MCP server {self.prefix!r} closed the connection while running "
                f"{remote!r} (it may have crashed); it is restarted on the next call."
            )
        elif exc.code == types.REQUEST_TIMEOUT:
            return ToolResult(
                name,
                error=ToolError(
                    "timeout", f"The MCP server {self.prefix!r} timed out on {remote!r}.", details
                ),
            )
        else:
            message = (
                f"The MCP server {self.prefix!r} refused the call to {remote!r}: "
                f"{exc.message} (JSON-RPC error {exc.code})."
            )
        return result_from_exception(name, RemoteToolError(message, details=details))


@asynccontextmanager
async def _with_client(
    http: httpx2.AsyncClient, url: str
) -> AsyncGenerator[
    tuple[ReadStream[SessionMessage | Exception], WriteStream[SessionMessage]], None
]:
    async with http, streamable_http_client(url, http_client=http) as streams:
        yield streams


def mount_mcp(
    registry: ToolRegistry,
    *,
    prefix: str,
    command: str | None = None,
    args: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
    url: str | None = None,
    headers: Mapping[str, str] | None = None,
    timeout: float = 30.0,
    call_timeout: float = 60.0,
) -> MountedServer:
    """Mount another MCP server's tools into ``registry`` as ``{prefix}_{name}``.

    Give either ``command`` (and ``args``, ``env``, ``cwd``) to start a stdio server,
    or ``url`` (and ``headers``, e.g. an ``Authorization``) for streamable HTTP.

    Args:
        registry: Where to register the tools.
        prefix: Their name prefix (1-40 of ``[A-Za-z0-9_-]``).
        command: The executable of a stdio server.
        args: Its arguments.
        env: Extra environment variables for it.
        cwd: Its working directory.
        url: The endpoint of a streamable HTTP server.
        headers: HTTP headers sent with every request.
        timeout: Seconds allowed to connect and list the tools.
        call_timeout: Seconds allowed for one call; then it is a ``timeout`` result.

    Returns:
        The :class:`MountedServer`, to be started with ``await`` or ``async with``.

    Example:
        >>> async with mount_mcp(registry, prefix="git", command="uvx", args=["mcp-server-git"]):
        ...     print(registry.names())
    """
    return MountedServer(
        registry,
        prefix=prefix,
        command=command,
        args=args,
        env=env,
        cwd=cwd,
        url=url,
        headers=headers,
        timeout=timeout,
        call_timeout=call_timeout,
    )
