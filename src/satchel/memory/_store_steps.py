"""The database steps a memory backend supplies, and the records passed to them.

:class:`~satchel.memory._store_base.StoreBase` does everything a store does that is not
a database step; :class:`StoreSteps` declares those steps. A backend (SQLite,
PostgreSQL) implements each as one read, one write transaction or one statement. The
write steps on a block get the level the permission gate allowed and re-check it as
part of the write (raising :class:`~satchel.memory._block_rules.LevelChanged` when it
moved), except :meth:`StoreSteps._configure`, an operator's write that passes no gate
and re-checks ownership instead; the export and import steps come from
:class:`~satchel.memory._transfer.RecordTransfer`.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Collection, Mapping, Sequence
from datetime import datetime
from typing import Any, Literal, TypedDict

import numpy as np
import numpy.typing as npt

from satchel.memory._models import (
    AgentSummary,
    Block,
    BlockKind,
    Message,
    Permission,
    Role,
    SearchHit,
    Unset,
)
from satchel.memory._search import SearchRequest
from satchel.memory._transfer import RecordTransfer

__all__ = ["NewBlock", "NewMessage", "StoreSteps", "TextDomain"]

F32 = npt.NDArray[np.float32]

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


class StoreSteps(RecordTransfer):
    """The abstract database steps of a memory store (see the module docstring)."""

    @abstractmethod
    async def _resolve(self, agent: str, labels: Sequence[str]) -> list[tuple[int, Block]]:
        """The primary key and block ``agent`` means by each label, read together.

        Raises:
            NotFoundError: A label names no block visible to ``agent``, or is
                ambiguous.
        """

    @abstractmethod
    async def _list_visible(self, agent: str, kinds: Collection[BlockKind] | None) -> list[Block]:
        """Every block ``agent`` owns or that is shared with it."""

    @abstractmethod
    async def _insert_block(self, new: NewBlock, vector: F32 | None) -> Block:
        """Create the block, with its vector when given, in one write."""

    @abstractmethod
    async def _set_text(
        self,
        agent: str,
        pk: int,
        level: Permission,
        value: str,
        *,
        expected_version: int | None,
        description: str | None,
        vector: F32 | None,
    ) -> Block:
        """Overwrite the value (and maybe the description), with its new vector, in one
        write that re-checks ``level``."""

    @abstractmethod
    async def _append(
        self, agent: str, pk: int, level: Permission, text: str, separator: str
    ) -> Block:
        """Append ``text`` in one write that re-checks ``level``."""

    @abstractmethod
    async def _replace(
        self,
        agent: str,
        pk: int,
        level: Permission,
        old: str,
        new: str,
        *,
        expected_version: int | None,
    ) -> Block:
        """Replace the single occurrence of ``old`` in one write that re-checks
        ``level``."""

    @abstractmethod
    async def _delete(
        self, agent: str, pk: int, level: Permission, *, expected_version: int | None
    ) -> Block:
        """Delete the block in one write that re-checks ``level``; returns it as it
        was."""

    @abstractmethod
    async def _set_kind(
        self,
        agent: str,
        pk: int,
        level: Permission,
        kind: BlockKind,
        *,
        expected_version: int | None,
    ) -> Block:
        """Move the block to ``kind`` in one write that re-checks ``level``."""

    @abstractmethod
    async def _swap(
        self,
        agent: str,
        archive: tuple[int, Permission],
        load: tuple[int, Permission],
    ) -> tuple[Block, Block]:
        """Archive one ``(pk, level)`` and load the other in one write, both or
        neither."""

    @abstractmethod
    async def _set_share(
        self,
        agent: str,
        pk: int,
        level: Permission,
        recipient: str,
        permission: Permission | None,
    ) -> Block:
        """Share the block with ``recipient`` at ``permission`` (unshare with
        ``None``) in one write that re-checks ``level``."""

    @abstractmethod
    async def _configure(
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

    @abstractmethod
    async def _initialise_agent(
        self, agent: str, template: str, blocks: Sequence[tuple[NewBlock, F32 | None]]
    ) -> list[Block] | None:
        """Record ``agent`` as set up from ``template`` and create each block whose
        label it does not own yet, in one write; do nothing when it was set up before.

        Returns the blocks created, or ``None`` when the agent was set up already.
        Safe against another process doing the same at once: exactly one of them
        creates the blocks.
        """

    @abstractmethod
    async def _is_set_up(self, agent: str) -> bool:
        """Whether ``agent`` was set up (a cheap read before embedding a template)."""

    @abstractmethod
    async def _agent_summaries(self, agent: str | None) -> list[AgentSummary]:
        """Every agent that was set up or owns a block or a message (or only
        ``agent``), sorted by name."""

    @abstractmethod
    async def _insert_message(self, new: NewMessage, vector: F32 | None) -> Message:
        """Add the message, with its vector when given, in one write."""

    @abstractmethod
    async def _list_messages(
        self,
        agent: str,
        *,
        conversation_id: str | None,
        limit: int,
        before: datetime | None,
    ) -> list[Message]:
        """The latest ``limit`` messages, oldest first."""

    @abstractmethod
    async def _search(self, request: SearchRequest) -> list[SearchHit]:
        """Run a prepared search in one read."""

    @abstractmethod
    async def _block_text(self, pk: int) -> str:
        """The block's current value (``""`` if it is gone)."""

    @abstractmethod
    async def _store_vectors(
        self, domain: TextDomain, items: Sequence[tuple[int, str]], vectors: F32
    ) -> None:
        """Store the vector of each ``(pk, text)`` whose row still holds exactly
        ``text`` (a newer write wins over a late embedding)."""

    @abstractmethod
    async def _count_texts(self) -> int:
        """How many non-empty blocks and messages there are."""

    @abstractmethod
    async def _adopt_model(self) -> None:
        """Drop every stored vector and record the current embedder as the
        database's model."""

    @abstractmethod
    async def _texts_to_embed(
        self, domain: TextDomain, after_pk: int, limit: int
    ) -> list[tuple[int, str]]:
        """The next ``limit`` non-empty ``(pk, text)`` pairs of ``domain`` with ``pk >
        after_pk``."""
