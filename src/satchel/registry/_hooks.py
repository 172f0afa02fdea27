"""Context hooks: what a tool does before an agent's memory is rendered into a request.

A tool that keeps memory up to date by time (the productivity toolkit's
``schedule_reminder`` moves due reminders into working memory) implements
:class:`ContextHook`; the agent runs every hook its tools have before it renders the
context, so the model reads what the hooks changed. The agent knows nothing of
reminders: the tool registers the hook by having it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol, runtime_checkable

from satchel.tools import BaseTool

__all__ = ["ContextHook", "context_hooks"]


@runtime_checkable
class ContextHook(Protocol):
    """A tool that acts before an agent's context is rendered.

    Example:
        >>> class Ticker(Tool[In, Out]):
        ...     async def before_context(self, agent: str) -> None:
        ...         await self.agenda.fire_due(agent)
    """

    async def before_context(self, agent: str) -> None:
        """Bring ``agent``'s memory up to date before it is rendered."""
        ...


def context_hooks(tools: Iterable[BaseTool]) -> list[ContextHook]:
    """The hooks of ``tools``, each looked for through the wrappers around it
    (prefixes, approval gates, timeouts: anything holding its tool as ``inner``)."""
    found: list[ContextHook] = []
    for tool in tools:
        inner: object = tool
        while not isinstance(inner, ContextHook) and isinstance(
            nested := getattr(inner, "inner", None), BaseTool
        ):
            inner = nested
        if isinstance(inner, ContextHook):
            found.append(inner)
    return found
