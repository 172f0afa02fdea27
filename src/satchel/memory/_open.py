"""One place that turns a path or a URL into a store: :func:`open_store`.

The CLI's ``--db``, ``satchel serve`` and the approval stores of :mod:`satchel.consent`
all name their database the same way (a file path, a ``sqlite:///`` URL, or a
``postgresql://`` URL); :func:`resolve_location` reads that name once for all of them.
The PostgreSQL backend (and so psycopg) is imported only when a PostgreSQL URL is
opened.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from satchel._errors import SatchelUsageError, StorageError
from satchel.embed import Embedder
from satchel.memory._fusion import DEFAULT_FUSION, Fusion
from satchel.memory._permissions import ConsentHandler
from satchel.memory._protocol import MemoryStore
from satchel.memory.sqlite import SQLiteStore, default_path

__all__ = ["MissingDatabaseError", "is_postgres_url", "open_store", "resolve_location"]


class MissingDatabaseError(StorageError):
    """:func:`open_store` with ``create=False`` found no SQLite file at the path (its
    ``details`` give the ``path``)."""


def is_postgres_url(target: str) -> bool:
    """Whether ``target`` names a PostgreSQL database (``postgresql://`` or
    ``postgres://``) rather than a SQLite file.

    Example:
        >>> is_postgres_url("postgresql://localhost/satchel")
        True
    """
    return target.startswith(("postgresql://", "postgres://"))


def resolve_location(target: str | Path | None) -> Path | str:
    """Where the database ``target`` names lives: a SQLite file's :class:`~pathlib.Path`,
    or the PostgreSQL URL itself (a ``str``).

    Args:
        target: A file path, a ``sqlite:///path`` URL, a ``postgresql://`` (or
            ``postgres://``) URL, or ``None`` (or blank) for :func:`default_path`.

    Raises:
        SatchelUsageError: Another URL scheme, or a folder instead of a file.

    Example:
        >>> resolve_location("sqlite:///tmp/satchel.db")
        PosixPath('/tmp/satchel.db')
    """
    if isinstance(target, Path):
        return _file(target, str(target))
    if target is None or not target.strip():
        return default_path()
    if is_postgres_url(target):
        return target
    if target.startswith("sqlite:///"):
        return _file(Path(target.removeprefix("sqlite:///")).expanduser(), target)
    if "://" in target:
        scheme = target.split("://", 1)[0]
        raise SatchelUsageError(
            f"{scheme!r} URLs are not supported; give a file path, a sqlite:/// URL or a "
            "postgresql:// URL.",
            details={"target": target},
        )
    return _file(Path(target).expanduser(), target)


def _file(path: Path, target: str) -> Path:
    if path.is_dir():
        raise SatchelUsageError(
            f"{target!r} is a folder; give the database file, e.g. {str(path / 'satchel.db')!r}.",
            details={"target": target},
        )
    return path


async def open_store(
    target: str | Path | None = None,
    *,
    embedder: Embedder | Literal["default"] | None = "default",
    consent: ConsentHandler | None = None,
    char_limit_mode: Literal["hard", "soft"] = "hard",
    fusion: Fusion = DEFAULT_FUSION,
    create: bool = True,
) -> MemoryStore:
    """Open the memory store ``target`` names, on SQLite or PostgreSQL, with the
    permission gate in front of it.

    Args:
        target: See :func:`resolve_location` (``None``: the default SQLite file).
        embedder: The embedding model: ``"default"`` for satchel's local model, any
            :class:`~satchel.embed.Embedder`, or ``None`` for BM25-only search.
        consent: Asked when a write needs consent.
        char_limit_mode: ``hard`` refuses a write past a block's ``char_limit``;
            ``soft`` accepts it and logs a warning.
        fusion: How hybrid search combines full-text and vector scores.
        create: Create a missing SQLite file; with ``False`` a missing file raises
            :class:`MissingDatabaseError` (a PostgreSQL database must exist anyway).

    Raises:
        SatchelUsageError: ``target`` is not a database location.
        MissingDatabaseError: No SQLite file there and ``create`` is false.
        StorageError: The database cannot be opened.

    Example:
        >>> store = await open_store("postgresql://localhost/satchel")  # doctest: +SKIP
        >>> await store.create_block("ada", "persona", "I am Ada.")  # doctest: +SKIP
        >>> await store.close()  # doctest: +SKIP
    """
    location = resolve_location(target)
    if isinstance(location, str):
        from satchel.memory.postgres import PostgresStore  # psycopg loads only here

        return await PostgresStore.open(
            location,
            embedder=embedder,
            consent=consent,
            char_limit_mode=char_limit_mode,
            fusion=fusion,
        )
    if not create and not location.exists():
        raise MissingDatabaseError(
            f"there is no memory database at {str(location)!r}",
            details={"path": str(location)},
        )
    return await SQLiteStore.open(
        location,
        embedder=embedder,
        consent=consent,
        char_limit_mode=char_limit_mode,
        fusion=fusion,
    )
