"""The tools a mount has registered, kept in step with the remote server's listing.

:meth:`MountedTools.sync` lists the server's tools (following pagination), makes each
a :class:`~satchel.mcp.RemoteTool` under a local name that stays the same for the
whole mount, and registers, replaces or unregisters tools so that the registry matches
the listing. A local name taken by another tool is a
:class:`~satchel.SatchelUsageError` when mounting, and a logged error (the tool is
left out) on a later listing.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import mcp_types as types
from mcp import Client

from satchel._errors import SatchelUsageError
from satchel.mcp.mount._remote import RemoteTool, local_tool_name

if TYPE_CHECKING:
    from satchel.mcp.mount._mount import MountedServer

__all__ = ["MountedTools"]

logger = logging.getLogger("satchel.mcp.mount")

_MAX_PAGES = 100


class MountedTools:
    """The remote tools that ``mount`` has registered in its registry."""

    def __init__(self, mount: MountedServer) -> None:
        self._mount = mount
        self._names: dict[str, str] = {}  # remote name -> local name, stable for a mount
        self._tools: dict[str, RemoteTool] = {}  # local name -> tool

    def __len__(self) -> int:
        return len(self._tools)

    def names(self) -> dict[str, str]:
        """The mounted tools: local name -> remote name."""
        return {name: tool.remote_name for name, tool in self._tools.items()}

    async def sync(self, client: Client, *, initial: bool) -> None:
        """List the tools on ``client`` and make the registry match; ``initial`` on the
        first listing of the mount, where a name clash raises."""
        mount = self._mount
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
                name = local_tool_name(mount.prefix, remote.name, taken)
                if name != f"{mount.prefix}_{remote.name}":
                    logger.warning(
                        "the tool %r of %r is registered as %r (names allow only "
                        "[A-Za-z0-9_-], at most 64 characters)",
                        remote.name,
                        mount,
                        name,
                    )
                self._names[remote.name] = name
            try:
                wanted[name] = RemoteTool(mount, remote, name)
            except SatchelUsageError as exc:
                logger.warning("skipped the tool %r of %r: %s", remote.name, mount, exc.message)
        self._apply(wanted, initial=initial)

    def _apply(self, wanted: dict[str, RemoteTool], *, initial: bool) -> None:
        registry = self._mount.registry
        for name in [n for n in self._tools if n not in wanted]:
            del self._tools[name]
            if registry.get(name) is not None:
                registry.unregister(name)
        for name, tool in wanted.items():
            mine = self._tools.get(name)
            if mine is not None and mine.definition == tool.definition:
                continue
            existing = registry.get(name)
            if existing is not None and existing is not mine:
                message = (
                    f"Cannot mount {tool.remote_name!r} of {self._mount!r} as {name!r}: the "
                    "registry already has a tool of that name. Mount it under another prefix."
                )
                if initial:
                    raise SatchelUsageError(message)
                logger.error("%s", message)
                continue
            registry.register(tool, replace=mine is not None)
            self._tools[name] = tool

    def unregister_all(self) -> None:
        """Remove every tool of the mount that is still registered as its own."""
        registry = self._mount.registry
        for name, tool in list(self._tools.items()):
            if registry.get(name) is tool:
                registry.unregister(name)
        self._tools.clear()
