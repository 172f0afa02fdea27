""":class:`BaseTool`, what a registry holds: a spec plus an async ``call`` that never
raises for a model's or a tool's error."""

from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from typing import Any, Protocol

from satchel._errors import SatchelError, SatchelUsageError
from satchel.tools._context import ToolContext
from satchel.tools._result import ErrorInfo, ToolResult
from satchel.tools._spec import ToolSpec

__all__ = ["BaseTool", "ToolLookup", "result_from_exception"]

logger = logging.getLogger("satchel.tools")

_INTERNAL_MESSAGE = (
    "The tool failed with an unexpected internal error. This is not caused by your "
    "arguments; do not retry the same call. Tell the user the tool is broken."
)


class ToolLookup(Protocol):
    """Where a tool being registered can find the tools registered beside it (a
    :class:`~satchel.ToolRegistry`)."""

    def get(self, name: str) -> BaseTool | None:
        """The tool called ``name`` (``name@version`` for one version), or ``None``."""
        ...


class BaseTool(ABC):
    """Anything a :class:`~satchel.ToolRegistry` can hold and call.

    Subclass :class:`~satchel.Tool` for a typed tool, use :func:`~satchel.tool` for a
    function, or :meth:`~satchel.ToolRegistry.register_raw` for a hand-written schema.
    Wrappers (prefix, timeout, ...) are ``BaseTool``\\ s around another one.
    """

    @property
    @abstractmethod
    def spec(self) -> ToolSpec:
        """The tool's definition (built once, then cached)."""

    @abstractmethod
    async def call(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Validate ``args`` and run the tool.

        Never raises for a model's or a tool's error: those come back as a
        :class:`ToolResult` whose ``error`` is set.
        """

    def bind(self, registry: ToolLookup) -> BaseTool:
        """The tool to hold when this one is registered in ``registry``.

        Most tools return themselves. A tool made of other tools (a
        :func:`~satchel.chain` naming its steps) looks them up here, and checks
        them, so a bad composition fails at registration.

        Raises:
            SatchelUsageError: the tool cannot work in ``registry``.
        """
        return self

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.spec.name!r}>"


def result_from_exception(tool: str, exc: Exception) -> ToolResult:
    """Map an exception raised while a tool ran to a structured result.

    A :class:`~satchel.SatchelError` (other than a developer's misuse) keeps its own
    kind, message and details; a ``RecursionError`` (arguments nested too deeply) is
    ``invalid_arguments``. Anything else is ``internal``: logged with its traceback,
    while the model sees no traceback.
    """
    if (
        isinstance(exc, SatchelError)
        and not isinstance(exc, SatchelUsageError)
        and exc.error_kind != "internal"
    ):
        return ToolResult(tool, error=ErrorInfo(exc.error_kind, exc.message, exc.details))
    if isinstance(exc, TimeoutError):
        return ToolResult(
            tool,
            error=ErrorInfo("timeout", "The tool timed out before finishing. Try again later."),
        )
    if isinstance(exc, RecursionError):
        # Values nested thousands deep pass JSON parsing and validation of ``Any``
        # fields, then exhaust the stack wherever they are printed or encoded; that
        # is the caller's input, not a broken tool.
        logger.warning("tool %r: arguments nested too deeply (%s)", tool, exc)
        return ToolResult(
            tool,
            error=ErrorInfo(
                "invalid_arguments",
                "The arguments are nested too deeply to process. Send flatter values "
                "(a few levels of objects and lists).",
                {"errors": [{"field": "", "problem": "nested too deeply"}]},
            ),
        )
    logger.error("tool %r raised an unexpected exception", tool, exc_info=exc)
    return ToolResult(
        tool, error=ErrorInfo("internal", _INTERNAL_MESSAGE, {"exception": type(exc).__name__})
    )
