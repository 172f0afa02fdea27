"""Change notifications from a running server to its clients.

Registry changes (and resource changes the application reports) may happen on any
thread; :class:`ChangeFeed` records them under a lock and wakes one task on the event
loop, which tells every client in the way its protocol era expects:

* handshake-era connections get ``notifications/tools/list_changed`` (and the resource
  notifications) on their standalone channel: the stdio pipe, or the HTTP GET stream;
* 2026-07-28 clients get them only on a ``subscriptions/listen`` stream they opened,
  served by the SDK's :class:`~mcp.server.subscriptions.ListenHandler` from the feed's
  :class:`~mcp.server.subscriptions.InMemorySubscriptionBus`.

Bursts coalesce: ten registrations in a row produce one notification. A changed
resource list is also passed to ``on_resources_changed`` on the event loop (the server's
:class:`~satchel.mcp.server._watch.ResourceWatch` then looks for the resources that changed).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import AsyncGenerator, Callable
from contextlib import asynccontextmanager

import anyio
import anyio.from_thread
import anyio.lowlevel
from mcp.server.connection import Connection
from mcp.server.subscriptions import (
    InMemorySubscriptionBus,
    ListenHandler,
    ResourcesListChanged,
    ResourceUpdated,
    ToolsListChanged,
)

__all__ = ["SUBSCRIBED_URIS", "ChangeFeed"]

logger = logging.getLogger("satchel.mcp")

SUBSCRIBED_URIS = "satchel.subscribed_uris"
"""The key, in a handshake-era connection's ``state``, of the resource URIs it
subscribed to with ``resources/subscribe``."""


class ChangeFeed:
    """Collects changes from any thread and delivers them to connected clients.

    One feed lives for one run of a server (its lifespan).

    Args:
        on_resources_changed: Called on the event loop after a changed resource list
            was recorded.
    """

    def __init__(self, *, on_resources_changed: Callable[[], None] | None = None) -> None:
        self.on_resources_changed = on_resources_changed
        self.bus = InMemorySubscriptionBus()
        self.listen = ListenHandler(self.bus)
        self._lock = threading.Lock()
        self._connections: set[Connection] = set()
        self._tools = False
        self._resources = False
        self._updated: set[str] = set()
        self._wake = anyio.Event()
        self._token: anyio.lowlevel.EventLoopToken | None = None
        self._thread: int | None = None

    # -- connections -----------------------------------------------------------

    def track(self, connection: Connection) -> None:
        """Remember a handshake-era connection until it closes."""
        if connection in self._connections:
            return
        self._connections.add(connection)
        connection.exit_stack.callback(self._connections.discard, connection)

    @property
    def connections(self) -> int:
        """How many handshake-era connections are being told of changes."""
        return len(self._connections)

    # -- changes (any thread) --------------------------------------------------

    def tools_changed(self) -> None:
        """Record that the tool list changed."""
        with self._lock:
            self._tools = True
            wake = self._wake
        self._poke(wake)

    def resources_changed(self, uri: str | None = None) -> None:
        """Record that the resource list changed (``uri`` is ``None``) or that one
        resource's content did."""
        with self._lock:
            if uri is None:
                self._resources = True
            else:
                self._updated.add(uri)
            wake = self._wake
        self._poke(wake)

    def _poke(self, wake: anyio.Event) -> None:
        if self._token is None:
            return  # not running: nobody to tell
        if threading.get_ident() == self._thread:
            wake.set()
            return
        try:
            anyio.from_thread.run_sync(wake.set, token=self._token)
        except RuntimeError:  # the event loop has finished
            logger.debug("change not delivered: the server has stopped")

    # -- delivery (event loop) -------------------------------------------------

    @asynccontextmanager
    async def running(self) -> AsyncGenerator[ChangeFeed, None]:
        """Deliver changes while the context is open."""
        self._token = anyio.lowlevel.current_token()
        self._thread = threading.get_ident()
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(self._deliver)
                try:
                    yield self
                finally:
                    tg.cancel_scope.cancel()
        finally:
            self._token = None
            self._thread = None
            self.listen.close()

    async def _deliver(self) -> None:
        while True:
            await self._wake.wait()
            with self._lock:
                self._wake = anyio.Event()
                tools, resources, updated = self._tools, self._resources, self._updated
                self._tools, self._resources, self._updated = False, False, set()
            if resources and self.on_resources_changed is not None:
                self.on_resources_changed()
            try:
                await self._send(tools, resources, updated)
            except Exception:  # the boundary: a failed notification must not stop the feed
                logger.exception("sending change notifications failed")

    async def _send(self, tools: bool, resources: bool, updated: set[str]) -> None:
        connections = list(self._connections)
        if tools:
            await self.bus.publish(ToolsListChanged())
            for connection in connections:
                await connection.send_tool_list_changed()
        if resources:
            await self.bus.publish(ResourcesListChanged())
            for connection in connections:
                await connection.send_resource_list_changed()
        for uri in sorted(updated):
            await self.bus.publish(ResourceUpdated(uri))
            for connection in connections:
                subscribed: set[str] = connection.state.get(SUBSCRIBED_URIS, set())
                if uri in subscribed:
                    await connection.send_resource_updated(uri)
