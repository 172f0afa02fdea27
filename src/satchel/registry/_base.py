"""The read side every registry shares: :class:`BaseRegistry` (lookup, schemas, calls,
listeners) and the :class:`RegistryEvent` its listeners hear.

Reads never take a lock: the name → tool table is replaced whole on every change
(copy-on-write, :meth:`BaseRegistry._change`), so a lookup sees either the old table or
the new one. Changes are serialised by one lock, and listeners hear of them after it is
released. :class:`~satchel.ToolRegistry` adds registration; a
:class:`~satchel.registry.RegistryView` follows other registries and takes none.
"""

from __future__ import annotations

import asyncio
import difflib
import logging
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import anyio

from satchel._errors import SatchelUsageError
from satchel.registry._hooks import ContextHook, context_hooks
from satchel.registry._schemas import definitions
from satchel.registry._versions import split_version, version_alias
from satchel.schema import DIALECTS, Dialect
from satchel.tools import (
    ArgumentsError,
    BaseTool,
    ErrorInfo,
    ToolContext,
    ToolResult,
    ToolSpec,
    decode_arguments,
    result_from_exception,
)

__all__ = ["BaseRegistry", "RegistryEvent", "Tables"]

logger = logging.getLogger("satchel.registry")

_DEFAULT_CONTEXT = ToolContext()

Tables = tuple[dict[str, BaseTool], dict[str, dict[str, BaseTool]]]
"""A registry's name → tool table and its name → version → tool table."""


@dataclass(frozen=True, slots=True)
class RegistryEvent:
    """A change to a registry, as told to its listeners."""

    kind: Literal["added", "replaced", "removed"]
    name: str


class BaseRegistry:
    """The read side of every registry: look tools up, list their schemas, call them,
    and hear of changes. It has no way to change its tools;
    :class:`~satchel.ToolRegistry` adds one, and a view
    (:class:`~satchel.registry.RegistryView`) follows the registries it shows.

    Args:
        context: The :class:`ToolContext` used for calls that pass none.
    """

    def __init__(self, *, context: ToolContext | None = None) -> None:
        self._lock = threading.RLock()
        self._tools: dict[str, BaseTool] = {}
        self._listeners: list[Callable[[RegistryEvent], None]] = []
        self._versions: dict[str, dict[str, BaseTool]] = {}  # name -> version -> tool
        self._schema_cache: dict[tuple[str, str], list[dict[str, Any]]] = {}
        self._hooks: list[ContextHook] | None = None
        self.context = context or _DEFAULT_CONTEXT

    # -- changes ---------------------------------------------------------------

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
        self._hooks = None

    def _emit(self, event: RegistryEvent) -> None:
        for listener in self._listeners:
            try:
                listener(event)
            except Exception:  # a listener's bug must not break registration
                logger.exception("registry listener failed on %s", event)

    def _change(self, edit: Callable[[Tables], Sequence[RegistryEvent]]) -> None:
        """Apply ``edit`` to copies of the tables under the lock, make the copies the
        tables, then tell the listeners the events ``edit`` returned."""
        with self._lock:
            tables = (dict(self._tools), dict(self._versions))
            events = edit(tables)
            self._commit(*tables)
        for event in events:
            self._emit(event)

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

    def context_hooks(self) -> list[ContextHook]:
        """The tools' :class:`~satchel.registry.ContextHook`\\ s (looked through
        wrappers), in registration order: what runs before an agent's memory is
        rendered."""
        hooks = self._hooks
        if hooks is None:
            hooks = self._hooks = context_hooks(self._tools.values())
        return hooks

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
