""":class:`ToolRegistry`: the thread-safe set of tools an agent can call, and the
registrations that change it.

The reads (lookup, schemas, calls, listeners) are :class:`~satchel.registry.BaseRegistry`'s,
which every registry shares; this module adds registering, replacing, unregistering and
pinning versions, each a copy-on-write change of the tables.
"""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Callable, Generator, Mapping, Sequence
from types import TracebackType
from typing import Any, Protocol, Unpack, runtime_checkable

from satchel._errors import SatchelUsageError
from satchel.registry._base import BaseRegistry, RegistryEvent
from satchel.registry._versions import VersionedTool, split_version, version_key
from satchel.tools import (
    BaseTool,
    FunctionTool,
    RawTool,
    ToolAnnotations,
    ToolContext,
    ToolLookup,
    ToolOptions,
    ToolSpec,
    check_version,
)

__all__ = ["Mount", "RegistryEvent", "ToolRegistry"]


@runtime_checkable
class Mount(Protocol):
    """What :meth:`ToolRegistry.mount_mcp` returns: another server's tools, mounted
    here once started (``await mount`` or ``async with mount``) until closed.

    The registry declares only this; the MCP client that implements it
    (:class:`satchel.mcp.MountedServer`) is imported when a server is mounted, so the
    registry never loads the MCP SDK.
    """

    @property
    def tools(self) -> dict[str, str]:
        """Local tool name -> the server's own name, for the tools mounted now."""
        ...

    async def start(self) -> Mount:
        """Connect and register the tools. Idempotent."""
        ...

    async def aclose(self) -> None:
        """Unregister the tools and disconnect."""
        ...

    async def refresh(self) -> None:
        """Re-list the server's tools now."""
        ...

    def __await__(self) -> Generator[Any, None, Mount]:
        """``await mount`` starts it."""
        ...

    async def __aenter__(self) -> Mount:
        """``async with mount`` starts it, and closes it on exit."""
        ...

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
        /,
    ) -> None:
        """Close it."""
        ...


class ToolRegistry(BaseRegistry):
    """A set of tools with unique names, safe to use from many threads and tasks.

    Args:
        tools: Tools to register straight away.
        context: The :class:`ToolContext` used for calls that pass none.

    Example:
        >>> registry = ToolRegistry([WordCount(), add])
        >>> result = await registry.call("add", {"a": 1, "b": 2})
        >>> result.output
        3
    """

    def __init__(
        self,
        tools: Sequence[BaseTool | Callable[..., Any]] = (),
        *,
        context: ToolContext | None = None,
    ) -> None:
        super().__init__(context=context)
        self._pins: dict[str, str] = {}  # name -> the version the bare name calls
        self._lookup: ToolLookup = self  # where bound tools and `requires` look
        for item in tools:
            self.register(item)

    # -- changes ---------------------------------------------------------------

    def register(
        self,
        tool: BaseTool | Callable[..., Any],
        *,
        replace: bool = False,
        version: str | None = None,
        deprecated: str | None = None,
        default: bool = False,
    ) -> BaseTool:
        """Add a tool (a :class:`BaseTool`, or a plain function, which becomes a
        :class:`FunctionTool`).

        Its schemas are generated and checked now, so a bad tool fails here. A tool
        with a version (its own ``version`` option, or ``version=`` here) joins the
        other versions of its name: the bare name calls the latest (or the one
        registered with ``default=True``), ``name@version`` calls that one.

        Args:
            tool: The tool.
            replace: Replace a tool (or that version) registered under the name.
            version: Register the tool as this version of its name.
            deprecated: Mark this version deprecated; its results carry the message.
            default: Pin this version as the one the bare name calls.

        Raises:
            SatchelUsageError: the name (or that version) is taken and ``replace`` is
                false; the name, version or schema is invalid; a tool it ``requires``
                is not registered; or (a chain) its steps do not fit together.
        """
        item = self._coerce(tool).bind(self._lookup)
        if version is not None or deprecated is not None:
            item = VersionedTool(item, version=check_version(version), deprecated=deprecated)
        elif item.spec.deprecated and not isinstance(item, VersionedTool):
            item = VersionedTool(item)
        spec = item.spec  # builds and checks the spec outside the lock
        name, ver = spec.name, spec.version
        if default and ver is None:
            raise SatchelUsageError(f"default=True needs a version for the tool {name!r}.")
        self._check_requires(spec)
        with self._lock:
            exists = name in self._tools
            held = self._versions.get(name, {})
            if exists and not replace and (ver is None or not held or ver in held):
                what = f"Version {ver!r} of the tool {name!r}" if ver in held else None
                raise SatchelUsageError(
                    f"{what or f'A tool named {name!r}'} is already registered. Pass "
                    "replace=True to replace it, register another version, or register it "
                    "under a prefix with satchel.prefixed()."
                )
            versions = dict(self._versions)
            pins = dict(self._pins)
            if ver is None:
                versions.pop(name, None)
                pins.pop(name, None)
                chosen = item
            else:
                entry = dict(held) if held else {}
                entry[ver] = item
                versions[name] = dict(sorted(entry.items(), key=lambda kv: version_key(kv[0])))
                if default:
                    pins[name] = ver
                chosen = self._default_of(versions[name], pins.get(name))
            table = dict(self._tools)
            table[name] = chosen
            self._pins = pins
            self._commit(table, versions)
        self._emit(RegistryEvent("replaced" if exists else "added", name))
        return item

    def _check_requires(self, spec: ToolSpec) -> None:
        for required in spec.requires:
            if split_version(required)[0] == spec.name:
                raise SatchelUsageError(f"The tool {spec.name!r} cannot require itself.")
            if self._lookup.get(required) is None:
                raise SatchelUsageError(
                    f"The tool {spec.name!r} requires {required!r}, which is not registered; "
                    f"register {required!r} first.",
                    details={"tool": spec.name, "requires": required},
                )

    @staticmethod
    def _default_of(entry: Mapping[str, BaseTool], pin: str | None) -> BaseTool:
        """The version the bare name calls: the pinned one, else the latest."""
        if pin is not None and pin in entry:
            return entry[pin]
        return entry[max(entry, key=version_key)]

    def register_raw(
        self,
        *,
        name: str,
        description: str,
        parameters: Mapping[str, Any],
        run: Callable[[dict[str, Any]], Any],
        output_schema: Mapping[str, Any] | None = None,
        operation_annotations: Mapping[str, ToolAnnotations] | None = None,
        replace: bool = False,
        **options: Unpack[ToolOptions],
    ) -> RawTool:
        """Register a tool from a hand-written JSON schema and ``run(args) -> str``.

        Arguments are validated against ``parameters`` before ``run`` is called; an
        exception raised by ``run``, or a returned :class:`~satchel.ToolFailed`, becomes
        a ``failed`` result.
        """
        raw = RawTool(
            name=name,
            description=description,
            parameters=parameters,
            run=run,
            output_schema=output_schema,
            operation_annotations=operation_annotations,
            **options,
        )
        self.register(raw, replace=replace)
        return raw

    def unregister(self, name: str) -> None:
        """Remove the tool called ``name`` (every version), or one version
        (``name@version``).

        Raises:
            SatchelUsageError: no such tool or version.
        """
        base, ver = split_version(name)
        with self._lock:
            held = self._versions.get(base, {})
            if base not in self._tools or (ver is not None and ver not in held):
                raise SatchelUsageError(f"No tool named {name!r} is registered.")
            table = dict(self._tools)
            versions = dict(self._versions)
            pins = dict(self._pins)
            entry = {k: v for k, v in held.items() if k != ver} if ver is not None else {}
            if entry:
                versions[base] = entry
                if pins.get(base) == ver:
                    del pins[base]
                table[base] = self._default_of(entry, pins.get(base))
            else:
                del table[base]
                versions.pop(base, None)
                pins.pop(base, None)
            self._pins = pins
            self._commit(table, versions)
        self._emit(RegistryEvent("replaced" if entry else "removed", base))

    def pin_version(self, name: str, version: str | None) -> None:
        """Make the bare ``name`` call ``version`` (``None``: the latest again).

        Raises:
            SatchelUsageError: ``name`` has no such version.
        """
        with self._lock:
            entry = self._versions.get(name, {})
            if version is not None and version not in entry:
                known = ", ".join(entry) or "none"
                raise SatchelUsageError(
                    f"The tool {name!r} has no version {version!r} (versions: {known})."
                )
            pins = dict(self._pins)
            if version is None:
                pins.pop(name, None)
            else:
                pins[name] = version
            self._pins = pins
            if not entry:
                return
            table = dict(self._tools)
            table[name] = self._default_of(entry, pins.get(name))
            self._commit(table, self._versions)
        self._emit(RegistryEvent("replaced", name))

    @staticmethod
    def _coerce(tool: BaseTool | Callable[..., Any]) -> BaseTool:
        if isinstance(tool, BaseTool):
            return tool
        if inspect.isclass(tool):
            raise SatchelUsageError(
                f"register() got the class {tool.__name__}; pass an instance: "
                f"register({tool.__name__}())."
            )
        if callable(tool):
            return FunctionTool(tool)
        raise SatchelUsageError(f"Cannot register {tool!r}: not a tool or a function.")

    def mount_mcp(self, *, prefix: str, **options: Any) -> Mount:
        """Deprecated: use ``satchel.mcp.mount_mcp(registry, prefix=..., ...)``.

        Mounts another MCP server's tools here as ``{prefix}_{name}``; see
        :func:`satchel.mcp.mount_mcp` for the options. Start it with ``await`` or
        ``async with``. The registry sits below the MCP layer, so this method is the
        one import the layer test allows from ``registry`` up to ``mcp``, until it is
        removed.
        """
        warnings.warn(
            "ToolRegistry.mount_mcp is deprecated; use "
            "satchel.mcp.mount_mcp(registry, prefix=..., ...) instead",
            DeprecationWarning,
            stacklevel=2,
        )
        from satchel.mcp import mount_mcp  # the MCP SDK loads only when used

        return mount_mcp(self, prefix=prefix, **options)
