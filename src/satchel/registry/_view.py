"""Views: registries that show another registry's tools, changed, and follow it.

A view never copies: when a tool is added to, replaced in or removed from its source,
the view updates the one entry and tells its own listeners, under the name the view
shows. So a wrapped registry (prefixed, filtered, gated, ...) stays in step with its
source however many layers deep, and nothing above it writes a "follow the changes"
loop. Only the changed tool is wrapped again: a wrapper with state (a rate limit's
token bucket) keeps it for the tools that did not change.

A view is read-only (a :class:`~satchel.registry.BaseRegistry`, not a
:class:`~satchel.ToolRegistry`): tools are registered on the source, and a view's
``register`` and ``unregister`` only say so. :func:`merged` is the exception that takes
registrations: a :class:`~satchel.ToolRegistry` that also follows other registries.
Both hold a follower (the sources and which tool is shown under which name) and hand it
copies of their tables to change.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

from satchel._errors import SatchelUsageError
from satchel.registry._base import BaseRegistry, RegistryEvent, Tables
from satchel.registry._registry import ToolRegistry
from satchel.tools import BaseTool

__all__ = ["RegistryView", "merged"]

logger = logging.getLogger("satchel.registry")

Wrap = Callable[[BaseTool], BaseTool | None]
"""What a view does to each source tool: the tool to show, or ``None`` to hide it."""


class _Follower:
    """Which source tool a view shows under which name, and how one source change
    changes the view's tables. It holds the sources and the bookkeeping; the registry
    it serves holds the tables and hands copies in."""

    def __init__(self, sources: Sequence[BaseRegistry], wrap: Wrap) -> None:
        self.sources = tuple(sources)
        self._wrap = wrap
        self._shown: dict[tuple[int, str], str] = {}  # (source index, source name) -> name
        self._owner: dict[str, tuple[int, str]] = {}  # the reverse

    def owner(self, name: str) -> int | None:
        """The index of the source the view's ``name`` comes from, or ``None``."""
        found = self._owner.get(name)
        return None if found is None else found[0]

    def fill(self, tables: Tables) -> list[RegistryEvent]:
        """Put every source tool in ``tables``."""
        for index, source in enumerate(self.sources):
            for tool in source:
                self._place(tables, index, tool.spec.name, tool)
        return []

    def _place(self, tables: Tables, index: int, name: str, tool: BaseTool) -> None:
        """Show ``tool`` (source ``index``'s ``name``) in the table, wrapped, and its
        other versions in the versions table."""
        table, versions = tables
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
        held = self.sources[index].versions(name)
        if held:
            entry: dict[str, BaseTool] = {}
            for version, item in held.items():
                wrapped = shown if item is tool else self._wrap(item)
                if wrapped is not None:
                    entry[version] = wrapped
            versions[view_name] = entry
        self._shown[(index, name)] = view_name
        self._owner[view_name] = (index, name)

    def follow(self, tables: Tables, index: int, event: RegistryEvent) -> list[RegistryEvent]:
        """Apply one change of source ``index`` to ``tables``; the events the view's
        listeners hear of it."""
        table, versions = tables
        before = self._shown.pop((index, event.name), None)
        if before is not None:
            table.pop(before, None)
            versions.pop(before, None)
            del self._owner[before]
        tool = None if event.kind == "removed" else self.sources[index].get(event.name)
        if tool is not None:
            self._place(tables, index, event.name, tool)
        after = self._shown.get((index, event.name))
        if before is not None and before not in table:  # another source may have it
            for other, source in enumerate(self.sources):
                hidden = source.get(event.name) if other != index else None
                if hidden is not None:
                    self._place(tables, other, event.name, hidden)
                    after = self._shown.get((other, event.name))
                    break
        events: list[RegistryEvent] = []
        if before is not None and before != after:
            events.append(RegistryEvent("removed", before))
        if after is not None:
            events.append(RegistryEvent("replaced" if after == before else "added", after))
        return events


class RegistryView(BaseRegistry):
    """A live, read-only view of one or more registries, each tool passed through
    ``wrap``.

    Args:
        sources: The registries shown, in order. A name two sources define is shown
            from the first (a warning is logged).
        wrap: Turns a source tool into the tool shown (``None`` hides it). Called once
            per tool, and again only when that tool changes in its source.

    Example:
        >>> shown = RegistryView([registry], lambda t: t if t.spec.category == "math" else None)
        >>> registry.register(multiply)  # "multiply" is in ``shown`` too, if it is math
    """

    def __init__(self, sources: Sequence[BaseRegistry], wrap: Wrap) -> None:
        if not sources:
            raise SatchelUsageError("A registry view needs at least one source registry.")
        super().__init__(context=sources[0].context)
        self._follower = _Follower(sources, wrap)
        for index, source in enumerate(sources):
            source.subscribe(
                lambda event, i=index: self._change(
                    lambda tables: self._follower.follow(tables, i, event)
                )
            )
        self._change(self._follower.fill)

    @property
    def sources(self) -> tuple[BaseRegistry, ...]:
        """The registries this view shows."""
        return self._follower.sources

    def register(self, tool: BaseTool | Callable[..., Any], **options: Any) -> BaseTool:
        """Refused: a view takes no tools; register on the source registry, and the
        view follows.

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


class _Merged(ToolRegistry):
    """Several registries shown together, plus one of its own, which takes
    registrations (a registry that also follows others; not a view)."""

    def __init__(self, registries: Sequence[BaseRegistry]) -> None:
        context = registries[0].context if registries else None
        super().__init__(context=context)
        self._own = ToolRegistry(context=context)
        self._own._lookup = self  # its chains and `requires` see every merged tool
        self._follower = _Follower([*registries, self._own], lambda tool: tool)
        for index, source in enumerate(self._follower.sources):
            source.subscribe(
                lambda event, i=index: self._change(
                    lambda tables: self._follower.follow(tables, i, event)
                )
            )
        self._change(self._follower.fill)

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
        owner = self._follower.owner(name)
        if owner is not None and owner != len(self._follower.sources) - 1:
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
        raise SatchelUsageError(
            f"This registry is a view of another one; unregister {name!r} from the source "
            "registry and the view follows."
        )


def merged(*registries: BaseRegistry) -> ToolRegistry:
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
