"""The records of satchel's memory: blocks, messages, search filters and hits.

Everything here is plain data (frozen Pydantic models and string enums), shared by
every backend. Archival entries are blocks of kind :attr:`BlockKind.ARCHIVAL`, so moving
a block in or out of context (``archive``, ``load``, ``swap``) only changes its kind.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from enum import Enum, StrEnum
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from satchel._errors import InvalidInputError

__all__ = [
    "UNSET",
    "Block",
    "BlockKind",
    "Domain",
    "ImportReport",
    "Message",
    "OnConflict",
    "Permission",
    "Role",
    "SearchFilters",
    "SearchHit",
    "SearchMode",
    "TurnInProgress",
    "Unset",
    "check_id",
    "check_import_record",
    "check_restorable",
    "dump_json",
    "normalise_tags",
    "utc_now",
    "validate_agent",
    "validate_label",
]

Role = Literal["user", "assistant", "system", "tool"]
"""Who said a conversation message."""

SearchMode = Literal["hybrid", "bm25", "vector"]
"""Which retrievers :meth:`~satchel.memory.MemoryStore.search` uses: both fused, BM25
only, or the vector index only."""

OnConflict = Literal["error", "skip", "replace"]
"""What :meth:`~satchel.memory.MemoryStore.import_records` does with a record whose id,
or (for a block) whose owner and label, the store already holds: raise
:class:`~satchel.AlreadyExistsError`, keep the stored one, or replace it."""


class Unset(Enum):
    """Marks an argument as left out where ``None`` means something, as for the
    ``char_limit`` of :meth:`~satchel.memory.MemoryStore.configure_block` (``None``
    removes the limit, ``Unset.UNSET``, the default, keeps it)."""

    UNSET = "UNSET"
    """The one value: "not given, keep what is there"."""

    def __repr__(self) -> str:
        return "UNSET"


UNSET: Final = Unset.UNSET
"""Short for :attr:`Unset.UNSET` inside satchel."""

_NAME_RE = re.compile(
    r"^[^/\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]{1,128}$"
)
"""1 to 128 characters with no ``/``, no control character (C0, DEL, C1), no line or
paragraph separator and no bidirectional control (a U+202E in a label shows another
label than the one stored)."""


def utc_now() -> datetime:
    """The current time, timezone-aware in UTC."""
    return datetime.now(UTC)


def validate_label(label: str) -> str:
    """Check a block label and return it.

    A label is 1 to 128 characters with no ``/`` (reserved for the ``owner/label`` form
    that addresses a shared block), no control character, line separator or
    bidirectional control (U+2028, U+202E and their kin), and no leading or trailing
    whitespace.

    Raises:
        InvalidInputError: The label breaks one of those rules.
    """
    if not _NAME_RE.match(label) or label != label.strip():
        raise InvalidInputError(
            f"invalid label {label[:140]!r}: use 1-128 characters with no '/', no control "
            "characters, line separators or direction marks, and no leading or trailing "
            "spaces"
        )
    return label


def validate_agent(agent: str) -> str:
    """Check an agent name and return it (same rules as :func:`validate_label`).

    Raises:
        InvalidInputError: The name breaks a rule.
    """
    if not _NAME_RE.match(agent) or agent != agent.strip():
        raise InvalidInputError(
            f"invalid agent name {agent[:140]!r}: use 1-128 characters with no '/', no "
            "control characters, line separators or direction marks, and no leading or "
            "trailing spaces"
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
    """Both, and the agent's core and working blocks (each hit is the block's best
    matching line, in domain ``core_memory``)."""


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


class TurnInProgress(_Record):
    """The turn an agent is in the middle of, which its own search leaves out.

    Attributes:
        conversation_id: The turn's conversation.
        started_at: When the turn's first message was recorded; that conversation's
            messages from this time on are the turn (its user message, tool calls and
            tool results).
    """

    conversation_id: str
    started_at: datetime

    @model_validator(mode="after")
    def _check_time(self) -> TurnInProgress:
        if self.started_at.tzinfo is None:
            raise InvalidInputError("started_at must be timezone-aware")
        return self


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
        tool_traffic: Also messages that are tool traffic: tool results (role
            ``tool``) and assistant messages that only called tools (metadata
            ``content_from_calls``). Left out by default; ``role="tool"`` implies it.
        exclude_turn: Leave out the messages of this turn in progress.
    """

    role: Role | None = None
    start_time: datetime | None = None
    end_time: datetime | None = None
    tags: tuple[str, ...] | None = None
    tags_match: Literal["any", "all"] = "any"
    labels: tuple[str, ...] | None = None
    conversation_id: str | None = None
    tool_traffic: bool = False
    exclude_turn: TurnInProgress | None = None

    @property
    def hides_tool_traffic(self) -> bool:
        """Whether tool results and call-only assistant messages are left out."""
        return not self.tool_traffic and self.role != "tool"

    @model_validator(mode="after")
    def _check_times(self) -> SearchFilters:
        for value in (self.start_time, self.end_time):
            if value is not None and value.tzinfo is None:
                raise InvalidInputError("start_time and end_time must be timezone-aware")
        if self.start_time and self.end_time and self.start_time > self.end_time:
            raise InvalidInputError("start_time is after end_time")
        return self


class SearchHit(_Record):
    """One result of :meth:`~satchel.memory.MemoryStore.search`, with the full text.

    Attributes:
        domain: ``archival_memory`` for an archival block, ``core_memory`` for a core
            or working block, ``conversations`` for a message.
        id: The block's or message's id.
        label: How the searching agent addresses the block (``owner/label`` if it is
            shared from another agent); ``None`` for a message.
        owner: The agent that owns the entry.
        text: The full text (an archival block's value or a message's content); for a
            core or working block, the line of its value that best matches the query
            (the block is in the agent's context already).
        kind: The block's kind; ``None`` for a message.
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
        coverage: The share of the query's IDF mass the entry's words cover (0 to
            1), when it was computed (hybrid search with BM25 candidates).
    """

    domain: Literal["archival_memory", "core_memory", "conversations"]
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
    kind: BlockKind | None = None
    coverage: float | None = None


class ImportReport(_Record):
    """What :meth:`~satchel.memory.MemoryStore.import_records` did.

    Attributes:
        blocks: Blocks written (new or replacing a stored one).
        messages: Messages written (new or replacing a stored one).
        skipped: Records left out because the store held them already
            (``on_conflict="skip"``).
    """

    blocks: int = 0
    messages: int = 0
    skipped: int = 0


class AgentSummary(_Record):
    """One agent of a store, as :meth:`~satchel.memory.MemoryStore.describe_agents`
    lists it.

    Attributes:
        name: The agent.
        blocks: Core and working blocks it owns.
        archival: Archival entries (archival blocks) it owns.
        messages: Conversation messages it owns.
        created_at: When the agent was set up, or its first record was written.
        last_active: When it last wrote a block or a message (or was set up).
        initialised: Whether its starting blocks were created (see
            :meth:`~satchel.memory.MemoryStore.ensure_agent`).
        template: The name of the template it started from; ``None`` when it was
            never set up, or was set up before satchel recorded templates.
    """

    name: str
    blocks: int = 0
    archival: int = 0
    messages: int = 0
    created_at: datetime | None = None
    last_active: datetime | None = None
    initialised: bool = False
    template: str | None = None


_ID_RE = re.compile(r"^[^\x00-\x1f\x7f]{1,256}$")


def check_id(record_id: object) -> str:
    """Check that ``record_id`` could be a block's or message's id and return it.

    Raises:
        InvalidInputError: It is not 1-256 characters with no control characters.
    """
    if not isinstance(record_id, str) or not _ID_RE.match(record_id):
        raise InvalidInputError(
            f"an id is 1-256 characters with no control characters, not {str(record_id)[:40]!r}",
            details={"id": str(record_id)[:40]},
        )
    return record_id


_ROLES = ("user", "assistant", "system", "tool")

# The largest version or char_limit every backend can store (PostgreSQL keeps them in
# integer columns); an import refuses a larger one.
_MAX_STORED_INT: Final = 2**31 - 1


_ENCODE_CHUNK: Final = 1 << 20


def _encodable(name: str, text: str) -> None:
    """Refuse a string UTF-8 cannot encode (a lone surrogate, which no database stores).

    Checked a megabyte of characters at a time: a 100 MB value is not copied whole."""
    if text.isascii():  # constant time for CPython's compact strings
        return
    for start in range(0, len(text), _ENCODE_CHUNK):
        try:
            text[start : start + _ENCODE_CHUNK].encode("utf-8")
        except UnicodeEncodeError as exc:
            at = start + exc.start
            raise InvalidInputError(
                f"{name} holds a lone surrogate (U+{ord(text[at]):04X} at character "
                f"{at}), which is not text"
            ) from None


def _check_texts(record: Block | Message) -> None:
    fields = {"id": record.id, "agent": record.agent}
    if isinstance(record, Block):
        fields |= {"label": record.label, "value": record.value, "description": record.description}
        for name in record.shares:
            _encodable("a share's agent name", name)
    else:
        fields |= {"conversation_id": record.conversation_id, "content": record.content}
    for name, text in fields.items():
        _encodable(name, text)
    for tag in record.tags:
        _encodable("a tag", tag)


def _check_block(block: Block) -> None:
    validate_label(block.label)
    for name, level in block.shares.items():
        validate_agent(name)
        if level > block.permission:
            # The gate's rule (satchel.memory._permissions.authorize): never share above
            # the block's own permission, or a friend gets more than the owner has.
            raise InvalidInputError(
                f"the share with {name!r} is {level.value!r}, above the block's own "
                f"permission {block.permission.value!r}"
            )
    if block.agent in block.shares:
        raise InvalidInputError("a block cannot be shared with its own owner")
    if not 1 <= block.version <= _MAX_STORED_INT:
        raise InvalidInputError(f"version must be from 1 to {_MAX_STORED_INT}")
    if block.char_limit is not None and not 0 <= block.char_limit <= _MAX_STORED_INT:
        raise InvalidInputError(f"char_limit must be from 0 to {_MAX_STORED_INT}")


def check_restorable(record: Block | Message) -> None:
    """Check that ``record`` can be restored exactly; the rules are those of
    :func:`check_import_record`.

    Raises:
        InvalidInputError: The record is invalid; the message says why.
    """
    try:
        _check_texts(record)
        if not _ID_RE.match(record.id):
            raise InvalidInputError("the id must be 1-256 characters with no control characters")
        validate_agent(record.agent)
        moments = [record.created_at]
        if isinstance(record, Block):
            _check_block(record)
            moments.append(record.updated_at)
        elif record.role not in _ROLES:
            raise InvalidInputError(f"role must be one of {_ROLES}")
        if any(moment.tzinfo is None for moment in moments):
            raise InvalidInputError("times must be timezone-aware")
        if any(not tag for tag in record.tags) or len(set(record.tags)) != len(record.tags):
            raise InvalidInputError("tags must be non-empty and distinct")
        try:
            metadata = json.dumps(dict(record.metadata), ensure_ascii=False, allow_nan=False)
        except RecursionError:
            raise InvalidInputError("metadata is nested too deeply") from None
        _encodable("metadata", metadata)
    except TypeError as exc:
        raise InvalidInputError(str(exc)) from exc


def check_import_record(record: object, position: int) -> Block | Message:
    """Check that ``record`` can be restored exactly, and return it.

    Pydantic already checked each field's type when the record was built; this adds
    what the stores require: valid agent names and labels, an id of 1-256 characters
    without control characters, text UTF-8 can encode (no lone surrogates),
    timezone-aware times, tags without duplicates, JSON-serialisable metadata,
    ``version`` from 1 and ``char_limit`` from 0 up to 2**31 - 1 (what PostgreSQL
    stores), and what the permission gate would allow: no share above the block's own
    permission. Whether a value may be longer than its ``char_limit`` is the store's
    to decide (its ``char_limit_mode``), not this record check's.

    Args:
        record: The record to check.
        position: Its 0-based position in the import, for the message.

    Raises:
        InvalidInputError: The record is invalid; the message names it by position and id.
    """
    if not isinstance(record, Block | Message):
        raise InvalidInputError(
            f"import record {position} is a {type(record).__name__}, not a Block or Message"
        )
    try:
        check_restorable(record)
    except ValueError as exc:
        what = f"import record {position} ({type(record).__name__.lower()} {record.id!r})"
        raise InvalidInputError(f"{what} is invalid: {exc}") from exc
    return record


def dump_json(metadata: Mapping[str, Any] | None) -> str:
    """Metadata as compact JSON text (NaN refused; ``\u0000`` kept, which is why
    PostgreSQL stores it in a ``json`` rather than a ``jsonb`` column).

    Raises:
        InvalidInputError: It is not JSON-serialisable.
    """
    try:
        return json.dumps(dict(metadata or {}), ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(f"metadata must be JSON-serialisable: {exc}") from exc


def normalise_tags(tags: Iterable[str]) -> tuple[str, ...]:
    """Tags without duplicates, in their first order.

    Raises:
        InvalidInputError: A tag is empty or not a string.
    """
    out: list[str] = []
    for tag in tags:
        if not isinstance(tag, str) or not tag:  # pyright: ignore[reportUnnecessaryIsInstance]
            raise InvalidInputError(f"tags must be non-empty strings, got {tag!r}")
        if tag not in out:
            out.append(tag)
    return tuple(out)
