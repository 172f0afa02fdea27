"""The database steps a memory backend supplies, and the records passed to them.

:class:`~satchel.memory.GatedStore` does everything a store does that is not a database
step (argument checks, the permission gate and consent, char-limit mode, embedding,
search planning, export and import paging) and calls a :class:`MemoryBackend` for the
rest. A backend (SQLite, PostgreSQL, or a dict in the tests) implements each step as
one read, one write transaction or one statement, and nothing else: it never sees a
consent handler or the permission table.

What a write step must still do is keep the write atomic with the facts the gate
relied on: the write steps on a block get the ``level`` the gate allowed and re-check
it as part of the write, raising :class:`~satchel.memory._block_rules.LevelChanged`
when it moved (the gate then runs again), and they apply the shared rules of
:mod:`satchel.memory._block_rules` (character limit in the mode they are given,
expected version, replace-once) to the row as it is when written.
:meth:`MemoryBackend.configure`, :meth:`MemoryBackend.operator_write` and
:meth:`MemoryBackend.operator_delete`, an operator's writes that pass no gate, re-check
ownership (and the expected version) instead.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Collection, Mapping, Sequence
from datetime import datetime
from typing import Any, Literal, Protocol, TypedDict

import numpy as np
import numpy.typing as npt

from satchel.memory._merge import MergeSteps
from satchel.memory._models import (
    AgentSummary,
    Block,
    BlockKind,
    ImportReport,
    Message,
    OnConflict,
    Permission,
    Role,
    SearchHit,
    Unset,
)
from satchel.memory._operator import BlockChange
from satchel.memory._search import SearchRequest

__all__ = ["MemoryBackend", "NewBlock", "NewMessage", "RestoreBatch", "TextDomain"]

F32 = npt.NDArray[np.float32]

RestoreBatch = tuple[Sequence[Block | Message], Sequence[F32 | None]]
"""Checked records and their vectors (``None`` for no vector), written together."""

TextDomain = Literal["blocks", "messages"]
"""The two kinds of embedded text: block values and message contents."""


class NewBlock(TypedDict):
    """A checked block to create, as the keyword arguments of a backend's insert."""

    agent: str
    label: str
    value: str
    description: str
    kind: BlockKind
    permission: Permission
    char_limit: int | None
    pinned: bool
    tags: tuple[str, ...]
    metadata: Mapping[str, Any] | None
    hard_limit: bool


class NewMessage(TypedDict):
    """A checked message to add, as the keyword arguments of a backend's insert."""

    agent: str
    role: Role
    content: str
    conversation_id: str
    created_at: datetime
    tags: tuple[str, ...]
    metadata: Mapping[str, Any] | None


class MemoryBackend(Protocol):
    """The database steps of a memory store (see the module docstring).

    Wrap one in :class:`~satchel.memory.GatedStore` to get a
    :class:`~satchel.memory.MemoryStore`."""

    @property
    def vectors_ok(self) -> bool:
        """Whether the stored vectors are the model's given to :meth:`use_model` (so
        vector search and storing vectors are on)."""
        ...

    def use_model(self, model: str | None, dim: int | None) -> None:
        """Called once, first, with the embedder's ``name:dim`` (``None``: no
        vectors). The backend claims an unclaimed database for it when it opens, or
        finds another model's vectors there and keeps :attr:`vectors_ok` false."""
        ...

    async def close(self) -> None:
        """Close every connection. Idempotent."""
        ...

    async def resolve(self, agent: str, labels: Sequence[str]) -> list[tuple[int, Block]]:
        """The primary key and block ``agent`` means by each label, read together.

        Raises:
            NotFoundError: A label names no block visible to ``agent``, or is
                ambiguous.
        """
        ...

    async def resolve_id(self, agent: str, block_id: str) -> Block:
        """The block with id ``block_id``, as ``agent`` sees it, if ``agent`` owns it or
        it is shared with it.

        Raises:
            NotFoundError: No block visible to ``agent`` has that id.
        """
        ...

    async def list_visible(self, agent: str, kinds: Collection[BlockKind] | None) -> list[Block]:
        """Every block ``agent`` owns or that is shared with it."""
        ...

    async def list_visible_page(
        self, agent: str, kinds: Collection[BlockKind] | None, offset: int, limit: int
    ) -> tuple[list[Block], int]:
        """The blocks at ``offset`` to ``offset + limit`` of :meth:`list_visible`'s
        listing (ordered by kind, owner, label) and the listing's length, in one read."""
        ...

    async def insert_block(self, new: NewBlock, vector: F32 | None) -> Block:
        """Create the block, with its vector when given, in one write."""
        ...

    async def set_text(
        self,
        agent: str,
        pk: int,
        level: Permission,
        value: str,
        *,
        expected_version: int | None,
        description: str | None,
        vector: F32 | None,
        hard_limit: bool,
    ) -> Block:
        """Overwrite the value (and maybe the description), with its new vector, in one
        write that re-checks ``level``."""
        ...

    async def append(
        self,
        agent: str,
        pk: int,
        level: Permission,
        text: str,
        separator: str,
        *,
        hard_limit: bool,
    ) -> Block:
        """Append ``text`` in one write that re-checks ``level``."""
        ...

    async def replace(
        self,
        agent: str,
        pk: int,
        level: Permission,
        old: str,
        new: str,
        *,
        expected_version: int | None,
        hard_limit: bool,
    ) -> Block:
        """Replace the single occurrence of ``old`` in one write that re-checks
        ``level``."""
        ...

    async def delete(
        self, agent: str, pk: int, level: Permission, *, expected_version: int | None
    ) -> Block:
        """Delete the block in one write that re-checks ``level``; returns it as it
        was."""
        ...

    async def set_kind(
        self,
        agent: str,
        pk: int,
        level: Permission,
        kind: BlockKind,
        *,
        expected_version: int | None,
    ) -> Block:
        """Move the block to ``kind`` in one write that re-checks ``level``."""
        ...

    async def swap(
        self,
        agent: str,
        archive: tuple[int, Permission],
        load: tuple[int, Permission],
    ) -> tuple[Block, Block]:
        """Archive one ``(pk, level)`` and load the other in one write, both or
        neither."""
        ...

    async def set_share(
        self,
        agent: str,
        pk: int,
        level: Permission,
        recipient: str,
        permission: Permission | None,
    ) -> Block:
        """Share the block with ``recipient`` at ``permission`` (unshare with
        ``None``) in one write that re-checks ``level``."""
        ...

    async def configure(
        self,
        agent: str,
        pk: int,
        *,
        permission: Permission | None,
        char_limit: int | Unset | None,
        description: str | None,
    ) -> Block:
        """Apply :func:`~satchel.memory._block_rules.configured` to the block in one
        write that re-checks ``agent`` owns it; bump the version only when something
        changed. Text, tags, kind and vector stay as they are."""
        ...

    async def operator_write(
        self,
        agent: str,
        pk: int,
        change: BlockChange,
        *,
        expected_version: int,
        vector: F32 | None,
    ) -> Block:
        """Apply an operator's checked ``change`` to the block in one write that
        re-checks ``agent`` owns it and that it is at ``expected_version``, through
        :func:`~satchel.memory._operator.changed` on the row as it is; bump the version
        once, only when something changed. A new text gets ``vector`` (``None``: no
        vector) in the same write."""
        ...

    async def operator_delete(self, agent: str, pk: int, *, expected_version: int) -> Block:
        """Delete the block in one write that re-checks ``agent`` owns it and that it
        is at ``expected_version``; returns it as it was."""
        ...

    async def merge_agents(self, steps: MergeSteps) -> int:
        """Merge ``steps.source`` into ``steps.target`` in one write (see
        :mod:`satchel.memory._merge`): check every block in ``steps.read`` is at the
        version read and ``source`` owns no other, write the joined blocks (version
        bumped) and delete their source blocks, move the rest of ``source``'s blocks
        and its messages to ``target``, and apply
        :func:`~satchel.memory._merge.moved_shares` to every share with ``source`` (and
        with ``target`` on its own blocks). Returns how many messages moved.

        Raises:
            VersionConflictError: A block changed since it was read (nothing written).
        """
        ...

    async def initialise_agent(
        self, agent: str, template: str, blocks: Sequence[tuple[NewBlock, F32 | None]]
    ) -> list[Block] | None:
        """Record ``agent`` as set up from ``template`` and create each block whose
        label it does not own yet, in one write; do nothing when it was set up before.

        Returns the blocks created, or ``None`` when the agent was set up already.
        Safe against another process doing the same at once: exactly one of them
        creates the blocks.
        """
        ...

    async def is_set_up(self, agent: str) -> bool:
        """Whether ``agent`` was set up (a cheap read before embedding a template)."""
        ...

    async def agent_summaries(self, agent: str | None) -> list[AgentSummary]:
        """Every agent that was set up or owns a block or a message (or only
        ``agent``), sorted by name."""
        ...

    async def insert_message(self, new: NewMessage, vector: F32 | None) -> Message:
        """Add the message, with its vector when given, in one write."""
        ...

    async def list_messages(
        self,
        agent: str,
        *,
        conversation_id: str | None,
        limit: int,
        before: datetime | None,
    ) -> list[Message]:
        """The latest ``limit`` messages, oldest first."""
        ...

    async def search(self, request: SearchRequest) -> list[SearchHit]:
        """Run a prepared search in one read."""
        ...

    async def block_text(self, pk: int) -> str:
        """The block's current value (``""`` if it is gone)."""
        ...

    async def store_vectors(
        self, domain: TextDomain, items: Sequence[tuple[int, str]], vectors: F32
    ) -> None:
        """Store the vector of each ``(pk, text)`` whose row still holds exactly
        ``text`` (a newer write wins over a late embedding)."""
        ...

    async def count_texts(self) -> int:
        """How many non-empty blocks and messages there are."""
        ...

    async def adopt_model(self) -> None:
        """Drop every stored vector and record the model given to :meth:`use_model`
        as the database's; :attr:`vectors_ok` is true afterwards."""
        ...

    async def texts_to_embed(
        self, domain: TextDomain, after_pk: int, limit: int
    ) -> list[tuple[int, str]]:
        """The next ``limit`` non-empty ``(pk, text)`` pairs of ``domain`` with ``pk >
        after_pk``."""
        ...

    async def agents(self) -> list[str]:
        """Every agent that owns a block or a message, sorted."""
        ...

    async def block_page(
        self, agent: str | None, after: Any, limit: int
    ) -> tuple[list[Block], Any]:
        """Up to ``limit`` blocks after the key ``after``, and the next key (``None`` at
        the end)."""
        ...

    async def message_page(
        self, agent: str | None, after: Any, limit: int
    ) -> tuple[list[Message], Any]:
        """Up to ``limit`` messages after the key ``after``, and the next key."""
        ...

    async def restore(
        self, batches: AsyncIterator[RestoreBatch], on_conflict: OnConflict
    ) -> ImportReport:
        """Write every batch ``batches`` yields, in one transaction: all or nothing.
        The iterator checks and embeds the next batch when asked, so only one batch is
        held at a time."""
        ...
