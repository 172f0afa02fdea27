"""Which subscribed resources changed: ``notifications/resources/updated`` for a URI.

A client subscribes to a URI (``resources/subscribe`` on a handshake-era connection, a
``subscriptions/listen`` stream on 2026-07-28). :class:`ResourceWatch` keeps every
subscribed URI, counted across clients and grouped by the agent whose memory it is,
and the provider's version tags (:class:`~satchel.mcp.ResourceVersions`) as last seen.
It compares them again:

* at once when the server is told its resources changed (a memory write through its own
  tools: :meth:`SatchelServer.notify_resources_changed
  <satchel.mcp.SatchelServer.notify_resources_changed>`), and
* every ``interval`` seconds while anything is subscribed, which catches writes by other
  processes on the same database (another ``satchel serve``, ``satchel memory append``).
  Nothing is polled while nobody is subscribed.

A URI whose tag moved (or appeared, or vanished) is reported to the
:class:`~satchel.mcp.server._feed.ChangeFeed`, which tells the subscribed clients; a changed
set of URIs is reported as a changed resource list.
"""

from __future__ import annotations

import logging
import math
from collections import Counter
from collections.abc import Mapping

import anyio
from mcp.server.connection import Connection

from satchel._errors import SatchelError
from satchel.mcp.server._feed import ChangeFeed
from satchel.mcp.server._resources import ResourceVersions
from satchel.tools import ToolContext

__all__ = ["DEFAULT_WATCH_INTERVAL", "ResourceWatch", "watched_by"]

logger = logging.getLogger("satchel.mcp")

_WATCHED = "satchel.watched_uris"
"""The key, in a handshake-era connection's ``state``, of the URIs it has watched."""

DEFAULT_WATCH_INTERVAL = 2.0
"""Seconds between two looks at the subscribed resources, while any are subscribed."""


class ResourceWatch:
    """Tells a :class:`ChangeFeed` which subscribed resources changed; see the module
    docstring. Lives on the server's event loop, for one run of the server.

    Args:
        provider: Gives the version tags.
        feed: Where changes go.
        interval: Seconds between looks while anything is subscribed; ``None`` to look
            only when :meth:`poke` is called.
    """

    def __init__(
        self, provider: ResourceVersions, feed: ChangeFeed, *, interval: float | None
    ) -> None:
        self._provider = provider
        self._feed = feed
        self._interval = interval
        self._subscribed: dict[str, Counter[str]] = {}
        self._known: dict[str, Mapping[str, str]] = {}
        self._lock = anyio.Lock()
        self._wake = anyio.Event()

    @property
    def subscribed(self) -> int:
        """How many subscriptions are being watched (a URI twice if two clients)."""
        return sum(sum(uris.values()) for uris in self._subscribed.values())

    async def add(self, agent: str, uri: str) -> None:
        """Watch ``uri`` of ``agent``'s resources (one more subscriber). Returns once
        the current tags are known, so a change made after this returns is reported."""
        async with self._lock:
            if agent not in self._subscribed:
                self._known[agent] = await self._versions(agent) or {}
            self._subscribed.setdefault(agent, Counter())[uri] += 1
        self._wake.set()  # (re)start the timer

    def remove(self, agent: str, uri: str) -> None:
        """One subscriber fewer for ``uri``; stop watching it at none."""
        uris = self._subscribed.get(agent)
        if uris is None or uris[uri] <= 0:
            return
        uris[uri] -= 1
        if uris[uri] <= 0:
            del uris[uri]
        if not uris:
            del self._subscribed[agent]
            self._known.pop(agent, None)

    def poke(self) -> None:
        """Look again soon (call on the event loop)."""
        self._wake.set()

    async def run(self) -> None:
        """Look whenever poked, and every ``interval`` seconds while anything is
        subscribed; until cancelled."""
        while True:
            idle = not self._subscribed or self._interval is None
            with anyio.move_on_after(math.inf if idle else self._interval):
                await self._wake.wait()
            self._wake = anyio.Event()
            try:
                await self.check()
            except Exception:  # the boundary: a failed look must not stop the watch
                logger.exception("checking the subscribed resources failed")

    async def check(self) -> None:
        """Compare the tags of every watched agent with the last seen, and report what
        moved."""
        async with self._lock:
            for agent in list(self._subscribed):
                now = await self._versions(agent)
                uris = self._subscribed.get(agent)
                if now is None or uris is None:
                    continue
                before = self._known.get(agent, {})
                self._known[agent] = now
                for uri in sorted(uris):
                    if before.get(uri) != now.get(uri):
                        self._feed.resources_changed(uri)
                if before.keys() != now.keys():
                    self._feed.resources_changed(None)

    async def _versions(self, agent: str) -> Mapping[str, str] | None:
        try:
            return await self._provider.resource_versions(ToolContext(agent=agent, origin="mcp"))
        except SatchelError as exc:
            logger.warning("cannot tell which resources of %r changed: %s", agent, exc.message)
            return None


def watched_by(connection: Connection, watch: ResourceWatch) -> dict[str, str]:
    """The agent of each URI a handshake-era ``connection`` subscribed to, as ``watch``
    watches them; add and pop entries beside :meth:`ResourceWatch.add` and
    :meth:`ResourceWatch.remove`. Whatever is left stops being watched when the
    connection closes."""
    watched: dict[str, str] | None = connection.state.get(_WATCHED)
    if watched is None:
        watched = connection.state[_WATCHED] = {}

        def forget(found: dict[str, str] = watched) -> None:
            for uri, agent in found.items():
                watch.remove(agent, uri)
            found.clear()

        connection.exit_stack.callback(forget)
    return watched
