"""Choosing and building the built-in tools: :class:`BuiltinTools` and
:func:`builtin_tools`.

One place decides which built-ins an agent gets, with which options, and which of
them the user replaces with their own tool; ``satchel serve``, ``satchel run``/``chat``,
:class:`~satchel.Agent` and library code all build them here. The result is an
ordinary :class:`~satchel.registry.ToolRegistry`: the built-ins carry no special path.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from satchel._errors import SatchelUsageError
from satchel.builtin._context import ContextTool
from satchel.builtin._lean import with_lean_schemas
from satchel.builtin._recall import RecallTool
from satchel.builtin._search import SearchTool
from satchel.builtin._send import SendMessageTool
from satchel.channels._messaging import MessageRouter
from satchel.embed import LazyEmbedder
from satchel.embed._model_progress import with_model_progress
from satchel.memory import BlockKind, MemoryStore, Permission
from satchel.registry import ToolRegistry
from satchel.tools import BaseTool

__all__ = ["BUILTIN_NAMES", "BuiltinTools", "builtin_tools"]

BUILTIN_NAMES: tuple[str, ...] = ("context", "recall", "search", "send_message")
"""The names of the built-in tools, in the order they are registered."""

Replacement = BaseTool | Callable[..., Any]
"""What may stand in for a built-in: a tool, or a function :func:`~satchel.tool` takes."""


def _check_names(names: Collection[str], what: str) -> None:
    for name in names:
        if name not in BUILTIN_NAMES:
            close = difflib.get_close_matches(name, BUILTIN_NAMES, n=1)
            hint = f" Did you mean {close[0]!r}?" if close else ""
            raise SatchelUsageError(
                f"{what} names {name!r}, which is not a built-in tool; the built-ins are "
                f"{', '.join(BUILTIN_NAMES)}.{hint}",
                details={"tool": name},
            )


@dataclass(frozen=True, kw_only=True)
class BuiltinTools:
    """Which built-in tools to build, their options, and their replacements.

    Args:
        include: Only these built-ins (``None``: all four of :data:`BUILTIN_NAMES`).
        exclude: Leave these out (e.g. ``search`` when another registry serves its own).
        replace: Built-in name to the tool registered under that name instead. The
            replacement must carry the same name (so a model's calls and the usage
            rules still match).
        new_block_kind: The kind of block ``context set``/``create`` makes.
        archival_permission: The permission of entries ``recall insert`` creates
            (``admin`` lets the agent delete them).
        date_languages: Languages understood in search's ``start_time``/``end_time``.
        global_agent: With per-project agents, the person's own agent: ``search``
            also covers its memory (see :class:`SearchTool`), ``recall read`` opens
            the person's archival entries it shows (see :class:`RecallTool`), and
            ``context load`` copies them into the project (see :class:`ContextTool`).

    Raises:
        SatchelUsageError: A name is not a built-in, a name is both included and
            excluded or both excluded and replaced, or a replacement has another name.

    Example:
        >>> tools = BuiltinTools(exclude={"send_message"}, replace={"search": my_search})
        >>> registry = tools.build(store)
        >>> registry.names()
        ['context', 'recall', 'search']
    """

    include: Collection[str] | None = None
    exclude: Collection[str] = ()
    replace: Mapping[str, Replacement] = field(default_factory=dict[str, Replacement])
    new_block_kind: BlockKind = BlockKind.WORKING
    archival_permission: Permission = Permission.ADMIN
    date_languages: Sequence[str] = ("en",)
    global_agent: str | None = None

    ALL_NAMES: ClassVar[tuple[str, ...]] = BUILTIN_NAMES
    """Every built-in's name: ``context``, ``recall``, ``search``, ``send_message``."""

    def __post_init__(self) -> None:
        if isinstance(self.include, str) or isinstance(self.exclude, str):
            raise SatchelUsageError(
                "include and exclude take a collection of tool names, not one string."
            )
        _check_names(self.include or (), "include")
        _check_names(self.exclude, "exclude")
        _check_names(self.replace, "replace")
        both = sorted(set(self.include or ()) & set(self.exclude))
        if both:
            raise SatchelUsageError(f"{both} are both included and excluded; choose one.")
        dropped = sorted(set(self.replace) & set(self.exclude))
        if dropped:
            raise SatchelUsageError(f"{dropped} are both excluded and replaced; choose one.")

    @property
    def names(self) -> tuple[str, ...]:
        """The names the built registry will hold, in order."""
        chosen = set(BUILTIN_NAMES if self.include is None else self.include)
        chosen -= set(self.exclude)
        return tuple(name for name in BUILTIN_NAMES if name in chosen)

    def build(
        self,
        store: MemoryStore,
        *,
        router: MessageRouter | None = None,
        registry: ToolRegistry | None = None,
        replace_existing: bool = False,
    ) -> ToolRegistry:
        """The chosen built-ins bound to ``store`` (replacements in their place).

        The acting agent is each call's ``ctx.agent``. When the store's embedder loads
        its model on first use, a built-in called with a progress hook loads it first
        and reports the slow first build (:func:`with_model_progress`).

        Args:
            store: The memory store the tools read and write.
            router: Delivers ``send_message``; by default a :class:`MessageRouter` on
                ``store`` that reaches the user and other agents.
            registry: Register into this registry instead of a new one.
            replace_existing: Replace tools of the same names already in ``registry``.

        Raises:
            SatchelUsageError: ``registry`` holds one of the names already (and
                ``replace_existing`` is false), or a replacement's name differs.
        """
        target = registry if registry is not None else ToolRegistry()
        staged = ToolRegistry()  # checks every replacement before anything is registered
        embedder: object = getattr(store, "embedder", None)
        for name in self.names:
            if name in self.replace:
                item = staged.register(self.replace[name])
                if item.spec.name != name:
                    raise SatchelUsageError(
                        f"The replacement for the built-in {name!r} is named "
                        f"{item.spec.name!r}; give it the name {name!r}.",
                        details={"tool": name, "replacement": item.spec.name},
                    )
                continue
            tool = with_lean_schemas(self._make(name, store, router))
            if isinstance(embedder, LazyEmbedder):
                tool = with_model_progress(tool, embedder)
            staged.register(tool)
        for name in self.names:
            item = staged.get(name)
            assert item is not None
            target.register(item, replace=replace_existing)
        return target

    def _make(self, name: str, store: MemoryStore, router: MessageRouter | None) -> BaseTool:
        match name:
            case "context":
                return ContextTool(
                    store, new_block_kind=self.new_block_kind, global_agent=self.global_agent
                )
            case "recall":
                return RecallTool(
                    store, permission=self.archival_permission, global_agent=self.global_agent
                )
            case "search":
                return SearchTool(
                    store, date_languages=self.date_languages, global_agent=self.global_agent
                )
            case _:
                return SendMessageTool(router if router is not None else MessageRouter(store))


def builtin_tools(
    store: MemoryStore,
    *,
    include: Collection[str] | None = None,
    exclude: Collection[str] = (),
    replace: Mapping[str, Replacement] | None = None,
    router: MessageRouter | None = None,
    new_block_kind: BlockKind = BlockKind.WORKING,
    archival_permission: Permission = Permission.ADMIN,
    date_languages: Sequence[str] = ("en",),
) -> ToolRegistry:
    """The built-in tools bound to ``store``, as a new registry: see
    :class:`BuiltinTools` for the arguments.

    Raises:
        SatchelUsageError: A name that is not a built-in, a contradiction between
            ``include``, ``exclude`` and ``replace``, or a replacement with another name.

    Example:
        >>> registry = builtin_tools(store, exclude={"send_message"})
        >>> registry = builtin_tools(store, replace={"search": my_search})
    """
    return BuiltinTools(
        include=include,
        exclude=exclude,
        replace=dict(replace or {}),
        new_block_kind=new_block_kind,
        archival_permission=archival_permission,
        date_languages=date_languages,
    ).build(store, router=router)
