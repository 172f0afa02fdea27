"""The records of the consent flow: what is asked (:class:`ConsentScope`), what a human
decided (:class:`Decision`), and the request that carries both (:class:`ApprovalRequest`).
"""

from __future__ import annotations

import hashlib
import json
import re
from datetime import UTC, datetime, timedelta
from typing import Any, Final, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, model_validator

from satchel._errors import ApprovalError, InvalidInputError, SatchelUsageError

__all__ = [
    "ApprovalError",
    "ApprovalRequest",
    "ApprovalStatus",
    "ConsentScope",
    "Decision",
    "args_digest",
    "canonical_json",
    "utcnow",
]

ApprovalStatus = Literal["pending", "approved", "denied", "expired", "used"]
"""Where a request stands: waiting for a human, approved (and still valid), denied,
expired (timed out while pending, or an approval that ran out), or used (a one-time
approval that has been spent)."""

_DIGEST: Final = re.compile(r"^[0-9a-f]{64}$")


def utcnow() -> datetime:
    """The current time, timezone-aware UTC."""
    return datetime.now(UTC)


def canonical_json(value: Any) -> str:
    """``value`` as canonical JSON: keys sorted, no whitespace, non-ASCII kept, numbers
    exactly as Python writes them (so ``1`` and ``1.0`` differ).

    Raises:
        SatchelUsageError: ``value`` is not plain JSON data (or holds NaN/infinity).

    Example:
        >>> canonical_json({"b": 1, "a": [True, None]})
        '{"a":[true,null],"b":1}'
    """
    try:
        return json.dumps(
            value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
        )
    except (TypeError, ValueError, RecursionError) as exc:
        raise SatchelUsageError(f"not plain JSON data: {exc}") from exc


def args_digest(tool: str, args: Any) -> str:
    """The SHA-256 of a tool name and its arguments in canonical JSON: what an approval
    of a tool call binds to.

    Raises:
        SatchelUsageError: ``args`` is not plain JSON data.

    Example:
        >>> args_digest("rm", {"path": "/tmp/x"}) == args_digest("rm", {"path": "/tmp/x"})
        True
    """
    payload = f"{tool}\n{canonical_json(args)}".encode("utf-8", "surrogatepass")
    return hashlib.sha256(payload).hexdigest()


def _seconds(value: float | timedelta) -> float:
    return value.total_seconds() if isinstance(value, timedelta) else float(value)


class ConsentScope(BaseModel):
    """What a human is asked to allow, bound to the agent that asked.

    Two kinds:

    * ``tool_execution``: ``agent`` running ``tool`` with exactly the arguments whose
      digest is ``args_digest``;
    * ``memory_edit``: ``agent`` doing ``operation`` (``append``, ``overwrite``,
      ``kind_change``, ``share``, ``delete``) on the block ``label`` owned by
      ``owner``; ``content_digest`` fingerprints what that one write would write.

    A standing grant covers a later request when their keys (:attr:`key`) are equal: the
    same agent, tool and arguments, or the same agent, block and operation (whatever
    the content). A one-time approval is spent only by a request whose whole scope is
    equal (:meth:`covers`), content included. ``agent`` (and ``operation``) are
    ``None`` only in records stored before approvals were bound; such records match
    nothing new.

    Example:
        >>> ConsentScope.tool_execution("delete_file", {"path": "notes.txt"}, agent="ada").kind
        'tool_execution'
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: Literal["memory_edit", "tool_execution"]
    agent: str | None = None
    label: str | None = None
    owner: str | None = None
    operation: str | None = None
    content_digest: str | None = None
    tool: str | None = None
    args_digest: str | None = None

    @model_validator(mode="after")
    def _fields_fit_kind(self) -> Self:
        if self.kind == "memory_edit":
            if not self.label or self.tool is not None or self.args_digest is not None:
                raise InvalidInputError(
                    "a memory_edit scope takes a label (and owner, agent, operation, "
                    "content_digest) only"
                )
        else:
            if (
                not self.tool
                or self.args_digest is None
                or self.label is not None
                or self.owner is not None
                or self.operation is not None
                or self.content_digest is not None
            ):
                raise InvalidInputError(
                    "a tool_execution scope takes a tool, an args_digest and an agent"
                )
        for digest in (self.args_digest, self.content_digest):
            if digest is not None and not _DIGEST.match(digest):
                raise InvalidInputError("a digest must be 64 lower-case hex digits (SHA-256)")
        return self

    @classmethod
    def memory_edit(
        cls,
        label: str,
        *,
        owner: str,
        agent: str,
        operation: str,
        content_digest: str | None = None,
    ) -> ConsentScope:
        """The scope of ``agent`` doing ``operation`` on the block ``label`` of
        ``owner`` (``content_digest``: what this one write would write)."""
        return cls(
            kind="memory_edit",
            label=label,
            owner=owner,
            agent=agent,
            operation=operation,
            content_digest=content_digest,
        )

    @classmethod
    def tool_execution(cls, tool: str, arguments: Any, *, agent: str) -> ConsentScope:
        """The scope of ``agent`` running ``tool`` with exactly ``arguments``.

        Raises:
            SatchelUsageError: ``arguments`` is not plain JSON data.
        """
        return cls(
            kind="tool_execution", tool=tool, args_digest=args_digest(tool, arguments), agent=agent
        )

    @property
    def key(self) -> str:
        """A string equal for scopes a standing grant covers alike (everything but the
        content of a memory write): what grants are looked up by."""
        return canonical_json(self.model_dump(exclude_none=True, exclude={"content_digest"}))

    @property
    def bound(self) -> bool:
        """True when the scope names its agent (and, for memory, its operation)."""
        if self.agent is None:
            return False
        return self.kind == "tool_execution" or self.operation is not None

    def covers(self, other: ConsentScope) -> bool:
        """Whether a one-time approval given for this scope may be spent on ``other``:
        both are bound, and equal in everything, content included."""
        return self.bound and self == other

    def mismatch(self, other: ConsentScope) -> str:
        """Why an approval for this scope does not fit ``other``, in words (empty when
        the keys are equal)."""
        if not self.bound:
            return "it was given before approvals were bound to an agent; ask again"
        if self.agent != other.agent:
            return "it was given to another agent"
        if self.kind != other.kind:
            return "it was given for another kind of action"
        if self.kind == "tool_execution":
            if self.tool != other.tool:
                return "it was given for another tool"
            return "" if self.args_digest == other.args_digest else "the arguments differ"
        if (self.owner, self.label) != (other.owner, other.label):
            return "it was given for another block"
        if self.operation != other.operation:
            return f"it was given to {self.operation}, not to {other.operation}"
        return "" if self.content_digest == other.content_digest else "the content differs"

    def describe(self) -> str:
        """A short phrase for a human.

        Example:
            >>> ConsentScope.memory_edit(
            ...     "persona", owner="ada", agent="bob", operation="append"
            ... ).describe()
            "append to memory block 'persona' of ada (by bob)"
        """
        agent = self.agent or "any agent (unbound)"
        if self.kind == "tool_execution":
            digest = self.args_digest and self.args_digest[:12]
            return f"run tool {self.tool!r} (arguments {digest}) as {agent}"
        owner = f" of {self.owner}" if self.owner else ""
        by = f" (by {agent})" if self.agent != self.owner else ""
        what = {
            None: "edit",
            "append": "append to",
            "overwrite": "overwrite",
            "kind_change": "move",
            "share": "share",
            "delete": "delete",
        }.get(self.operation, str(self.operation))
        return f"{what} memory block {self.label!r}{owner}{by}"


class Decision(BaseModel):
    """A human's answer to an :class:`ApprovalRequest`.

    * ``deny``: refuse;
    * ``approve_once``: allow this one request (a tool call runs once with it);
    * ``approve_for``: allow it, and any request with the same scope, for
      ``duration_seconds``;
    * ``approve_scope``: allow every request with the same scope from now on.

    Example:
        >>> Decision.approve_for(timedelta(minutes=10)).duration_seconds
        600.0
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: Literal["deny", "approve_once", "approve_for", "approve_scope"]
    duration_seconds: float | None = Field(default=None, gt=0)

    @model_validator(mode="after")
    def _duration_fits_kind(self) -> Self:
        if (self.kind == "approve_for") != (self.duration_seconds is not None):
            raise InvalidInputError("duration_seconds is required for approve_for, and only there")
        return self

    @classmethod
    def deny(cls) -> Decision:
        """Refuse."""
        return cls(kind="deny")

    @classmethod
    def approve_once(cls) -> Decision:
        """Allow this one request."""
        return cls(kind="approve_once")

    @classmethod
    def approve_for(cls, duration: float | timedelta) -> Decision:
        """Allow this scope for ``duration`` (seconds, or a ``timedelta``)."""
        return cls(kind="approve_for", duration_seconds=_seconds(duration))

    @classmethod
    def approve_scope(cls) -> Decision:
        """Allow this scope from now on."""
        return cls(kind="approve_scope")

    @property
    def approved(self) -> bool:
        """True for every kind but ``deny``."""
        return self.kind != "deny"


class ApprovalRequest(BaseModel):
    """One request for a human's consent, as stored and listed.

    Attributes:
        id: Unguessable id (what a model passes back as ``approval_id``).
        scope: What is asked.
        reason: A sentence for the human: what would happen.
        origin: The channel the request came from (``"mcp"``, ``"cli"``,
            ``"discord:123"``), so the prompt can reach the human where they are.
        agent: The agent asking.
        arguments: For a tool call, the exact arguments that would run.
        created_at: When it was asked.
        expires_at: When a pending request times out (to ``expired``, a refusal).
        status: Where it stands (:data:`ApprovalStatus`).
        decision: The human's decision, once made.
        decided_by: Who decided.
        decided_at: When.
        valid_until: When an approval stops covering (``None``: until used, for
            ``approve_once`` with no limit, or for good, for ``approve_scope``).
        used_at: When a one-time approval was spent.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    scope: ConsentScope
    reason: str
    origin: str
    agent: str
    arguments: dict[str, Any] | None = None
    created_at: datetime
    expires_at: datetime
    status: ApprovalStatus = "pending"
    decision: Decision | None = None
    decided_by: str | None = None
    decided_at: datetime | None = None
    valid_until: datetime | None = None
    used_at: datetime | None = None

    @property
    def approved(self) -> bool:
        """True while the request is approved and not spent or expired."""
        return self.status == "approved"

    def lapsed(self, now: datetime) -> bool:
        """True when, at ``now``, a pending request has timed out or an approval has
        run out (the stored status may not say so yet)."""
        if self.status == "pending":
            return now >= self.expires_at
        if self.status == "approved":
            return self.valid_until is not None and now >= self.valid_until
        return False
