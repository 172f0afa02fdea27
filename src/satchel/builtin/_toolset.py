"""Binding all four built-in memory tools to a store: :func:`memory_toolset`, a thin
call of :class:`~satchel.builtin.BuiltinTools` kept for existing code."""

from __future__ import annotations

from collections.abc import Sequence

from satchel.builtin._builder import BuiltinTools
from satchel.channels._messaging import MessageRouter
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
    global_agent: str | None = None,
) -> ToolRegistry:
    """The four built-in tools, ``context``, ``recall``, ``search`` and
    ``send_message``, bound to ``store`` (:class:`~satchel.builtin.BuiltinTools` chooses
    some of them, or replaces one).

    They are ordinary tools: the acting agent is each call's ``ctx.agent``, and any of
    them can be unregistered or replaced afterwards. When the store's embedder loads its
    model on first use, a call whose context has a progress hook loads it first and
    reports the slow first build (:func:`with_model_progress`).

    Args:
        store: The memory store the tools read and write.
        router: Delivers ``send_message``; by default a :class:`MessageRouter` on
            ``store`` that reaches the user (recorded in the conversation) and other
            agents, with no groups or channels. ``send_message`` offers the targets
            the router can deliver now: set its endpoints first (or build it with
            :func:`satchel.channels.channel_router`).
        registry: Register into this registry instead of a new one.
        replace: Replace tools of the same names already in ``registry``.
        new_block_kind: The kind of block ``context set`` creates.
        archival_permission: The permission of entries ``recall insert`` creates
            (``admin`` lets the agent delete them).
        date_languages: Languages understood in search's ``start_time``/``end_time``.
        global_agent: With per-project agents, the person's own agent: ``search``
            also covers its memory (see :class:`SearchTool`), ``recall read`` opens
            the person's archival entries it shows (see :class:`RecallTool`), and
            ``context load`` copies them into the project (see :class:`ContextTool`).

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
    options = BuiltinTools(
        new_block_kind=new_block_kind,
        archival_permission=archival_permission,
        date_languages=date_languages,
        global_agent=global_agent,
    )
    return options.build(store, router=router, registry=registry, replace_existing=replace)
