""":class:`ToolRegistry`: the thread-safe set of tools an agent can call.

Reads never take a lock: the name → tool table is replaced whole on every change
(copy-on-write), so a lookup sees either the old table or the new one. Changes are
serialised by one lock, and listeners hear of them after it is released.
"""

from __future__ import annotations

import asyncio
import difflib
import inspect
import logging
import threading
import warnings
from collections.abc import Callable, Generator, Iterator, Mapping, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Literal, Protocol, Unpack, runtime_checkable

import anyio

from satchel._errors import SatchelUsageError
from satchel.registry._schemas import definitions
from satchel.registry._versions import VersionedTool, split_version, version_alias, version_key
from satchel.schema import DIALECTS, Dialect
from satchel.tools import (
    ArgumentsError,
    BaseTool,
    ErrorInfo,
    FunctionTool,
    RawTool,
    ToolAnnotations,
    ToolContext,
    ToolOptions,
    ToolResult,
    ToolSpec,
    check_version,
    decode_arguments,
    result_from_exception,
)

__all__ = ["Mount", "RegistryEvent", "ToolRegistry"]

logger = logging.getLogger("satchel.registry")

_DEFAULT_CONTEXT = ToolContext()


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


@dataclass(frozen=True, slots=True)
class RegistryEvent:
    """A change to a registry, as told to its listeners."""

    kind: Literal["added", "replaced", "removed"]
    name: str


class ToolRegistry:
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
        self._lock = threading.RLock()
        self._tools: dict[str, BaseTool] = {}
        self._listeners: list[Callable[[RegistryEvent], None]] = []
        self._versions: dict[str, dict[str, BaseTool]] = {}  # name -> version -> tool
        self._pins: dict[str, str] = {}  # name -> the version the bare name calls
        self._lookup: ToolRegistry = self  # where bound tools and `requires` look
        self._schema_cache: dict[tuple[str, str], list[dict[str, Any]]] = {}
        self.context = context or _DEFAULT_CONTEXT
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

    def subscribe(self, listener: Callable[[RegistryEvent], None]) -> Callable[[], None]:
        """Call ``listener`` after every change; returns a function that unsubscribes."""
        with self._lock:
            self._listeners = [*self._listeners, listener]

        def unsubscribe() -> None:
            with self._lock:
                self._listeners = [x for x in self._listeners if x is not listener]

        return unsubscribe

    def _commit(
        self, table: dict[str, BaseTool], versions: dict[str, dict[str, BaseTool]] | None = None
    ) -> None:
        self._tools = table
        if versions is not None:
            self._versions = versions
        self._schema_cache = {}

    def _emit(self, event: RegistryEvent) -> None:
        for listener in self._listeners:
            try:
                listener(event)
            except Exception:  # a listener's bug must not break registration
                logger.exception("registry listener failed on %s", event)

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

    # -- reads -----------------------------------------------------------------

    def get(self, name: str) -> BaseTool | None:
        """The tool called ``name``, or ``None``.

        ``name@version`` is that version of a versioned tool, and its listed alias
        (``name_v1``, see :meth:`schemas`) is too; the bare name is the default version.
        """
        tool = self._tools.get(name)
        if tool is not None or not self._versions:
            return tool
        base, ver = split_version(name)
        if ver is not None:
            return self._versions.get(base, {}).get(ver)
        base, sep, _ = name.rpartition("_v")
        for found, item in self._versions.get(base, {}).items() if sep else ():
            if version_alias(base, found) == name:
                return item
        return None

    def versions(self, name: str) -> dict[str, BaseTool]:
        """Every version of the tool ``name``, oldest first (``{}`` for a tool without
        versions)."""
        return dict(self._versions.get(split_version(name)[0], {}))

    def default_version(self, name: str) -> str | None:
        """The version the bare ``name`` calls, or ``None``."""
        tool = self._tools.get(name)
        return None if tool is None else tool.spec.version

    def names(self) -> list[str]:
        """Every tool's name, in registration order."""
        return list(self._tools)

    def specs(self) -> list[ToolSpec]:
        """Every tool's :class:`ToolSpec`, in registration order."""
        return [t.spec for t in self._tools.values()]

    def tools(self) -> list[BaseTool]:
        """Every tool, in registration order."""
        return list(self._tools.values())

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __len__(self) -> int:
        return len(self._tools)

    def __iter__(self) -> Iterator[BaseTool]:
        return iter(list(self._tools.values()))

    def suggest(self, name: str, n: int = 3) -> list[str]:
        """The registered names closest to ``name`` (for "did you mean")."""
        names = list(self._tools)
        close = difflib.get_close_matches(name, names, n=n, cutoff=0.5)
        if len(close) < n:
            lowered = name.lower()
            close += [x for x in names if lowered and lowered in x.lower() and x not in close]
        return close[:n]

    def schemas(
        self, dialect: Dialect = "openai", *, versions: Literal["default", "all"] = "default"
    ) -> list[dict[str, Any]]:
        """Every tool's definition in a provider's own shape.

        A tool that one dialect cannot express (for example a parameter name Gemini
        refuses) is left out of that dialect's list with a warning naming it, so one
        tool never stops a whole registry from being served.

        Args:
            dialect: ``"openai"``, ``"openai-strict"``, ``"anthropic"``, ``"gemini"`` or
                ``"mcp"``.
            versions: ``"default"`` lists one version per name (the one the bare name
                calls); ``"all"`` adds every other version, named ``name_v1`` (providers
                refuse ``@``). MCP definitions carry the version in ``_meta``.
        """
        cache = self._schema_cache
        cached: list[dict[str, Any]] | None = cache.get((dialect, versions))
        if cached is None:
            if dialect not in DIALECTS:
                raise SatchelUsageError(
                    f"Unknown schema dialect {dialect!r}; choose one of {', '.join(DIALECTS)}.",
                    details={"dialect": repr(dialect)},
                )
            cached = definitions(self._tools, self._versions, dialect, versions)
            cache[(dialect, versions)] = cached
        return cached

    def usage_rules(self) -> str:
        """``## Tool Usage Rules`` and one ``- name: rule`` line per tool that has a
        rule, in registration order; ``""`` when no tool has one."""
        lines = [f"- {t.spec.name}: {t.spec.usage_rule}" for t in self if t.spec.usage_rule]
        lines += [
            f"- {t.spec.name}: call only after {', '.join(t.spec.requires)} ran in this turn."
            for t in self
            if t.spec.requires
        ]
        return "## Tool Usage Rules\n" + "\n".join(lines) if lines else ""

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

    # -- calls -----------------------------------------------------------------

    async def call(self, name: str, args: Any = None, ctx: ToolContext | None = None) -> ToolResult:
        """Validate and run one tool call. Never raises for a model's or a tool's error.

        Args:
            name: The tool's name.
            args: The arguments: a dict, a JSON object as text, or ``None``.
            ctx: The caller's context (defaults to the registry's).
        """
        tool = self._tools.get(name) or self.get(name)
        if tool is None:
            return self._unknown(name)
        if type(args) is not dict:
            try:
                args = decode_arguments(args)
            except ArgumentsError as exc:
                return ToolResult(name, error=exc.error)
        try:
            return await tool.call(args, ctx or self.context)  # pyright: ignore[reportUnknownArgumentType]
        except Exception as exc:  # a BaseTool that broke its own contract
            return result_from_exception(name, exc)

    def call_sync(self, name: str, args: Any = None, ctx: ToolContext | None = None) -> ToolResult:
        """:meth:`call` from synchronous code.

        Raises:
            SatchelUsageError: called from inside a running event loop (``await
                call()`` there instead).
        """
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return anyio.run(self.call, name, args, ctx)
        raise SatchelUsageError(
            "call_sync() cannot run inside a running event loop; use `await registry.call(...)`."
        )

    def _unknown(self, name: str) -> ToolResult:
        close = self.suggest(str(name))
        hint = f" Did you mean {', '.join(repr(c) for c in close)}?" if close else ""
        return ToolResult(
            str(name),
            error=ErrorInfo(
                "unknown_tool",
                f"There is no tool called {name!r}.{hint}",
                {"suggestions": close},
            ),
        )
