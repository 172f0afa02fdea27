"""The one exception tree of satchel.

Every exception satchel raises derives from :class:`SatchelError`::

    SatchelError
    ├── SatchelUsageError          a developer misused the API (raised at once)
    │   └── SchemaError            a model or JSON schema satchel cannot serve
    ├── InvalidInputError          a value handed to satchel is invalid  -> "invalid_arguments"
    │   │                          (also a ValueError, so pydantic validators can raise it)
    │   └── ArgumentsError         (satchel.tools) a tool call's arguments, with the record
    ├── ToolSignal                 raised by a tool's own code to tell the model something
    │   ├── ToolRetry              "try again with different arguments"  -> kind "retry"
    │   ├── ToolFailed             "this failed; retrying will not help" -> kind "failed"
    │   └── ApprovalRequired       "a human must approve this first"     -> kind "needs_approval"
    │       └── ElicitationPending (satchel.mcp) the MCP client is being asked; retry after
    ├── MemoryStoreError           a memory operation was refused       -> kind "failed"
    │   ├── NotFoundError          no such block, entry or agent
    │   ├── AlreadyExistsError     a block with that label exists already
    │   ├── VersionConflictError   optimistic update lost a race        -> kind "retry"
    │   ├── CharLimitError         a write would exceed a block's char_limit
    │   ├── PermissionDeniedError  the permission table says no         -> kind "denied"
    │   └── ConsentRequiredError   a human must consent first           -> kind "needs_approval"
    ├── ApprovalError              an approval id cannot be used for this call -> kind "denied"
    ├── StorageError               a database failed underneath (sqlite3, psycopg), mapped at
    │                              the boundary
    ├── EmbeddingError             the embedding model could not be built, loaded or run
    ├── ModelError                 a model provider refused or could not be reached
    └── RemoteToolError            a mounted MCP server could not be reached or answered badly

Three families are kept apart on purpose:

* errors for a developer's misuse (:class:`SatchelUsageError`) are raised straight away
  and never turned into tool results;
* errors a tool raises to talk to the model (:class:`ToolSignal` and the memory errors)
  become a structured :class:`~satchel.ToolResult` error whose kind is the class's
  ``error_kind``;
* runtime failures (:class:`StorageError`, :class:`EmbeddingError`,
  :class:`RemoteToolError`) are mapped from third-party exceptions at the boundary,
  ``raise StorageError(...) from exc``.

A value that is wrong where it enters satchel (a limit of 0, a naive datetime, an
export line that is not JSON) is an :class:`InvalidInputError`. It is also a
``ValueError``, so pydantic validators may raise it and code that catches
``ValueError`` keeps working.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Literal

__all__ = [
    "AlreadyExistsError",
    "ApprovalError",
    "ApprovalRequired",
    "CharLimitError",
    "ConsentRequiredError",
    "EmbeddingError",
    "ErrorKind",
    "InvalidInputError",
    "MemoryStoreError",
    "ModelError",
    "NotFoundError",
    "PermissionDeniedError",
    "RemoteToolError",
    "SatchelError",
    "SatchelUsageError",
    "SchemaError",
    "StorageError",
    "ToolFailed",
    "ToolRetry",
    "ToolSignal",
    "VersionConflictError",
]

ErrorKind = Literal[
    "unknown_tool",
    "invalid_arguments",
    "denied",
    "needs_approval",
    "failed",
    "retry",
    "timeout",
    "internal",
]
"""The kinds of error a :class:`~satchel.ToolResult` can carry."""


class SatchelError(Exception):
    """Root of every exception satchel raises.

    Args:
        message: Text for the reader (a developer, or a model when the error becomes a
            tool result).
        details: Structured facts about the error, safe to show to a model.
    """

    error_kind: ClassVar[ErrorKind] = "internal"
    """The :class:`~satchel.ToolResult` error kind this exception maps to when a tool
    raises it during a call."""

    def __init__(self, message: str, *, details: Mapping[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.details: dict[str, Any] = dict(details or {})


class SatchelUsageError(SatchelError):
    """A developer used the API wrongly: a duplicate tool name, a bad name, a schema
    satchel cannot serve, ``call_sync`` inside a running event loop. Raised at once,
    never turned into a tool result."""


class SchemaError(SatchelUsageError):
    """A model or JSON schema cannot be turned into provider-safe schemas (for example a
    recursive model)."""


class InvalidInputError(SatchelError, ValueError):
    """A value handed to satchel is invalid: out of range, the wrong shape, unreadable.
    Becomes ``invalid_arguments`` when a tool raises it during a call.

    It is also a ``ValueError``, so a pydantic validator may raise it (the error then
    reaches the caller inside pydantic's ``ValidationError``).

    Example:
        >>> raise InvalidInputError("limit must be between 1 and 1000")
    """

    error_kind: ClassVar[ErrorKind] = "invalid_arguments"


class ToolSignal(SatchelError):
    """Base of the exceptions a tool's own code raises to tell the model something."""


class ToolRetry(ToolSignal):
    """Raised by a tool when the model should try again, for example with different
    arguments. Becomes an error of kind ``retry``.

    Example:
        >>> raise ToolRetry("No city called 'Pariss'; did you mean 'Paris'?")
    """

    error_kind: ClassVar[ErrorKind] = "retry"


class ToolFailed(ToolSignal):
    """Raised (or, by a raw tool, returned) when the tool failed and retrying will not
    help. Becomes an error of kind ``failed``."""

    error_kind: ClassVar[ErrorKind] = "failed"


class ApprovalRequired(ToolSignal):
    """Raised when a human must approve the call first. Becomes ``needs_approval``.

    Args:
        message: What needs approving, for the model.
        approval_id: The id the model passes back once a human approved.
        details: Further structured facts.
    """

    error_kind: ClassVar[ErrorKind] = "needs_approval"

    def __init__(
        self,
        message: str,
        *,
        approval_id: str | None = None,
        details: Mapping[str, Any] | None = None,
    ) -> None:
        merged = dict(details or {})
        if approval_id is not None:
            merged["approval_id"] = approval_id
        super().__init__(message, details=merged)
        self.approval_id = approval_id


class MemoryStoreError(SatchelError):
    """A memory operation was refused. Becomes ``failed`` unless a subclass says
    otherwise."""

    error_kind: ClassVar[ErrorKind] = "failed"


class NotFoundError(MemoryStoreError):
    """No block, archival entry, message or agent has that label or id."""


class AlreadyExistsError(MemoryStoreError):
    """A block with that label already exists for the agent."""


class VersionConflictError(MemoryStoreError):
    """An optimistic update named a version that is no longer current: someone else
    wrote first. Read again and retry."""

    error_kind: ClassVar[ErrorKind] = "retry"


class CharLimitError(MemoryStoreError):
    """A write would take a block past its ``char_limit``. The details give the
    numbers."""


class PermissionDeniedError(MemoryStoreError):
    """The permission table denies this operation at this level."""

    error_kind: ClassVar[ErrorKind] = "denied"


class ConsentRequiredError(MemoryStoreError):
    """The operation is allowed only with a human's consent, and none was given yet."""

    error_kind: ClassVar[ErrorKind] = "needs_approval"


class StorageError(SatchelError):
    """The database underneath failed (mapped from ``sqlite3`` or ``psycopg``)."""


class EmbeddingError(SatchelError):
    """The embedding model could not be built, loaded or run (a damaged model file, an
    onnxruntime failure, an embedder that returned the wrong shape). Mapped at the
    boundary from onnxruntime's and tokenizers' own exceptions."""


class ModelError(SatchelError):
    """A model provider failed: a missing or refused API key, an unreachable server, a
    server that did not answer in time, a request past the model's context length,
    rate limits that outlasted the retries. Mapped at the boundary from the provider
    SDK's errors.

    Attributes:
        reason: ``auth``, ``connection``, ``timeout``, ``context_length``,
            ``rate_limit``, ``bad_request`` or ``server``.
    """

    def __init__(self, message: str, *, reason: str, details: Mapping[str, Any] | None = None):
        super().__init__(message, details={"reason": reason, **(details or {})})
        self.reason = reason


class RemoteToolError(SatchelError):
    """A mounted MCP server could not be reached, died, or answered badly."""

    error_kind: ClassVar[ErrorKind] = "failed"


class ApprovalError(SatchelError):
    """An approval id cannot be used for this call: unknown, still pending, denied,
    expired, already used, or given for something else. Becomes a ``denied`` tool
    result (``needs_approval`` while still pending).

    Attributes:
        reason: ``unknown``, ``pending``, ``denied``, ``expired``, ``used`` or
            ``mismatch``.
    """

    error_kind: ClassVar[ErrorKind] = "denied"

    def __init__(
        self,
        message: str,
        *,
        reason: Literal["unknown", "pending", "denied", "expired", "used", "mismatch"],
        approval_id: str,
    ) -> None:
        super().__init__(message, details={"approval_id": approval_id, "reason": reason})
        self.reason = reason
        self.approval_id = approval_id
