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
from collections.abc import Callable, Generator, Iterator, Mapping, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Literal, Protocol, Unpack, runtime_checkable

import anyio

from satchel._errors import SatchelUsageError
from satchel.schema import DIALECTS, Dialect, tool_definition
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


def _spec_annotations(spec: ToolSpec) -> dict[str, bool | None]:
    """The tool-level hints, taking every operation of a multi-operation tool into
    account (destructive if any operation is, read-only only if all are)."""
    hints: dict[str, bool | None] = spec.annotations.model_dump()
    if spec.operations:
        if spec.is_destructive():
            hints["destructive"] = True
        hints["read_only"] = True if not spec.is_write else (hints["read_only"] and None)
    return hints


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
        self._schema_cache: dict[str, list[dict[str, Any]]] = {}
        self.context = context or _DEFAULT_CONTEXT
        for item in tools:
            self.register(item)

    # -- changes ---------------------------------------------------------------

    def register(self, tool: BaseTool | Callable[..., Any], *, replace: bool = False) -> BaseTool:
        """Add a tool (a :class:`BaseTool`, or a plain function, which becomes a
        :class:`FunctionTool`).

        Its schemas are generated and checked now, so a bad tool fails here.

        Raises:
            SatchelUsageError: the name is taken (and ``replace`` is false), invalid, or
                the tool's schema cannot be served.
        """
        item = self._coerce(tool)
        name = item.spec.name  # builds and checks the spec outside the lock
        with self._lock:
            exists = name in self._tools
            if exists and not replace:
                raise SatchelUsageError(
                    f"A tool named {name!r} is already registered. Pass replace=True to "
                    "replace it, or register it under a prefix with satchel.prefixed()."
                )
            table = dict(self._tools)
            table[name] = item
            self._commit(table)
        self._emit(RegistryEvent("replaced" if exists else "added", name))
        return item

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
        """Remove the tool called ``name``.

        Raises:
            SatchelUsageError: no such tool.
        """
        with self._lock:
            if name not in self._tools:
                raise SatchelUsageError(f"No tool named {name!r} is registered.")
            table = dict(self._tools)
            del table[name]
            self._commit(table)
        self._emit(RegistryEvent("removed", name))

    def subscribe(self, listener: Callable[[RegistryEvent], None]) -> Callable[[], None]:
        """Call ``listener`` after every change; returns a function that unsubscribes."""
        with self._lock:
            self._listeners = [*self._listeners, listener]

        def unsubscribe() -> None:
            with self._lock:
                self._listeners = [x for x in self._listeners if x is not listener]

        return unsubscribe

    def _commit(self, table: dict[str, BaseTool]) -> None:
        self._tools = table
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
        """The tool called ``name``, or ``None``."""
        return self._tools.get(name)

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

    def schemas(self, dialect: Dialect = "openai") -> list[dict[str, Any]]:
        """Every tool's definition in a provider's own shape.

        A tool that one dialect cannot express (for example a parameter name Gemini
        refuses) is left out of that dialect's list with a warning naming it, so one
        tool never stops a whole registry from being served.

        Args:
            dialect: ``"openai"``, ``"openai-strict"``, ``"anthropic"``, ``"gemini"`` or
                ``"mcp"``.
        """
        cache = self._schema_cache
        cached: list[dict[str, Any]] | None = cache.get(dialect)
        if cached is None:
            if dialect not in DIALECTS:
                raise SatchelUsageError(
                    f"Unknown schema dialect {dialect!r}; choose one of {', '.join(DIALECTS)}.",
                    details={"dialect": repr(dialect)},
                )
            cached = []
            for s in self.specs():
                try:
                    definition = tool_definition(
                        s.name,
                        s.description,
                        s.input_schema,
                        dialect,
                        output_schema=s.output_schema,
                        annotations=_spec_annotations(s),
                        examples=s.examples,
                    )
                except SatchelUsageError as exc:
                    logger.warning(
                        "the tool %r is left out of the %s schemas: %s", s.name, dialect, exc
                    )
                    continue
                cached.append(definition)
            cache[dialect] = cached
        return cached

    def usage_rules(self) -> str:
        """``## Tool Usage Rules`` and one ``- name: rule`` line per tool that has a
        rule, in registration order; ``""`` when no tool has one."""
        lines = [f"- {t.spec.name}: {t.spec.usage_rule}" for t in self if t.spec.usage_rule]
        return "## Tool Usage Rules\n" + "\n".join(lines) if lines else ""

    def mount_mcp(self, *, prefix: str, **options: Any) -> Mount:
        """Mount another MCP server's tools here as ``{prefix}_{name}``; see
        :func:`satchel.mcp.mount_mcp` for the options. Start it with ``await`` or
        ``async with``."""
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
        tool = self._tools.get(name)
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
