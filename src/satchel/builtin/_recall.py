"""The ``recall`` tool: the agent's archival memory, stored out of context and found
again through ``search``."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Annotated, ClassVar, Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field

from satchel._counts import counted
from satchel._errors import AlreadyExistsError, NotFoundError, PermissionDeniedError, ToolRetry
from satchel.builtin._lookup import find_readable, persons_by_name
from satchel.builtin._seed_forms import OPERATION_ALIASES, operation_names
from satchel.builtin._views import BlockInfo, BlockWritten, block_info, block_written, checked
from satchel.memory import Block, BlockKind, MemoryStore, Permission, RequestOrigin
from satchel.tools import Tool, ToolAnnotations, ToolContext

__all__ = [
    "RecallAppend",
    "RecallDelete",
    "RecallInsert",
    "RecallOperation",
    "RecallOutput",
    "RecallRead",
    "RecallTool",
]

_MAX_LABEL_TRIES = 100


class _Op(BaseModel):
    model_config = ConfigDict(extra="forbid")


# Pattern's recall (seed 000) calls the text ``value``; only ``content`` is in the schema.
_TEXT = AliasChoices("content", "value")


class RecallInsert(_Op):
    """Store a new entry; returns its label."""

    operation: Literal["insert"]
    content: str = Field(
        min_length=1, validation_alias=_TEXT, description="The text to store or add."
    )
    label: str | None = Field(
        default=None,
        min_length=1,
        max_length=128,
        description="Its label (default archival_<timestamp>).",
    )
    tags: list[str] | None = Field(default=None, description="Tags for search filters.")


_LabelOrId = Annotated[
    str,
    Field(
        min_length=1,
        max_length=300,
        validation_alias=AliasChoices("label", "id"),
        description="The entry's label as search shows it, or its id.",
    ),
]
"""An entry named by its label or its id (see :mod:`satchel.builtin._lookup`)."""


class RecallAppend(_Op):
    """Add a line at the end of an entry."""

    operation: Literal["append"]
    label: _LabelOrId
    content: str = Field(
        min_length=1, validation_alias=_TEXT, description="The text to store or add."
    )


class RecallRead(_Op):
    """Return an entry's full text."""

    operation: Literal["read"]
    label: _LabelOrId


class RecallDelete(_Op):
    """Delete an entry for good."""

    operation: Literal["delete"]
    label: _LabelOrId


RecallOperation = Annotated[
    RecallInsert | RecallAppend | RecallRead | RecallDelete,
    Field(discriminator="operation"),
    operation_names(OPERATION_ALIASES["recall"]),
]
"""The input of ``recall``: one operation, chosen by ``operation``."""


class RecallOutput(BaseModel):
    """What a ``recall`` operation did."""

    message: str = Field(description="One sentence saying what happened.")
    entry: BlockInfo | BlockWritten = Field(
        description="The entry: in full for read and delete, its size and version after "
        "insert and append."
    )


class RecallTool(Tool[RecallOperation, RecallOutput]):
    """The ``recall`` built-in tool: archival entries (blocks of kind ``archival``) of
    ``ctx.agent`` in a :class:`~satchel.memory.MemoryStore`.

    Args:
        store: The memory store.
        permission: The permission of the entries ``insert`` creates. The default,
            ``admin``, lets the agent delete what it stored; ``read_write`` keeps
            entries until a human deletes them (``delete`` is then denied).
        global_agent: The person's own agent when agents are projects (``satchel serve
            --agent auto``): ``search`` also shows the person's archival entries, as
            ``person/label``, and ``read`` opens them (read-only; never another
            project's). See :class:`~satchel.builtin.SearchTool`.

    ``read``, ``append`` and ``delete`` take a label or an entry's id (the ``id`` of a
    search hit; ``id`` is accepted as the field name too). A label is tried first, then
    an id, so a label equal to some id still names the labelled block; ``read`` looks
    in the agent's memory and then in the person's archive, the writes in the agent's
    memory only. Nothing opens by id that would not open by label.
    """

    name = "recall"
    description = (
        "Your archival memory: long-term storage outside your context. A search result's "
        "label or id names an entry here; context load brings one into context."
    )
    summary = "Store, read, extend and delete archival memory entries."
    usage_rule = (
        "Store facts worth keeping but not needed every turn with recall insert; find them "
        "again with search."
    )
    category = "memory"
    actions = ("read", "write", "delete")
    memory_gated = True
    operation_annotations: ClassVar[Mapping[str, ToolAnnotations]] = {
        "insert": ToolAnnotations(read_only=False, destructive=False, idempotent=False),
        "append": ToolAnnotations(read_only=False, destructive=False, idempotent=False),
        "read": ToolAnnotations(read_only=True, destructive=False, idempotent=True),
        "delete": ToolAnnotations(read_only=False, destructive=True, idempotent=True),
    }

    def __init__(
        self,
        store: MemoryStore,
        *,
        permission: Permission = Permission.ADMIN,
        global_agent: str | None = None,
    ) -> None:
        self.store = store
        self.permission = Permission(permission)
        self.global_agent = global_agent

    async def execute(
        self, params: RecallInsert | RecallAppend | RecallRead | RecallDelete, ctx: ToolContext
    ) -> RecallOutput:
        """Run one operation for ``ctx.agent``."""
        agent = ctx.agent
        origin = RequestOrigin.of(ctx)
        match params:
            case RecallInsert():
                block = await self._insert(agent, params)
                return RecallOutput(
                    message=f"Stored {counted(block.chars, 'character')} as {block.label!r}.",
                    entry=block_written(block, agent),
                )
            case RecallAppend():
                entry = await self._archival(agent, params.label, "append to")
                block = await checked(
                    self.store.append_to_block(
                        agent, entry.address_for(agent), params.content, origin=origin
                    )
                )
                return RecallOutput(
                    message=f"Appended {counted(len(params.content), 'character')} to "
                    f"{block.address_for(agent)!r} (now {block.chars}, version "
                    f"{block.version}).",
                    entry=block_written(block, agent),
                )
            case RecallRead():
                block = await find_readable(self.store, agent, params.label, self.global_agent)
                entry = block_info(block, agent, with_value=True)
                if block.agent != agent and agent not in block.shares:  # the person's
                    entry = entry.model_copy(update={"permission": Permission.READ_ONLY})
                return RecallOutput(
                    message=f"{block.address_for(agent)!r} ({block.kind.value} memory, "
                    f"{block.chars} characters).",
                    entry=entry,
                )
            case RecallDelete():
                entry = await self._archival(agent, params.label, "delete")
                block = await checked(
                    self.store.delete_block(agent, entry.address_for(agent), origin=origin)
                )
                return RecallOutput(
                    message=f"Deleted {block.address_for(agent)!r} ({block.chars} characters).",
                    entry=block_info(block, agent, with_value=True),
                )

    async def _insert(self, agent: str, params: RecallInsert) -> Block:
        tags = params.tags or ()
        if params.label is not None:
            try:
                return await checked(self._create(agent, params.label, params.content, tags))
            except AlreadyExistsError as exc:
                raise ToolRetry(
                    f"A block labelled {params.label!r} exists already. Choose another label, "
                    "leave the label out, or add to it with the append operation.",
                    details={"label": params.label},
                ) from exc
        stem = "archival_" + datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
        for attempt in range(1, _MAX_LABEL_TRIES + 1):
            label = stem if attempt == 1 else f"{stem}_{attempt}"
            try:
                return await checked(self._create(agent, label, params.content, tags))
            except AlreadyExistsError:
                continue
        raise ToolRetry("Too many entries were stored this second; give the entry a label.")

    async def _create(
        self, agent: str, label: str, content: str, tags: list[str] | tuple[()]
    ) -> Block:
        return await self.store.create_block(
            agent,
            label,
            content,
            kind=BlockKind.ARCHIVAL,
            permission=self.permission,
            tags=tags,
        )

    async def _archival(self, agent: str, label: str, verb: str) -> Block:
        """The archival entry ``label`` (a label, else an id) names among the agent's
        own and shared blocks: the ones recall may write. The person's entries, which
        a project reads, are refused with a hint."""
        try:
            block = await find_readable(self.store, agent, label, None)
        except NotFoundError:
            theirs = await persons_by_name(self.store, agent, label, self.global_agent)
            if theirs is None:
                raise
            raise PermissionDeniedError(
                f"{theirs.address_for(agent)!r} is {theirs.agent}'s archival entry: from a "
                f"project you can read it (recall read) or load a copy (context load), not "
                f"{verb} it.",
                details={"label": label, "owner": theirs.agent, "operation": verb},
            ) from None
        if block.kind is not BlockKind.ARCHIVAL:
            address = block.address_for(agent)
            raise ToolRetry(
                f"Block {address!r} is in {block.kind.value} memory, not archival memory; "
                f"recall cannot {verb} it. Use the context tool for blocks in your context.",
                details={"label": address, "kind": block.kind.value},
            )
        return block
