"""The connection of a mount: one background task that connects, and reconnects.

:class:`Connection` runs an owner task in a task group opened by
:meth:`Connection.start`. Each round of the task opens a transport and an SDK
:class:`~mcp.Client`, starts following the tool list, lists the tools (all within
``timeout``), then waits until the connection is lost. The first round's failure is
raised from :meth:`Connection.start` as a :class:`~satchel.RemoteToolError` (a
developer's :class:`~satchel.SatchelUsageError` as itself); a later one is logged.

A lost connection is not reopened at once: the next call asks for it through
:meth:`Connection.current`, which wakes the owner task and waits (up to ``timeout``)
for that attempt to end.
"""

from __future__ import annotations

import logging
import math
import threading
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import anyio
import anyio.abc
import mcp_types as types
from mcp import Client

from satchel._errors import RemoteToolError
from satchel._version import __version__
from satchel.mcp.mount._calls import describe, find_usage_error
from satchel.mcp.mount._follow import ToolListFollower

if TYPE_CHECKING:
    from satchel.mcp.mount._mount import MountedServer
    from satchel.mcp.mount._tools import MountedTools
    from satchel.mcp.mount._transport import MountTarget

__all__ = ["Connection", "Live"]

logger = logging.getLogger("satchel.mcp.mount")


@dataclass(eq=False)
class _Attempt:
    """One connection attempt, awaited by calls that need the connection."""

    done: anyio.Event = field(default_factory=anyio.Event)
    error: str | None = None

    def finish(self, error: str | None) -> None:
        self.error = error
        self.done.set()


@dataclass(eq=False)
class Live:
    """The live connection: the SDK client, the event that says it was lost, and the
    event that says its tool list changed."""

    client: Client
    lost: anyio.Event = field(default_factory=anyio.Event)
    changed: anyio.Event = field(default_factory=anyio.Event)


class Connection:
    """The connection of ``mount`` to the server at ``target``, keeping ``tools`` in
    step with it.

    Attributes:
        mount: The mount it connects.
        thread: The thread it was started on (calls must come from it).
        closed: True once :meth:`aclose` was called; it cannot start again.
        server_info: The remote server's own description, once connected.
        protocol_version: The MCP protocol version of the last connection.
    """

    def __init__(self, mount: MountedServer, target: MountTarget, tools: MountedTools) -> None:
        self.mount = mount
        self._target = target
        self._tools = tools
        self._follower = ToolListFollower(mount, tools, self.lose)
        self._live: Live | None = None
        self._attempt = _Attempt()
        self._reconnect = anyio.Event()
        self._task_group: anyio.abc.TaskGroup | None = None
        self.thread: int | None = None
        self.closed = False
        self.server_info: types.Implementation | None = None
        self.protocol_version: str | None = None

    @property
    def running(self) -> bool:
        """True between :meth:`start` and :meth:`aclose`."""
        return self._task_group is not None

    @property
    def connected(self) -> bool:
        """True while the connection to the server is up."""
        return self._live is not None and not self._live.lost.is_set()

    async def start(self) -> None:
        """Start the owner task; return once the first connection is up and listed.

        Raises:
            RemoteToolError: the server could not be started, reached or listed.
            SatchelUsageError: a tool's local name is taken by another tool.
        """
        self.thread = threading.get_ident()
        task_group = anyio.create_task_group()
        await task_group.__aenter__()
        try:
            await task_group.start(self._owner)
        except BaseException:
            task_group.cancel_scope.cancel()
            task_group.cancel_scope.shield = True  # an outer cancellation must not re-fire
            await task_group.__aexit__(None, None, None)
            raise
        self._task_group = task_group

    async def aclose(self) -> None:
        """Stop the owner task, disconnecting (and stopping a stdio server)."""
        self.closed = True
        task_group, self._task_group = self._task_group, None
        if task_group is not None:
            task_group.cancel_scope.cancel()
            await task_group.__aexit__(None, None, None)

    def lose(self, live: Live) -> None:
        """Mark ``live`` lost; the next call starts a new connection attempt."""
        live.lost.set()
        if self._live is live:
            self._live = None
            self._attempt = _Attempt()

    async def current(self) -> Live:
        """The live connection, after reconnecting if it was lost.

        Raises:
            RemoteToolError: the mount is not running, or the server did not come back.
        """
        live = self._live
        if live is not None:
            if not live.lost.is_set():
                return live
            self.lose(live)
        if self.closed or self._task_group is None:
            raise RemoteToolError(
                f"{self.mount!r} is not running (it was closed or never started)."
            )
        attempt = self._attempt
        self._reconnect.set()
        try:
            with anyio.fail_after(self.mount.timeout):
                await attempt.done.wait()
        except TimeoutError:
            raise RemoteToolError(
                f"The MCP server {self.mount!r} did not come back within {self.mount.timeout:g} s."
            ) from None
        live = self._live
        if live is None:
            raise RemoteToolError(
                f"The MCP server {self.mount!r} could not be restarted: {attempt.error}."
            )
        return live

    async def _owner(self, *, task_status: anyio.abc.TaskStatus[None]) -> None:
        mount = self.mount
        follower = self._follower
        first = True
        while True:
            attempt = self._attempt
            live: Live | None = None
            try:
                # One scope around the whole connection: it times out the connect and
                # the first listing, then its deadline is lifted (a scope cannot end
                # while the client it saw opened is still open).
                with anyio.CancelScope(deadline=anyio.current_time() + mount.timeout) as scope:
                    async with AsyncExitStack() as stack:
                        lost = anyio.Event()
                        client = Client(
                            self._target.transport(mount.timeout, lost.set),
                            cache=None,
                            message_handler=follower.on_message,
                            client_info=types.Implementation(name="satchel", version=__version__),
                        )
                        await stack.enter_async_context(client)
                        live = follower.newest = Live(client, lost)
                        followers = await stack.enter_async_context(anyio.create_task_group())
                        # Subscribe before listing, so no change falls in between.
                        await followers.start(follower.listen, live)
                        await self._tools.sync(client, initial=first)
                        scope.deadline = math.inf
                        self.server_info = client.server_info
                        self.protocol_version = client.protocol_version
                        self._live = live
                        attempt.finish(None)
                        if first:
                            first = False
                            task_status.started()
                        logger.info("mounted %r (%d tools)", mount, len(self._tools))
                        followers.start_soon(follower.follow, live)
                        await lost.wait()
                        followers.cancel_scope.cancel()
                if scope.cancelled_caught:
                    raise TimeoutError(f"no answer within {mount.timeout:g} s")
            except Exception as exc:  # the boundary: any failure of the connection
                misuse = find_usage_error(exc)
                if misuse is not None:
                    raise misuse from None
                message = describe(exc)
                if first:
                    raise RemoteToolError(
                        f"Could not mount the MCP server {mount!r}: {message}",
                        details={"prefix": mount.prefix},
                    ) from exc
                logger.warning("the MCP server %r failed: %s", mount, message)
                if not attempt.done.is_set():
                    attempt.finish(message)
            finally:
                if live is not None:
                    self.lose(live)
                if self._attempt is attempt:
                    self._attempt = _Attempt()
                if not attempt.done.is_set():
                    attempt.finish("the connection ended")
            logger.info("the MCP server %r is disconnected; it reconnects on the next call", mount)
            await self._reconnect.wait()
            self._reconnect = anyio.Event()
