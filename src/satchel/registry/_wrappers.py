"""Wrappers: behaviour that composes around a tool, or around every tool of a registry.

Each wrapper is a small :class:`~satchel.tools.BaseTool` holding the one it wraps.
Applied to a registry (any :class:`~satchel.registry.BaseRegistry`), a wrapper returns
a :class:`RegistryView`: a live, read-only view whose tools are the original's,
wrapped, including tools registered later.

Example:
    >>> registry.register(with_timeout(registry.get("fetch"), 5.0), replace=True)
    >>> github = prefixed(github_registry, "gh")
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import replace as dc_replace
from typing import Any, overload

import anyio

from satchel._errors import SatchelUsageError
from satchel.registry._base import BaseRegistry
from satchel.registry._view import RegistryView
from satchel.tools import BaseTool, ErrorInfo, ToolContext, ToolResult, ToolSpec, check_name

__all__ = [
    "WrapperTool",
    "filtered",
    "prefixed",
    "with_logging",
    "with_rate_limit",
    "with_timeout",
    "with_write_hook",
]


class WrapperTool(BaseTool):
    """Base of the wrappers: forwards everything to :attr:`inner`. Subclass it and
    override :meth:`call` (and :attr:`spec` if the definition changes)."""

    def __init__(self, inner: BaseTool) -> None:
        self.inner = inner

    @property
    def spec(self) -> ToolSpec:
        """The wrapped tool's definition."""
        return self.inner.spec

    async def call(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Forward the call to the wrapped tool."""
        return await self.inner.call(args, ctx)


def _each(
    target: BaseTool | BaseRegistry, wrap: Callable[[BaseTool], BaseTool]
) -> BaseTool | RegistryView:
    if isinstance(target, BaseRegistry):
        return RegistryView([target], wrap)
    return wrap(target)


class _Prefixed(WrapperTool):
    def __init__(self, inner: BaseTool, prefix: str, sep: str) -> None:
        super().__init__(inner)
        name = f"{prefix}{sep}{inner.spec.name}"
        check_name(name)
        self._spec = inner.spec.model_copy(update={"name": name})

    @property
    def spec(self) -> ToolSpec:
        return self._spec

    async def call(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        result = await self.inner.call(args, ctx)
        return dc_replace(result, tool=self._spec.name)


@overload
def prefixed(target: BaseTool, prefix: str, *, sep: str = "_") -> BaseTool: ...
@overload
def prefixed(target: BaseRegistry, prefix: str, *, sep: str = "_") -> RegistryView: ...
def prefixed(target: BaseTool | BaseRegistry, prefix: str, *, sep: str = "_") -> Any:
    """Rename a tool (or every tool of a registry) to ``prefix + sep + name``.

    Raises:
        SatchelUsageError: a prefixed name breaks ``^[A-Za-z0-9_-]{1,64}$``.
    """
    return _each(target, lambda t: _Prefixed(t, prefix, sep))


def filtered(registry: BaseRegistry, keep: Callable[[ToolSpec], bool]) -> RegistryView:
    """A view of ``registry`` showing only the tools whose spec ``keep`` accepts (it is
    asked again whenever a tool is added or replaced).

    Example:
        >>> read_only = filtered(registry, lambda s: s.annotations.read_only is True)
    """
    return RegistryView([registry], lambda tool: tool if keep(tool.spec) else None)


class _Timeout(WrapperTool):
    def __init__(self, inner: BaseTool, seconds: float) -> None:
        super().__init__(inner)
        if seconds <= 0:
            raise SatchelUsageError(f"A timeout must be positive, not {seconds}.")
        self.seconds = seconds

    async def call(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        with anyio.move_on_after(self.seconds) as scope:
            return await self.inner.call(args, ctx)
        assert scope.cancelled_caught
        return ToolResult(
            self.spec.name,
            error=ErrorInfo(
                "timeout",
                f"The tool did not finish within {self.seconds:g} s and was stopped. "
                "Try a smaller request, or try again later.",
                {"timeout_seconds": self.seconds},
            ),
        )


@overload
def with_timeout(target: BaseTool, seconds: float) -> BaseTool: ...
@overload
def with_timeout(target: BaseRegistry, seconds: float) -> RegistryView: ...
def with_timeout(target: BaseTool | BaseRegistry, seconds: float) -> Any:
    """Stop a call that runs longer than ``seconds`` and return a ``timeout`` error.

    An async tool is cancelled; a sync tool's worker thread is abandoned (it finishes
    in the background, its result discarded), so the caller gets its answer on time.
    """
    return _each(target, lambda t: _Timeout(t, seconds))


class _RateLimited(WrapperTool):
    """A token bucket: ``calls`` tokens, refilled evenly over ``per_seconds``."""

    def __init__(self, inner: BaseTool, calls: int, per_seconds: float) -> None:
        super().__init__(inner)
        if calls < 1 or per_seconds <= 0:
            raise SatchelUsageError("A rate limit needs calls >= 1 and per_seconds > 0.")
        self.calls = calls
        self.per_seconds = per_seconds
        self._tokens = float(calls)
        self._stamp = time.monotonic()
        self._lock = threading.Lock()

    def _take(self) -> float:
        """Take a token; return 0, or the seconds until one is free."""
        rate = self.calls / self.per_seconds
        with self._lock:
            now = time.monotonic()
            self._tokens = min(self.calls, self._tokens + (now - self._stamp) * rate)
            self._stamp = now
            if self._tokens >= 1:
                self._tokens -= 1
                return 0.0
            return (1 - self._tokens) / rate

    async def call(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        wait = self._take()
        if wait:
            return ToolResult(
                self.spec.name,
                error=ErrorInfo(
                    "retry",
                    f"Rate limit reached ({self.calls} calls per {self.per_seconds:g} s). "
                    f"Try again in {wait:.1f} s.",
                    {"retry_after_seconds": round(wait, 3)},
                ),
            )
        return await self.inner.call(args, ctx)


@overload
def with_rate_limit(target: BaseTool, calls: int, per_seconds: float) -> BaseTool: ...
@overload
def with_rate_limit(target: BaseRegistry, calls: int, per_seconds: float) -> RegistryView: ...
def with_rate_limit(target: BaseTool | BaseRegistry, calls: int, per_seconds: float) -> Any:
    """Allow at most ``calls`` calls per ``per_seconds`` (per tool); past that, answer
    with a ``retry`` error that says how long to wait. Calls are never queued."""
    return _each(target, lambda t: _RateLimited(t, calls, per_seconds))


class _Logged(WrapperTool):
    def __init__(self, inner: BaseTool, logger: logging.Logger, level: int) -> None:
        super().__init__(inner)
        self.logger = logger
        self.level = level

    async def call(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        start = time.perf_counter()
        result = await self.inner.call(args, ctx)
        ms = (time.perf_counter() - start) * 1000
        if result.error is None:
            self.logger.log(self.level, "tool %s ok in %.1f ms", self.spec.name, ms)
        else:
            self.logger.log(
                self.level, "tool %s %s in %.1f ms", self.spec.name, result.error.kind, ms
            )
        return result


@overload
def with_logging(
    target: BaseTool, logger: logging.Logger | None = None, level: int = logging.INFO
) -> BaseTool: ...
@overload
def with_logging(
    target: BaseRegistry, logger: logging.Logger | None = None, level: int = logging.INFO
) -> RegistryView: ...
def with_logging(
    target: BaseTool | BaseRegistry,
    logger: logging.Logger | None = None,
    level: int = logging.INFO,
) -> Any:
    """Log each call's tool, outcome and duration (never its arguments) to ``logger``
    (default ``satchel.calls``)."""
    log = logger or logging.getLogger("satchel.calls")
    return _each(target, lambda t: _Logged(t, log, level))


class _WriteHook(WrapperTool):
    def __init__(self, inner: BaseTool, on_write: Callable[[], None]) -> None:
        super().__init__(inner)
        self._on_write = on_write

    async def call(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        result = await self.inner.call(args, ctx)
        if result.error is None and self.inner.spec.annotations_for(args).read_only is not True:
            self._on_write()
        return result


@overload
def with_write_hook(target: BaseTool, on_write: Callable[[], None]) -> BaseTool: ...
@overload
def with_write_hook(target: BaseRegistry, on_write: Callable[[], None]) -> RegistryView: ...
def with_write_hook(target: BaseTool | BaseRegistry, on_write: Callable[[], None]) -> Any:
    """Call ``on_write()`` after each successful call that may have changed something
    (its tool, or that operation, is not read-only), for example to tell MCP clients
    that the memory resources changed.

    Example:
        >>> tools = with_write_hook(memory_toolset(store), server.notify_resources_changed)
    """
    return _each(target, lambda t: _WriteHook(t, on_write))
