"""The ``context`` tool: the agent edits the memory that is always in its context (core
blocks) or loaded into it (working blocks), and moves blocks in and out of archival
memory.

Its input and output models are in :mod:`._context_ops`; replace, create and set, the
check before a kind change and the output of a write are in :mod:`._context_steps`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar, TypeGuard

from satchel._counts import counted
from satchel.builtin._block_moves import archive_into, copy_entry, load_copy, swap_in_steps
from satchel.builtin._context_ops import (
    ContextAppend,
    ContextArchive,
    ContextCreate,
    ContextList,
    ContextLoad,
    ContextOperation,
    ContextOutput,
    ContextReplace,
    ContextSet,
    ContextSwap,
)
from satchel.builtin._context_steps import ContextSteps, done
from satchel.builtin._lookup import person_entry_not_own
from satchel.builtin._views import block_info, checked
from satchel.memory import BlockKind, MemoryStore, RequestOrigin
from satchel.tools import Tool, ToolAnnotations, ToolContext

__all__ = [
    "ContextAppend",
    "ContextArchive",
    "ContextCreate",
    "ContextList",
    "ContextLoad",
    "ContextOperation",
    "ContextOutput",
    "ContextReplace",
    "ContextSet",
    "ContextSwap",
    "ContextTool",
]

_IN_CONTEXT = (BlockKind.CORE, BlockKind.WORKING)


class ContextTool(Tool[ContextOperation, ContextOutput], ContextSteps):
    """The ``context`` built-in tool, bound to a :class:`~satchel.memory.MemoryStore`.

    The acting agent is ``ctx.agent``. Every write goes through the store, whose
    permission gate may deny it or ask for consent; those errors reach the model as
    ``denied`` and ``needs_approval`` results.

    Args:
        store: The memory store.
        new_block_kind: The kind of a block that ``set`` creates (``working`` by default:
            the agent's own notes; ``core`` to make them permanent context).
        global_agent: The person's own agent when agents are projects (``satchel serve
            --agent auto``): ``load`` of one of the person's archival entries, which
            ``search`` shows as ``person/label``, copies it into the project's working
            memory under its bare label (or ``target_label``), with the entry's
            permission; the person's entry is not changed. What ``load`` reaches is
            what ``recall read`` reads by label (see :mod:`satchel.builtin._lookup`).
    """

    name = "context"
    description = (
        "Edit your core (always shown) and working (loaded) memory blocks: keep what you "
        "know about the user, the task and yourself current. A write over a block's "
        "limit is refused: summarise or archive part of it first."
    )
    summary = "Edit core and working memory blocks."
    usage_rule = (
        "Keep core memory current: record lasting facts with context append/replace, and "
        "archive blocks you no longer need in context."
    )
    category = "memory"
    actions = ("read", "write")
    memory_gated = True
    operation_annotations: ClassVar[Mapping[str, ToolAnnotations]] = {
        "append": ToolAnnotations(read_only=False, destructive=False, idempotent=False),
        "replace": ToolAnnotations(read_only=False, destructive=True, idempotent=False),
        "create": ToolAnnotations(read_only=False, destructive=False, idempotent=False),
        "set": ToolAnnotations(read_only=False, destructive=True, idempotent=True),
        # archive and swap remove the block when given a target label (an admin delete)
        "archive": ToolAnnotations(read_only=False, destructive=True, idempotent=True),
        "load": ToolAnnotations(read_only=False, destructive=False, idempotent=True),
        "swap": ToolAnnotations(read_only=False, destructive=True, idempotent=False),
        "list": ToolAnnotations(read_only=True, destructive=False, idempotent=True),
    }

    def __init__(
        self,
        store: MemoryStore,
        *,
        new_block_kind: BlockKind = BlockKind.WORKING,
        global_agent: str | None = None,
    ) -> None:
        self.store = store
        self.new_block_kind = BlockKind(new_block_kind)
        self.global_agent = global_agent

    async def execute(
        self,
        params: ContextAppend
        | ContextReplace
        | ContextCreate
        | ContextSet
        | ContextArchive
        | ContextLoad
        | ContextSwap
        | ContextList,
        ctx: ToolContext,
    ) -> ContextOutput:
        """Run one operation for ``ctx.agent``."""
        agent = ctx.agent
        origin = RequestOrigin.of(ctx)
        match params:
            case ContextAppend():
                block = await checked(
                    self.store.append_to_block(agent, params.label, params.content, origin=origin)
                )
                return done(
                    f"Appended {counted(len(params.content), 'character')} to {{}}", block, agent
                )
            case ContextReplace():
                return await self._replace(agent, params, origin)
            case ContextCreate():
                return await self._create(agent, params)
            case ContextSet():
                return await self._set(agent, params, origin)
            case ContextArchive():
                if _other(params.target_label, params.label):
                    _, entry = await archive_into(
                        self.store, agent, params.label, params.target_label, origin
                    )
                    return done(f"Saved {params.label!r} into {{}} and removed it", entry, agent)
                await self._expect(agent, params.label, in_context=True)
                block = await checked(
                    self.store.set_kind(agent, params.label, BlockKind.ARCHIVAL, origin=origin)
                )
                return done("Archived {} to archival memory", block, agent)
            case ContextLoad():
                entry = await person_entry_not_own(
                    self.store, agent, params.label, self.global_agent
                )
                if entry is not None:
                    copy = await copy_entry(
                        self.store,
                        agent,
                        entry,
                        params.target_label or entry.label,
                        permission=entry.permission,
                        advice="Choose another target_label: the person's entry loads only "
                        "as a copy.",
                    )
                    return done(
                        f"Loaded a copy of {params.label!r} as {{}} (the person's entry stays "
                        "as it is)",
                        copy,
                        agent,
                    )
                if _other(params.target_label, params.label):
                    copy = await load_copy(self.store, agent, params.label, params.target_label)
                    return done(
                        f"Loaded a copy of {params.label!r} as {{}} (the entry stays)", copy, agent
                    )
                await self._expect(agent, params.label, in_context=False)
                block = await checked(
                    self.store.set_kind(agent, params.label, BlockKind.WORKING, origin=origin)
                )
                return done("Loaded {} into working memory", block, agent)
            case ContextSwap():
                if _other(params.archive_target, params.archive_label) or _other(
                    params.load_target, params.load_label
                ):
                    archived, loaded = await swap_in_steps(
                        self.store,
                        agent,
                        (params.archive_label, params.archive_target),
                        (params.load_label, params.load_target),
                        origin,
                    )
                    return ContextOutput(
                        message=f"Archived {params.archive_label!r} into "
                        f"{archived.address_for(agent)!r} and loaded "
                        f"{loaded.address_for(agent)!r} into working memory.",
                        blocks=[block_info(archived, agent), block_info(loaded, agent)],
                    )
                await self._expect(agent, params.archive_label, in_context=True)
                await self._expect(agent, params.load_label, in_context=False)
                archived, loaded = await checked(
                    self.store.swap_blocks(
                        agent, params.archive_label, params.load_label, origin=origin
                    )
                )
                return ContextOutput(
                    message=(
                        f"Archived {archived.address_for(agent)!r} and loaded "
                        f"{loaded.address_for(agent)!r} into working memory."
                    ),
                    blocks=[block_info(archived, agent), block_info(loaded, agent)],
                )
            case ContextList():
                blocks = await checked(self.store.list_blocks(agent, _IN_CONTEXT))
                infos = [block_info(b, agent, with_value=True) for b in blocks]
                count = len(infos)
                message = (
                    f"{count} block{'s' if count != 1 else ''} in context."
                    if infos
                    else "No core or working blocks yet; make one with the create operation."
                )
                return ContextOutput(message=message, blocks=infos)


def _other(target: str | None, label: str) -> TypeGuard[str]:
    """Whether ``target`` names another label than ``label`` (a copy, not a move)."""
    return target is not None and target != label
