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

This module is the front; the parts live beside it: ``_mount_transport`` (reaching the
server), ``_mount_connection`` (the owner task and reconnects), ``_mount_tools``
(listing the tools and registering them), ``_mount_follow`` (following changes to the
list) and ``_mount_calls`` (a call and its failures).

Use it from the event loop that mounted it, and close it from the task that opened it::

    async with mount_mcp(registry, prefix="fs", command="npx", args=[...]) as mounted:
        result = await registry.call("fs_read_file", {"path": "README.md"})
"""

from __future__ import annotations

import re
from collections.abc import Generator, Mapping, Sequence
from types import TracebackType
from typing import Any

import anyio

from satchel._errors import SatchelUsageError
from satchel.mcp.mount._calls import call_remote
from satchel.mcp.mount._connection import Connection
from satchel.mcp.mount._tools import MountedTools
from satchel.mcp.mount._transport import MountTarget
from satchel.registry import ToolRegistry
from satchel.tools import ToolResult

__all__ = ["MountedServer", "mount_mcp"]

_PREFIX = re.compile(r"^[A-Za-z0-9_-]{1,40}$")


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
        self._target = MountTarget(
            command=command,
            args=list(args),
            env=dict(env) if env is not None else None,
            cwd=cwd,
            url=url,
            headers=dict(headers or {}),
        )
        self.timeout = timeout
        self.call_timeout = call_timeout
        self._tools = MountedTools(self)
        self._connection = Connection(self, self._target, self._tools)

    def __repr__(self) -> str:
        return f"<MountedServer {self.prefix!r} {self._target.label!r}>"

    # -- facts -----------------------------------------------------------------

    @property
    def tools(self) -> dict[str, str]:
        """The mounted tools: local name -> remote name."""
        return self._tools.names()

    @property
    def connected(self) -> bool:
        """True while the connection to the server is up."""
        return self._connection.connected

    @property
    def server_name(self) -> str | None:
        """The remote server's own name, once connected."""
        info = self._connection.server_info
        return None if info is None else info.name

    @property
    def protocol_version(self) -> str | None:
        """The MCP protocol version of the last connection."""
        return self._connection.protocol_version

    # -- lifecycle -------------------------------------------------------------

    async def start(self) -> MountedServer:
        """Connect, register the tools and start following the server. Idempotent.

        Raises:
            RemoteToolError: the server could not be started, reached or listed.
            SatchelUsageError: a tool's local name is taken by another tool.
        """
        if self._connection.running:
            return self
        if self._connection.closed:
            raise SatchelUsageError(f"{self!r} was closed; mount it again.")
        try:
            await self._connection.start()
        except BaseException:
            self._tools.unregister_all()
            raise
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
        await self._connection.aclose()
        self._tools.unregister_all()

    async def refresh(self) -> None:
        """Re-list the server's tools now (they are followed anyway)."""
        live = await self._connection.current()
        with anyio.fail_after(self.timeout):
            await self._tools.sync(live.client, initial=False)

    # -- calls -----------------------------------------------------------------

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
        return await call_remote(self._connection, remote, args, tool or remote)


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
