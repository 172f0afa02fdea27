"""One way to open a memory store from what a user typed: a file path, a
``sqlite:///`` URL, a ``postgresql://`` URL, or nothing (the default file).

Both go through :func:`satchel.db.open_database`, the one URL → backend switch that
the approval store, the learned-pairs store and the console use too, so a target
means the same thing everywhere. PostgreSQL's driver is imported only when a
PostgreSQL URL is opened: ``import satchel`` never loads it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio.to_thread

from satchel.db import Database, open_database
from satchel.memory._protocol import MemoryStore

__all__ = ["is_postgres_url", "open_store", "store_location"]

_POSTGRES_SCHEMES = ("postgresql://", "postgres://")


def is_postgres_url(target: str | Path) -> bool:
    """Whether ``target`` names a PostgreSQL database (``postgresql://`` or
    ``postgres://``) rather than a SQLite file.

    Example:
        >>> is_postgres_url("postgresql://localhost/satchel")
        True
    """
    return isinstance(target, str) and target.startswith(_POSTGRES_SCHEMES)


def store_location(target: str | Path | None, *, must_exist: bool = False) -> str | Path:
    """Where ``target`` points: a PostgreSQL URL as it is, else the SQLite file
    (:func:`satchel.db.open_database`'s location).

    Args:
        target: A file path, ``sqlite:///path``, ``postgresql://...``, or ``None`` or
            blank for :func:`~satchel.memory.default_path`.
        must_exist: Refuse a SQLite file that does not exist yet.

    Raises:
        InvalidInputError: An unsupported URL scheme, a folder, or (with
            ``must_exist``) no file there.

    Example:
        >>> store_location("sqlite:///tmp/a.db")
        PosixPath('/tmp/a.db')
    """
    return open_database(target, must_exist=must_exist).location


async def open_store(
    target: str | Path | Database | None = None, *, must_exist: bool = False, **options: Any
) -> MemoryStore:
    """Open the memory store ``target`` names: SQLite for a path (the embedded
    default), PostgreSQL for a ``postgresql://`` URL, or the memory store of any
    backend registered with :func:`satchel.db.register_backend`.

    Args:
        target: See :func:`store_location`, or a :class:`~satchel.db.Database` from
            :func:`~satchel.db.open_database`.
        must_exist: Refuse to create a new SQLite file.
        **options: Passed to the backend's store (:class:`~satchel.memory.SQLiteStore`
            or :class:`~satchel.memory.postgres.PostgresStore`: ``embedder``,
            ``consent``, ``fusion``, ...).

    Raises:
        InvalidInputError: See :func:`store_location`.
        StorageError: The database cannot be opened.

    Example:
        >>> store = await open_store("postgresql://localhost/satchel", embedder=None)
    """
    database = open_database(target, must_exist=must_exist)
    embedder = options.get("embedder")
    if embedder is not None and embedder != "default":  # a provider may ask its server
        await anyio.to_thread.run_sync(lambda: embedder.dim)
    opener = database.component("memory")
    store: MemoryStore = await opener(database.location, **options)
    return store
