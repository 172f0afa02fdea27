"""Following a mounted server's tool list while its connection lives.

The server says its tools changed in the way of its protocol era:

* a handshake-era connection sends ``notifications/tools/list_changed``, which reach
  :meth:`ToolListFollower.on_message`;
* a 2026-07-28 connection sends them on a ``subscriptions/listen`` stream, which
  :meth:`ToolListFollower.listen` opens before the first listing, so that no change
  falls in between.

Either way the connection's ``changed`` event is set, and
:meth:`ToolListFollower.follow` re-lists the tools. A failed re-listing is logged and
keeps the tools as they were.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

import anyio
import anyio.abc
import mcp_types as types
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from satchel.mcp.mount._calls import describe

if TYPE_CHECKING:
    from satchel.mcp.mount._connection import Live
    from satchel.mcp.mount._mount import MountedServer
    from satchel.mcp.mount._tools import MountedTools

__all__ = ["ToolListFollower"]

logger = logging.getLogger("satchel.mcp.mount")


class ToolListFollower:
    """Keeps ``tools`` in step with the tool list of ``mount``'s connections; ``lose``
    marks a connection lost when its listen stream drops."""

    def __init__(
        self, mount: MountedServer, tools: MountedTools, lose: Callable[[Live], None]
    ) -> None:
        self._mount = mount
        self._tools = tools
        self._lose = lose
        self.newest: Live | None = None  # the connection being set up, or the live one

    async def on_message(self, message: types.ServerNotification | Exception) -> None:
        """The client's message handler: a tool-list change marks the newest
        connection's tools changed."""
        if isinstance(message, types.ToolListChangedNotification):
            live = self.newest
            if live is not None:
                live.changed.set()

    async def listen(
        self, live: Live, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        """On a 2026-07-28 connection, tool changes arrive on a listen stream (on a
        handshake-era one, as notifications through :meth:`on_message`). Reports
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
            logger.info("%r does not stream tool changes: %s", self._mount, exc.message)
        except Exception as exc:  # the stream dropped: the server is likely gone
            logger.info("%r stopped streaming tool changes: %s", self._mount, describe(exc))
            self._lose(live)
        finally:
            if not started:
                task_status.started()

    async def follow(self, live: Live) -> None:
        """Re-list the tools whenever the server says they changed."""
        while True:
            await live.changed.wait()
            live.changed = anyio.Event()
            await self._refresh(live)

    async def _refresh(self, live: Live) -> None:
        try:
            with anyio.fail_after(self._mount.timeout):
                await self._tools.sync(live.client, initial=False)
        except Exception as exc:  # the boundary: a failed refresh keeps the old tools
            logger.warning("re-listing the tools of %r failed: %s", self._mount, describe(exc))
