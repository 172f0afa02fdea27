"""Opening the learned-pairs store that lives in a memory database, from the same
target as the memory store (:func:`satchel.db.open_database`)."""

from __future__ import annotations

from pathlib import Path

from satchel.db import Database, open_database
from satchel.meta._usage import UsageStore

__all__ = ["open_usage_store"]


def open_usage_store(
    target: str | Path | Database | None, *, must_exist: bool = False
) -> UsageStore:
    """The :class:`~satchel.meta.UsageStore` of the database ``target`` names: a
    :class:`~satchel.meta.SQLiteUsageStore` for a file, a
    :class:`~satchel.meta.PostgresUsageStore` for a ``postgresql://`` URL (its driver
    is imported only then), or a registered backend's.

    Raises:
        InvalidInputError: See :func:`satchel.memory.store_location`.
        StorageError: The backend has no learned-pairs store.

    Example:
        >>> meta = MetaTools(registry, usage=open_usage_store("~/notes/satchel.db"))
    """
    database = open_database(target, must_exist=must_exist)
    store: UsageStore = database.component("usage")(database.location)
    return store
