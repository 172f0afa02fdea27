"""Consent: a human approves destructive tool calls and guarded memory writes.

:class:`PermissionBroker` stores :class:`ApprovalRequest` records in an
:class:`ApprovalStore` (in memory, or :class:`SQLiteApprovalStore` in the memory
database so another process, such as the ``satchel approvals`` CLI, can decide them),
waits for decisions, and answers whether a standing grant covers a scope. It is also a
memory store's :class:`~satchel.memory.ConsentHandler`. :func:`with_approval` gates a
tool or a registry: a call the :class:`ApprovalPolicy` holds (a destructive one, by
default) runs only with an approval bound to exactly its agent, tool and arguments
(:func:`args_digest`). Memory tools are left to the block's permission.

Example:
    >>> broker = PermissionBroker(SQLiteApprovalStore(db_path))
    >>> gated = with_approval(registry, broker)
    >>> result = await gated.call("delete_file", {"path": "a.txt"})
    >>> result.error.details["status"]
    'pending_confirmation'
"""

import typing

from satchel.consent._answered import AnsweredConsent
from satchel.consent._broker import (
    PermissionBroker,
    memory_arguments,
    memory_reason,
    memory_scope,
)
from satchel.consent._gate import gated_call, with_approval
from satchel.consent._models import (
    ApprovalError,
    ApprovalRequest,
    ApprovalStatus,
    ConsentScope,
    Decision,
    args_digest,
    canonical_json,
)
from satchel.consent._open import open_approval_store
from satchel.consent._policy import ApprovalPolicy, needs_approval
from satchel.consent._sqlite import SQLiteApprovalStore
from satchel.consent._store import ApprovalStore, InMemoryApprovalStore

if typing.TYPE_CHECKING:
    from satchel.consent._postgres import PostgresApprovalStore

__all__ = [
    "AnsweredConsent",
    "ApprovalError",
    "ApprovalPolicy",
    "ApprovalRequest",
    "ApprovalStatus",
    "ApprovalStore",
    "ConsentScope",
    "Decision",
    "InMemoryApprovalStore",
    "PermissionBroker",
    "PostgresApprovalStore",
    "SQLiteApprovalStore",
    "args_digest",
    "canonical_json",
    "gated_call",
    "memory_arguments",
    "memory_reason",
    "memory_scope",
    "needs_approval",
    "open_approval_store",
    "with_approval",
]


def __getattr__(name: str) -> typing.Any:
    # PostgreSQL's driver loads only when its store is asked for: `import satchel`
    # stays free of psycopg.
    if name == "PostgresApprovalStore":
        from satchel.consent._postgres import PostgresApprovalStore

        return PostgresApprovalStore
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
