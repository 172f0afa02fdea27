"""Opening the approval store that lives beside a memory store, from the same target
(:func:`satchel.db.open_database`): approvals are kept in the memory database, so
the CLI in another process can decide them."""

from __future__ import annotations

from pathlib import Path

from satchel.consent._store import ApprovalStore
from satchel.db import Database, open_database

__all__ = ["open_approval_store"]


def open_approval_store(
    target: str | Path | Database | None, *, must_exist: bool = False
) -> ApprovalStore:
    """The approval store of the memory database ``target`` names: the SQLite file's,
    or the PostgreSQL database's for a ``postgresql://`` URL (its driver is imported
    only then), or a registered backend's.

    Raises:
        InvalidInputError: See :func:`satchel.memory.store_location`.
        StorageError: The backend has no approval store.

    Example:
        >>> broker = PermissionBroker(open_approval_store("~/notes/satchel.db"))
    """
    database = open_database(target, must_exist=must_exist)
    store: ApprovalStore = database.component("approvals")(database.location)
    return store
