"""The tools a mount has registered, kept in step with the remote server's listing.

:meth:`MountedTools.sync` lists the server's tools (following pagination), makes each
a :class:`~satchel.mcp.RemoteTool` under a local name that stays the same for the
whole mount, and registers, replaces or unregisters tools so that the registry matches
the listing. A local name taken by another tool is a
:class:`~satchel.SatchelUsageError` when mounting, and a logged error (the tool is
left out) on a later listing.

The listing asks for every version of a versioned tool (``_meta`` key
:data:`~satchel.mcp._wire.ALL_VERSIONS_META_KEY`; other servers ignore it): a satchel
server then also lists its older versions as ``name_v1`` with ``_meta`` naming the tool,
and they are registered as versions of the one local tool, so ``prefix_name@1`` calls
the remote ``name@1``, and the bare name the version the remote's bare name calls.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import mcp_types as types
from mcp import Client

from satchel._errors import SatchelUsageError
from satchel.mcp._wire import ALL_VERSIONS_META_KEY, NAME_META_KEY, VERSION_META_KEY
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
        listing: list[types.Tool] = []
        cursor: str | None = None
        for _ in range(_MAX_PAGES):
            page = await client.list_tools(cursor=cursor, meta={ALL_VERSIONS_META_KEY: True})
            listing.extend(page.tools)
            cursor = page.next_cursor
            if cursor is None:
                break
        wanted: dict[str, RemoteTool] = {}
        for remote in [t for t in listing if _version_of(t) is None]:
            name = self._local_name(remote.name)
            self._want(wanted, remote, name, name)
        for remote in [t for t in listing if _version_of(t) is not None]:
            base, version = _version_of(remote), _listed_version(remote)
            name = self._names.get(base or "")
            tool = wanted.get(name or "")
            if name is None or tool is None or tool.spec.version is None or version is None:
                logger.warning(
                    "skipped %r of %r: not a version of a listed tool", remote.name, self._mount
                )
                continue
            self._want(wanted, remote, name, f"{name}@{version}")
        self._apply(wanted, initial=initial)

    def _local_name(self, remote_name: str) -> str:
        name = self._names.get(remote_name)
        if name is None:
            mount = self._mount
            name = local_tool_name(mount.prefix, remote_name, set(self._names.values()))
            if name != f"{mount.prefix}_{remote_name}":
                logger.warning(
                    "the tool %r of %r is registered as %r (names allow only "
                    "[A-Za-z0-9_-], at most 64 characters)",
                    remote_name,
                    mount,
                    name,
                )
            self._names[remote_name] = name
        return name

    def _want(self, wanted: dict[str, RemoteTool], remote: types.Tool, name: str, key: str) -> None:
        try:
            wanted[key] = RemoteTool(self._mount, remote, name)
        except SatchelUsageError as exc:
            logger.warning("skipped the tool %r of %r: %s", remote.name, self._mount, exc.message)

    def _apply(self, wanted: dict[str, RemoteTool], *, initial: bool) -> None:
        """Register ``wanted`` (keyed ``name``, or ``name@version`` for a version the
        bare name does not call) and unregister what the listing no longer has."""
        registry = self._mount.registry
        for key, old in list(self._tools.items()):
            new = wanted.get(key)
            if new is None or new.spec.version != old.spec.version:
                del self._tools[key]
                held = (
                    key if "@" in key or old.spec.version is None else f"{key}@{old.spec.version}"
                )
                if new is None and "@" not in key:
                    held = key  # the tool is gone: every version of it
                if registry.get(held) is old:
                    registry.unregister(held)
        for key, tool in sorted(wanted.items(), key=lambda kv: "@" in kv[0]):  # defaults first
            mine = self._tools.get(key)
            if mine is not None and mine.definition == tool.definition:
                continue
            existing = registry.get(key)
            if existing is not None and existing is not mine:
                message = (
                    f"Cannot mount {tool.remote_name!r} of {self._mount!r} as {key!r}: the "
                    "registry already has a tool of that name. Mount it under another prefix."
                )
                if initial:
                    raise SatchelUsageError(message)
                logger.error("%s", message)
                continue
            registry.register(tool, replace=mine is not None)
            self._tools[key] = tool
        for key, tool in self._tools.items():  # the bare name calls what the remote's does
            version = tool.spec.version
            if "@" not in key and version is not None and registry.default_version(key) != version:
                registry.pin_version(key, version)

    def unregister_all(self) -> None:
        """Remove every tool of the mount that is still registered as its own."""
        registry = self._mount.registry
        for name, tool in list(self._tools.items()):
            if registry.get(name) is tool:
                registry.unregister(name)
        self._tools.clear()


def _version_of(remote: types.Tool) -> str | None:
    """The tool an older version listed as ``name_v1`` belongs to (its ``_meta``
    names it); ``None`` for every other listed tool."""
    base: Any = (remote.meta or {}).get(NAME_META_KEY)
    return base if isinstance(base, str) and base and base != remote.name else None


def _listed_version(remote: types.Tool) -> str | None:
    version: Any = (remote.meta or {}).get(VERSION_META_KEY)
    return version if isinstance(version, str) else None
