"""The one permission gate of satchel's memory.

Every write a backend performs on a block goes through :func:`authorize` first:
append, overwrite (``set``, ``replace``, text updates), kind changes (``archive``,
``load``, ``swap``), delete, and share/unshare. Reading is always allowed to the owner
and to every agent the block is shared with; any other agent cannot even see it.

The rules are data, :data:`RULES`, the table of DESIGN §4 plus two rows it leaves open,
decided here:

============  =========================  ====================  =====================
operation     allowed at                 needs consent at      denied at
============  =========================  ====================  =====================
append        append, read_write, admin  partner, human        read_only
overwrite     read_write, admin          partner, human        append, read_only
kind_change   read_write, admin          partner, human        append, read_only
share         read_write, admin          partner, human        append, read_only
delete        admin                      (none)                every other level
============  =========================  ====================  =====================

* A kind change moves a block in or out of the context window, which changes what the
  agent sees as much as an overwrite does, so it follows the overwrite row.
* Sharing hands the block to someone else. Only the owner may share or unshare, at the
  overwrite row of its own level, and never at a level above the block's own
  permission (no escalation through a friend).

The *effective level* is ``block.permission`` for the owner and the share's level for
a recipient. On "needs consent", the gate asks the injected :class:`ConsentHandler`
(a ``PermissionBroker`` is one); without a handler it raises
:class:`~satchel.ConsentRequiredError`, and a refusal raises
:class:`~satchel.PermissionDeniedError`.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from types import MappingProxyType
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from satchel._errors import ConsentRequiredError, PermissionDeniedError
from satchel.memory._models import Block, Permission
from satchel.tools import HumanAsker, ToolContext

__all__ = [
    "RULES",
    "ConsentHandler",
    "ConsentRequest",
    "Operation",
    "RequestOrigin",
    "Verdict",
    "authorize",
    "content_digest",
    "effective_permission",
    "verdict",
]


class Operation(StrEnum):
    """The kinds of write the permission table knows."""

    APPEND = "append"
    """Add text at the end of a block."""
    OVERWRITE = "overwrite"
    """Replace part or all of a block's text (``set``, ``replace``)."""
    KIND_CHANGE = "kind_change"
    """Move a block between core, working and archival (``archive``, ``load``,
    ``swap``)."""
    DELETE = "delete"
    """Remove a block."""
    SHARE = "share"
    """Share a block with another agent, or stop sharing it."""


class Verdict(StrEnum):
    """What the table says about an operation at a level."""

    ALLOW = "allow"
    CONSENT = "consent"
    DENY = "deny"


def _row(allow: set[Permission], consent: set[Permission]) -> Mapping[Permission, Verdict]:
    row = {
        level: Verdict.ALLOW
        if level in allow
        else Verdict.CONSENT
        if level in consent
        else Verdict.DENY
        for level in Permission
    }
    return MappingProxyType(row)


_P = Permission
_WRITE_ROW = _row({_P.READ_WRITE, _P.ADMIN}, {_P.PARTNER, _P.HUMAN})

RULES: Mapping[Operation, Mapping[Permission, Verdict]] = MappingProxyType(
    {
        Operation.APPEND: _row({_P.APPEND, _P.READ_WRITE, _P.ADMIN}, {_P.PARTNER, _P.HUMAN}),
        Operation.OVERWRITE: _WRITE_ROW,
        Operation.KIND_CHANGE: _WRITE_ROW,
        Operation.SHARE: _WRITE_ROW,
        Operation.DELETE: _row({_P.ADMIN}, set()),
    }
)
"""The permission table: ``RULES[operation][level]`` is the :class:`Verdict`."""


def verdict(operation: Operation, level: Permission) -> Verdict:
    """Look up the table.

    Example:
        >>> verdict(Operation.APPEND, Permission.HUMAN)
        <Verdict.CONSENT: 'consent'>
    """
    return RULES[operation][level]


def effective_permission(block: Block, agent: str) -> Permission | None:
    """The level at which ``agent`` acts on ``block``: the block's own permission for
    its owner, the share's permission for a recipient, ``None`` for anyone else (who
    may not even read it)."""
    if agent == block.agent:
        return block.permission
    return block.shares.get(agent)


class ConsentRequest(BaseModel):
    """What a :class:`ConsentHandler` is asked to approve.

    Attributes:
        scope: Always ``"memory_edit"`` for memory writes.
        label: The block's label.
        owner: The agent that owns the block.
        agent: The agent asking to write.
        operation: The kind of write.
        permission: The level the agent acts at (the reason consent is needed).
        reason: A short sentence for the human: what would change.
        content_digest: The SHA-256 of what this one write would write (the text, the
            new kind, the share...; see :func:`content_digest`), or ``None`` when the
            operation carries nothing. A one-time consent binds to it.
        origin: The channel the write came from (:attr:`RequestOrigin.channel`).
        human: Asks that channel's human during the call, where it can; never stored.
        content: What the write would write (plain JSON data, the source of
            ``content_digest``), for a consent prompt to show; left out of dumps.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)

    scope: Literal["memory_edit"] = "memory_edit"
    label: str
    owner: str
    agent: str
    operation: Operation
    permission: Permission
    reason: str
    content_digest: str | None = None
    origin: str = "unknown"
    human: HumanAsker | None = Field(default=None, exclude=True, repr=False)
    content: Any = Field(default=None, exclude=True, repr=False)


@dataclass(frozen=True, kw_only=True, slots=True)
class RequestOrigin:
    """Where a memory write came from, carried into its :class:`ConsentRequest` so a
    consent prompt can reach the human there.

    Attributes:
        channel: The channel (``"mcp"``, ``"cli"``, ``"discord:123"``).
        human: Asks that channel's human during the call, where it can.

    Example:
        >>> await store.append_to_block("ada", "rules", "Be brief.",
        ...                             origin=RequestOrigin.of(ctx))
    """

    channel: str = "unknown"
    human: HumanAsker | None = None

    @classmethod
    def of(cls, ctx: ToolContext) -> RequestOrigin:
        """The origin of the tool call ``ctx`` describes."""
        return cls(channel=ctx.origin or "unknown", human=ctx.human)


def content_digest(content: Any) -> str:
    """The SHA-256 (hex) of a write's content as canonical JSON (keys sorted, every
    non-ASCII character escaped, so any string, even a lone surrogate, has one).

    Example:
        >>> content_digest({"text": "hi"}) == content_digest({"text": "hi"})
        True
    """
    text = json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(text.encode("ascii")).hexdigest()


@runtime_checkable
class ConsentHandler(Protocol):
    """Asks a human (or a policy) whether a write that needs consent may go ahead.

    A ``PermissionBroker`` implements this; so does any async callable with this shape.
    It returns ``True`` to approve this one write and ``False`` to refuse.

    Example:
        >>> async def always_yes(request: ConsentRequest) -> bool:
        ...     return True
    """

    async def __call__(self, request: ConsentRequest, /) -> bool:
        """Decide on ``request``."""
        ...


async def authorize(
    operation: Operation,
    *,
    block: Block,
    agent: str,
    consent: ConsentHandler | None,
    reason: str,
    share_level: Permission | None = None,
    content: Any = None,
    origin: RequestOrigin | None = None,
) -> Permission:
    """The gate every write goes through. Returns the level the write was allowed at.

    Args:
        operation: The kind of write.
        block: The block as read just before the write.
        agent: The agent acting.
        consent: Who to ask when the table says consent; ``None`` means nobody.
        reason: What the write would do, for a consent prompt.
        share_level: For :attr:`Operation.SHARE`, the level being granted (``None``
            when unsharing).
        content: What the write would write (plain JSON data), so that a one-time
            consent binds to it (:attr:`ConsentRequest.content_digest`).
        origin: Where the write came from; a consent request carries it.

    Raises:
        PermissionDeniedError: The table says no, the agent may not touch the block,
            or a consent handler refused.
        ConsentRequiredError: Consent is needed and there is no handler.
    """
    level = effective_permission(block, agent)
    details = {"label": block.label, "owner": block.agent, "operation": operation.value}
    if level is None:
        raise PermissionDeniedError(
            f"agent {agent!r} has no access to block {block.label!r}", details=details
        )
    details["permission"] = level.value
    if operation is Operation.SHARE:
        if agent != block.agent:
            raise PermissionDeniedError(
                f"only the owner {block.agent!r} may share or unshare block {block.label!r}",
                details=details,
            )
        if share_level is not None and share_level > block.permission:
            raise PermissionDeniedError(
                f"cannot share block {block.label!r} at {share_level.value!r}: above the "
                f"block's own permission {block.permission.value!r}",
                details=details,
            )
    match verdict(operation, level):
        case Verdict.ALLOW:
            return level
        case Verdict.DENY:
            raise PermissionDeniedError(
                f"{operation.value} on block {block.label!r} is not allowed at permission "
                f"{level.value!r}",
                details=details,
            )
        case Verdict.CONSENT:
            request = ConsentRequest(
                label=block.label,
                owner=block.agent,
                agent=agent,
                operation=operation,
                permission=level,
                reason=reason,
                content_digest=None if content is None else content_digest(content),
                origin=origin.channel if origin is not None else "unknown",
                human=origin.human if origin is not None else None,
                content=content,
            )
            if consent is None:
                raise ConsentRequiredError(
                    f"{operation.value} on block {block.label!r} needs a human's consent "
                    f"at permission {level.value!r}",
                    details=details,
                )
            if not await consent(request):
                raise PermissionDeniedError(
                    f"consent to {operation.value} block {block.label!r} was refused",
                    details=details,
                )
            return level
