"""Binding the built-in memory tools to a store: :func:`memory_toolset`."""

from __future__ import annotations

from collections.abc import Sequence

from satchel.builtin._context import ContextTool
from satchel.builtin._messaging import MessageRouter
from satchel.builtin._recall import RecallTool
from satchel.builtin._search import SearchTool
from satchel.builtin._send import SendMessageTool
from satchel.memory import BlockKind, MemoryStore, Permission
from satchel.registry import ToolRegistry

__all__ = ["memory_toolset"]


def memory_toolset(
    store: MemoryStore,
    *,
    router: MessageRouter | None = None,
    registry: ToolRegistry | None = None,
    replace: bool = False,
    new_block_kind: BlockKind = BlockKind.WORKING,
    archival_permission: Permission = Permission.ADMIN,
    date_languages: Sequence[str] = ("en",),
) -> ToolRegistry:
    """The four built-in tools, ``context``, ``recall``, ``search`` and
    ``send_message``, bound to ``store``.

    They are ordinary tools: the acting agent is each call's ``ctx.agent``, and any of
    them can be unregistered or replaced afterwards.

    Args:
        store: The memory store the tools read and write.
        router: Delivers ``send_message``; by default a :class:`MessageRouter` on
            ``store`` that reaches the user (recorded in the conversation) and other
            agents, with no groups or channels.
        registry: Register into this registry instead of a new one.
        replace: Replace tools of the same names already in ``registry``.
        new_block_kind: The kind of block ``context set`` creates.
        archival_permission: The permission of entries ``recall insert`` creates
            (``admin`` lets the agent delete them).
        date_languages: Languages understood in search's ``start_time``/``end_time``.

    Returns:
        The registry holding the tools.

    Raises:
        SatchelUsageError: ``registry`` has a tool with one of the names already and
            ``replace`` is false.

    Example:
        >>> store = SQLiteStore("memory.db", embedder=default_embedder())  # doctest: +SKIP
        >>> tools = memory_toolset(store)  # doctest: +SKIP
        >>> await tools.call("context", {"operation": "list"}, ToolContext(agent="ada"))
    """
    target = registry if registry is not None else ToolRegistry()
    tools = (
        ContextTool(store, new_block_kind=new_block_kind),
        RecallTool(store, permission=archival_permission),
        SearchTool(store, date_languages=date_languages),
        SendMessageTool(router if router is not None else MessageRouter(store)),
    )
    for tool in tools:
        target.register(tool, replace=replace)
    return target
