"""The records of satchel's memory: blocks, messages, search filters and hits.

Everything here is plain data (frozen Pydantic models and string enums), shared by
every backend. Archival entries are blocks of kind :attr:`BlockKind.ARCHIVAL`, so moving
a block in or out of context (``archive``, ``load``, ``swap``) only changes its kind.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

__all__ = [
    "Block",
    "BlockKind",
    "Domain",
    "Message",
    "Permission",
    "Role",
    "SearchFilters",
    "SearchHit",
    "SearchMode",
    "utc_now",
    "validate_agent",
    "validate_label",
]

Role = Literal["user", "assistant", "system", "tool"]
"""Who said a conversation message."""

SearchMode = Literal["hybrid", "bm25", "vector"]
"""Which retrievers :meth:`~satchel.memory.MemoryStore.search` uses: both fused, BM25
only, or the vector index only."""

_NAME_RE = re.compile(r"^[^/\x00-\x1f\x7f]{1,128}$")


def utc_now() -> datetime:
    """The current time, timezone-aware in UTC."""
    return datetime.now(UTC)


def validate_label(label: str) -> str:
    """Check a block label and return it.

    A label is 1 to 128 characters with no ``/`` (reserved for the ``owner/label`` form
    that addresses a shared block), no control character, and no leading or trailing
    whitespace.

    Raises:
        ValueError: The label breaks one of those rules.
    """
    if not _NAME_RE.match(label) or label != label.strip():
        raise ValueError(
            f"invalid label {label[:140]!r}: use 1-128 characters with no '/', no control "
            "characters and no leading or trailing spaces"
        )
    return label


def validate_agent(agent: str) -> str:
    """Check an agent name and return it (same rules as :func:`validate_label`).

    Raises:
        ValueError: The name breaks a rule.
    """
    if not _NAME_RE.match(agent) or agent != agent.strip():
        raise ValueError(
            f"invalid agent name {agent[:140]!r}: use 1-128 characters with no '/', no "
            "control characters and no leading or trailing spaces"
        )
    return agent


class BlockKind(StrEnum):
    """Where a block lives relative to the agent's context window."""

    CORE = "core"
    """Always rendered into the agent's context."""
    WORKING = "working"
    """Loaded into context until archived."""
    ARCHIVAL = "archival"
    """Stored out of context; found through search and read by label."""


_PERMISSION_ORDER = ("read_only", "partner", "human", "append", "read_write", "admin")


class Permission(StrEnum):
    """How much an agent may change a block, ordered from least to most.

    ``read_only < partner < human < append < read_write < admin``; the comparison
    operators follow that order. What each level allows is the table in
    :mod:`satchel.memory._permissions`.
    """

    READ_ONLY = "read_only"
    """Read only; every write is denied."""
    PARTNER = "partner"
    """Writes need the consent of the partner (a human, through the consent handler)."""
    HUMAN = "human"
    """Writes need a human's consent."""
    APPEND = "append"
    """May append; may not overwrite."""
    READ_WRITE = "read_write"
    """May append and overwrite (the default)."""
    ADMIN = "admin"
    """May also delete."""

    @property
    def rank(self) -> int:
        """The position of this level in the order, 0 for ``read_only``."""
        return _PERMISSION_ORDER.index(self.value)

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, Permission):
            return NotImplemented
        return self.rank < other.rank

    def __le__(self, other: object) -> bool:
        if not isinstance(other, Permission):
            return NotImplemented
        return self.rank <= other.rank

    def __gt__(self, other: object) -> bool:
        if not isinstance(other, Permission):
            return NotImplemented
        return self.rank > other.rank

    def __ge__(self, other: object) -> bool:
        if not isinstance(other, Permission):
            return NotImplemented
        return self.rank >= other.rank


class Domain(StrEnum):
    """What :meth:`~satchel.memory.MemoryStore.search` looks through."""

    ARCHIVAL_MEMORY = "archival_memory"
    """Blocks of kind ``archival`` the agent owns or that are shared with it."""
    CONVERSATIONS = "conversations"
    """The agent's own conversation messages."""
    ALL = "all"
    """Both."""


class _Record(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Block(_Record):
    """A labelled piece of an agent's memory.

    A block is owned by one agent (``agent``) and unique by label for that agent. It may
    be shared with other agents, each at its own permission (``shares``); a recipient
    addresses it by its bare label, or by ``owner/label`` when the recipient owns a
    block with the same label or two owners shared the same label.

    Attributes:
        id: Stable identifier, unique across the store.
        agent: The owner.
        label: Name of the block, unique per owner.
        value: The text.
        description: What the block is for (shown to the model beside the value).
        kind: core, working or archival.
        permission: What the owner may do with it (see :class:`Permission`).
        char_limit: Maximum length of ``value`` in characters, or ``None`` for no limit.
        pinned: Pinned blocks are meant to stay in context (a hint to context builders).
        version: Starts at 1; every write adds one. Used for optimistic updates.
        created_at: When the block was created (UTC).
        updated_at: When it was last written (UTC).
        tags: Free-form tags, used by search filters.
        metadata: Free-form JSON-compatible metadata.
        shares: Agents the block is shared with, and the permission each has.
    """

    id: str
    agent: str
    label: str
    value: str
    description: str = ""
    kind: BlockKind = BlockKind.CORE
    permission: Permission = Permission.READ_WRITE
    char_limit: int | None = None
    pinned: bool = False
    version: int = 1
    created_at: datetime
    updated_at: datetime
    tags: tuple[str, ...] = ()
    metadata: Mapping[str, Any] = Field(default_factory=dict[str, Any])
    shares: Mapping[str, Permission] = Field(default_factory=dict[str, Permission])

    @property
    def chars(self) -> int:
        """Length of the value in characters."""
        return len(self.value)

    def address_for(self, agent: str) -> str:
        """How ``agent`` names this block: the bare label for the owner, ``owner/label``
        for anyone else (the bare label also works for a recipient when unambiguous)."""
        return self.label if agent == self.agent else f"{self.agent}/{self.label}"


class Message(_Record):
    """One turn of a conversation, kept in the agent's conversation memory.

    Attributes:
        id: Stable identifier.
        agent: The agent whose memory holds the message.
        conversation_id: Groups messages into conversations.
        role: user, assistant, system or tool.
        content: The text.
        created_at: When it was said (UTC).
        tags: Free-form tags, used by search filters.
        metadata: Free-form JSON-compatible metadata.
    """

    id: str
    agent: str
    conversation_id: str = "default"
    role: Role
    content: str
    created_at: datetime
    tags: tuple[str, ...] = ()
    metadata: Mapping[str, Any] = Field(default_factory=dict[str, Any])


class SearchFilters(_Record):
    """Filters for :meth:`~satchel.memory.MemoryStore.search`; every field narrows.

    Attributes:
        role: Only messages said by this role. Blocks have no role, so setting it
            leaves only conversation messages.
        start_time: Only entries created at or after this time (inclusive).
        end_time: Only entries created at or before this time (inclusive).
        tags: Only entries carrying these tags; see ``tags_match``.
        tags_match: ``"any"`` (the default) keeps an entry with at least one of
            ``tags``; ``"all"`` keeps an entry with every one of them.
        labels: Only blocks with one of these labels (``owner/label`` names a shared
            block). Messages have no label, so setting it leaves only blocks.
        conversation_id: Only messages of this conversation (leaves only messages).
    """

    role: Role | None = None
    start_time: datetime | None = None
    end_time: datetime | None = None
    tags: tuple[str, ...] | None = None
    tags_match: Literal["any", "all"] = "any"
    labels: tuple[str, ...] | None = None
    conversation_id: str | None = None

    @model_validator(mode="after")
    def _check_times(self) -> SearchFilters:
        for value in (self.start_time, self.end_time):
            if value is not None and value.tzinfo is None:
                raise ValueError("start_time and end_time must be timezone-aware")
        if self.start_time and self.end_time and self.start_time > self.end_time:
            raise ValueError("start_time is after end_time")
        return self


class SearchHit(_Record):
    """One result of :meth:`~satchel.memory.MemoryStore.search`, with the full text.

    Attributes:
        domain: ``archival_memory`` for a block, ``conversations`` for a message.
        id: The block's or message's id.
        label: How the searching agent addresses the block (``owner/label`` if it is
            shared from another agent); ``None`` for a message.
        owner: The agent that owns the entry.
        text: The full text (a block's value or a message's content).
        score: The fused score; higher is better. Only comparable within one search.
        created_at: When the entry was created.
        role: The message's role; ``None`` for a block.
        conversation_id: The message's conversation; ``None`` for a block.
        tags: The entry's tags.
        metadata: The entry's metadata.
        bm25_rank: 1-based rank among BM25 candidates, ``None`` if not a candidate.
        vector_rank: 1-based rank among vector candidates, ``None`` if not a candidate.
        bm25_score: The BM25 relevance (higher is better), if a candidate.
        vector_score: The cosine similarity, if a candidate.
    """

    domain: Literal["archival_memory", "conversations"]
    id: str
    label: str | None = None
    owner: str
    text: str
    score: float
    created_at: datetime
    role: Role | None = None
    conversation_id: str | None = None
    tags: tuple[str, ...] = ()
    metadata: Mapping[str, Any] = Field(default_factory=dict[str, Any])
    bm25_rank: int | None = None
    vector_rank: int | None = None
    bm25_score: float | None = None
    vector_score: float | None = None
