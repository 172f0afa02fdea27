"""Opening the approval store that lives beside a memory store, from the same target
(:func:`satchel.memory.store_location`): approvals are kept in the memory database, so
the CLI in another process can decide them."""

from __future__ import annotations

from pathlib import Path

from satchel.consent._sqlite import SQLiteApprovalStore
from satchel.consent._store import ApprovalStore
from satchel.memory import store_location

__all__ = ["open_approval_store"]


def open_approval_store(target: str | Path | None, *, must_exist: bool = False) -> ApprovalStore:
    """The approval store of the memory database ``target`` names: the SQLite file's,
    or the PostgreSQL database's for a ``postgresql://`` URL (its driver is imported
    only then).

    Raises:
        InvalidInputError: See :func:`satchel.memory.store_location`.

    Example:
        >>> broker = PermissionBroker(open_approval_store("~/notes/satchel.db"))
    """
    where = store_location(target, must_exist=must_exist)
    if isinstance(where, str):
        from satchel.consent._postgres import PostgresApprovalStore

        return PostgresApprovalStore(where)
    return SQLiteApprovalStore(where)
