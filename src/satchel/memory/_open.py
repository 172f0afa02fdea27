"""One way to open a memory store from what a user typed: a file path, a
``sqlite:///`` URL, a ``postgresql://`` URL, or nothing (the default file).

The CLI, ``serve`` and the approval store all go through :func:`store_location`, so a
target means the same thing everywhere. PostgreSQL's driver is imported only when a
PostgreSQL URL is opened: ``import satchel`` never loads it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from satchel._errors import InvalidInputError
from satchel.memory._protocol import MemoryStore
from satchel.memory.sqlite import SQLiteStore, default_path

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
    """Where ``target`` points: a PostgreSQL URL as it is, else the SQLite file.

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
    if isinstance(target, str) and is_postgres_url(target):
        return target
    path = _path_of(target)
    if must_exist and not path.exists():
        raise InvalidInputError(
            f"there is no memory database at {str(path)!r}; check the path",
            details={"path": str(path)},
        )
    return path


def _path_of(target: str | Path | None) -> Path:
    if isinstance(target, Path):
        path = target.expanduser()
    elif target is None or not target.strip():
        return default_path()
    elif target.startswith("sqlite:///"):
        path = Path(target.removeprefix("sqlite:///")).expanduser()
    elif "://" in target:
        scheme = target.split("://", 1)[0]
        raise InvalidInputError(
            f"{scheme!r} URLs are not supported; give a file path, a sqlite:/// URL or a "
            "postgresql:// URL",
            details={"scheme": scheme},
        )
    else:
        path = Path(target).expanduser()
    if path.is_dir():
        raise InvalidInputError(
            f"{str(path)!r} is a folder; give the database file, e.g. {str(path / 'satchel.db')!r}",
            details={"path": str(path)},
        )
    return path


async def open_store(
    target: str | Path | None = None, *, must_exist: bool = False, **options: Any
) -> MemoryStore:
    """Open the memory store ``target`` names: SQLite for a path (the embedded
    default), PostgreSQL for a ``postgresql://`` URL.

    Args:
        target: See :func:`store_location`.
        must_exist: Refuse to create a new SQLite file.
        **options: Passed to :class:`~satchel.memory.SQLiteStore` or
            :class:`~satchel.memory.postgres.PostgresStore` (``embedder``, ``consent``,
            ``fusion``, ...).

    Raises:
        InvalidInputError: See :func:`store_location`.
        StorageError: The database cannot be opened.

    Example:
        >>> store = await open_store("postgresql://localhost/satchel", embedder=None)
    """
    where = store_location(target, must_exist=must_exist)
    if isinstance(where, str):
        from satchel.memory.postgres import PostgresStore  # the driver loads only here

        return await PostgresStore.open(where, **options)
    return await SQLiteStore.open(where, **options)
