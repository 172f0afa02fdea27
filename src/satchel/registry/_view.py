"""Views: registries that show another registry's tools, changed, and follow it.

A view never copies: when a tool is added to, replaced in or removed from its source,
the view updates the one entry and tells its own listeners, under the name the view
shows. So a wrapped registry (prefixed, filtered, gated, ...) stays in step with its
source however many layers deep, and nothing above it writes a "follow the changes"
loop. Only the changed tool is wrapped again: a wrapper with state (a rate limit's
token bucket) keeps it for the tools that did not change.

Tools are registered on the source; a view refuses ``register`` and ``unregister``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

from satchel._errors import SatchelUsageError
from satchel.registry._registry import RegistryEvent, ToolRegistry
from satchel.tools import BaseTool

__all__ = ["RegistryView", "merged"]

logger = logging.getLogger("satchel.registry")

Wrap = Callable[[BaseTool], BaseTool | None]
"""What a view does to each source tool: the tool to show, or ``None`` to hide it."""


class RegistryView(ToolRegistry):
    """A live view of one or more registries, each tool passed through ``wrap``.

    Args:
        sources: The registries shown, in order. A name two sources define is shown
            from the first (a warning is logged).
        wrap: Turns a source tool into the tool shown (``None`` hides it). Called once
            per tool, and again only when that tool changes in its source.

    Example:
        >>> shown = RegistryView([registry], lambda t: t if t.spec.category == "math" else None)
        >>> registry.register(multiply)  # "multiply" is in ``shown`` too, if it is math
    """

    def __init__(self, sources: Sequence[ToolRegistry], wrap: Wrap) -> None:
        if not sources:
            raise SatchelUsageError("A registry view needs at least one source registry.")
        super().__init__(context=sources[0].context)
        self._sources = tuple(sources)
        self._wrap = wrap
        self._shown: dict[tuple[int, str], str] = {}  # (source index, source name) -> name
        self._owner: dict[str, tuple[int, str]] = {}  # the reverse
        for index, source in enumerate(self._sources):
            source.subscribe(lambda event, i=index: self._follow(i, event))
        with self._lock:
            table: dict[str, BaseTool] = {}
            versions: dict[str, dict[str, BaseTool]] = {}
            for index, source in enumerate(self._sources):
                for tool in source:
                    self._place(table, versions, index, tool.spec.name, tool)
            self._commit(table, versions)

    @property
    def sources(self) -> tuple[ToolRegistry, ...]:
        """The registries this view shows."""
        return self._sources

    def register(
        self,
        tool: BaseTool | Callable[..., Any],
        *,
        replace: bool = False,
        version: str | None = None,
        deprecated: str | None = None,
        default: bool = False,
    ) -> BaseTool:
        """Refused: register on the source registry, and the view follows.

        Raises:
            SatchelUsageError: always.
        """
        raise SatchelUsageError(
            "This registry is a view of another one (prefixed, filtered, gated, ...); "
            "register the tool on the source registry and the view shows it."
        )

    def unregister(self, name: str) -> None:
        """Refused: unregister from the source registry, and the view follows.

        Raises:
            SatchelUsageError: always.
        """
        raise SatchelUsageError(
            f"This registry is a view of another one; unregister {name!r} from the source "
            "registry and the view follows."
        )

    def _place(
        self,
        table: dict[str, BaseTool],
        versions: dict[str, dict[str, BaseTool]],
        index: int,
        name: str,
        tool: BaseTool,
    ) -> None:
        """Show ``tool`` (source ``index``'s ``name``) in ``table``, wrapped, and its
        other versions in ``versions``."""
        shown = self._wrap(tool)
        if shown is None:
            return
        view_name = shown.spec.name
        owner = self._owner.get(view_name)
        if owner is not None and owner != (index, name):
            if owner[0] < index:
                logger.warning(
                    "the tool %r is defined by two registries; the view keeps the first",
                    view_name,
                )
                return
            del self._shown[owner]  # an earlier source takes the name over
            versions.pop(view_name, None)
        table[view_name] = shown
        held = self._sources[index].versions(name)
        if held:
            entry: dict[str, BaseTool] = {}
            for version, item in held.items():
                wrapped = shown if item is tool else self._wrap(item)
                if wrapped is not None:
                    entry[version] = wrapped
            versions[view_name] = entry
        self._shown[(index, name)] = view_name
        self._owner[view_name] = (index, name)

    def _follow(self, index: int, event: RegistryEvent) -> None:
        """Apply one source change and tell this view's listeners."""
        events: list[RegistryEvent] = []
        with self._lock:
            table = dict(self._tools)
            versions = dict(self._versions)
            before = self._shown.pop((index, event.name), None)
            if before is not None:
                table.pop(before, None)
                versions.pop(before, None)
                del self._owner[before]
            tool = None if event.kind == "removed" else self._sources[index].get(event.name)
            if tool is not None:
                self._place(table, versions, index, event.name, tool)
            after = self._shown.get((index, event.name))
            if before is not None and before not in table:  # another source may have it
                for other, source in enumerate(self._sources):
                    hidden = source.get(event.name) if other != index else None
                    if hidden is not None:
                        self._place(table, versions, other, event.name, hidden)
                        after = self._shown.get((other, event.name))
                        break
            self._commit(table, versions)
        if before is not None and before != after:
            events.append(RegistryEvent("removed", before))
        if after is not None:
            events.append(RegistryEvent("replaced" if after == before else "added", after))
        for change in events:
            self._emit(change)


class _Merged(RegistryView):
    """A view of several registries plus one of its own, which takes registrations."""

    def __init__(self, registries: Sequence[ToolRegistry]) -> None:
        context = registries[0].context if registries else None
        self._own = ToolRegistry(context=context)
        super().__init__([*registries, self._own], lambda tool: tool)
        self._own._lookup = self  # its chains and `requires` see every merged tool

    def register(
        self,
        tool: BaseTool | Callable[..., Any],
        *,
        replace: bool = False,
        version: str | None = None,
        deprecated: str | None = None,
        default: bool = False,
    ) -> BaseTool:
        item = self._coerce(tool).bind(self)
        name = item.spec.name
        owner = self._owner.get(name)
        if owner is not None and owner[0] != len(self.sources) - 1:
            raise SatchelUsageError(
                f"A tool named {name!r} is already served by one of the merged registries; "
                "register it under a prefix with satchel.prefixed(), or replace it there."
            )
        return self._own.register(
            item, replace=replace, version=version, deprecated=deprecated, default=default
        )

    def unregister(self, name: str) -> None:
        if self._own.get(name) is not None:
            self._own.unregister(name)
            return
        super().unregister(name)


def merged(*registries: ToolRegistry) -> ToolRegistry:
    """One registry showing every tool of ``registries``, following their changes.
    Tools registered on it directly are kept in a registry of its own, beside them
    (a name one of ``registries`` serves is refused).

    Raises:
        SatchelUsageError: two registries define the same tool name now.

    Example:
        >>> catalog = merged(memory_tools, user_tools)
        >>> catalog.register(extra_tool)
    """
    seen: dict[str, int] = {}
    for index, registry in enumerate(registries):
        for name in registry.names():
            if name in seen:
                raise SatchelUsageError(
                    f"The tool {name!r} is defined by two registries (numbers {seen[name] + 1} "
                    f"and {index + 1}); serve one of them, or rename a tool.",
                    details={"tool": name},
                )
            seen[name] = index
    return _Merged(registries)
