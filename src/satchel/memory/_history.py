"""A block's earlier versions, kept by the database itself.

Each backend keeps, in a history table written by a trigger in the same transaction as
the block's update, the block as it was before every write that moved its version
(text, description, permission, limit, kind): the last :data:`HISTORY_VERSIONS`
superseded versions of each block. The current version is the block itself. A deleted
block's history is deleted with it (deleting a memory forgets it), and so is the
history of a block an import replaced.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict

from satchel.memory._models import BlockKind, Permission

__all__ = ["HISTORY_VERSIONS", "BlockVersion", "HistoryBackend"]

HISTORY_VERSIONS = 50
"""How many superseded versions of each block the history keeps (the oldest go first)."""


class BlockVersion(BaseModel):
    """One version of a block, as it was.

    Attributes:
        block_id: The block's id.
        agent: Its owner.
        label: Its label.
        version: The version number.
        value: Its text at that version.
        description: Its description then.
        permission: Its permission then.
        char_limit: Its limit then.
        kind: Its kind then.
        changed_at: When that version was written.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    block_id: str
    agent: str
    label: str
    version: int
    value: str
    description: str
    permission: Permission
    char_limit: int | None
    kind: BlockKind
    changed_at: datetime

    @classmethod
    def from_row(
        cls,
        row: Sequence[Any],
        *,
        changed_at: datetime,
        text: Callable[[str], str] = str,
    ) -> BlockVersion:
        """A version from a history row: ``block_id, agent, label, version, value,
        description, permission, char_limit, kind`` (the backend converts its own
        timestamp, and ``text`` decodes its stored text)."""
        return cls(
            block_id=row[0],
            agent=row[1],
            label=row[2],
            version=row[3],
            value=text(row[4]),
            description=text(row[5]),
            permission=Permission(row[6]),
            char_limit=row[7],
            kind=BlockKind(row[8]),
            changed_at=changed_at,
        )


@runtime_checkable
class HistoryBackend(Protocol):
    """A backend that keeps block history (both of satchel's do; it is optional for
    others, whose stores then show none)."""

    async def block_history(self, block_id: str) -> list[BlockVersion]:
        """The kept earlier versions of the block ``block_id``, oldest first."""
        ...
