"""Opening the memory store that ``--db`` names, for the ``memory``, ``approvals`` and
``serve`` commands: a file path, a ``sqlite:///`` URL or a ``postgresql://`` URL."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from satchel.embed import default_embedder
from satchel.memory import ConsentRequest, MemoryStore, SQLiteStore, default_path
from satchel.memory.postgres import PostgresStore, is_postgres_url

__all__ = ["DbOption", "open_store", "resolve_db_path"]

DbOption = Annotated[
    str | None,
    typer.Option(
        "--db",
        metavar="PATH",
        envvar="SATCHEL_DB",
        help="The memory database (a file path). Default: the user data dir's satchel.db.",
        show_default=False,
    ),
]


async def open_store(
    target: str | None, *, create: bool, embed: bool = True, consent: bool = False
) -> MemoryStore:
    """Open the store ``--db`` names: the one place that turns a path or a URL into a
    :class:`~satchel.memory.MemoryStore`.

    Args:
        target: A file path, a ``sqlite:///path`` URL, a ``postgresql://`` URL, or
            ``None`` for the default file.
        create: Create the database if it does not exist (commands that write).
        embed: Open with the local embedder (writes and searches keep vectors current).
        consent: Approve every write that needs a human's consent (``--yes``).

    Raises:
        typer.BadParameter: An unsupported URL, or a missing database when not
            ``create``.
    """
    embedder = default_embedder() if embed else None
    handler = _approve if consent else None
    if target is not None and is_postgres_url(target):
        return await PostgresStore.open(target, embedder=embedder, consent=handler)
    path = _path_of(target)
    if not create and not path.exists():
        raise typer.BadParameter(
            f"there is no memory database at {str(path)!r}. Check the path; a command "
            "that writes (set, import) creates it.",
            param_hint="'--db'",
        )
    return await SQLiteStore.open(
        path,
        embedder=embedder,
        consent=handler,
    )


def resolve_db_path(target: str | None, *, must_exist: bool) -> Path:
    """The database file ``--db`` names (``None``: the default file).

    Raises:
        typer.BadParameter: An unsupported URL, or no database there when
            ``must_exist``.
    """
    path = _path_of(target)
    if must_exist and not path.exists():
        raise typer.BadParameter(
            f"there is no memory database at {str(path)!r}. Check the path or --db.",
            param_hint="'--db'",
        )
    return path


def _path_of(target: str | None) -> Path:
    if target is None or not target.strip():
        return default_path()
    if target.startswith("sqlite:///"):
        return Path(target.removeprefix("sqlite:///")).expanduser()
    if "://" in target:
        scheme = target.split("://", 1)[0]
        hint = (
            "this command keeps its data in a SQLite file and does not support PostgreSQL yet"
            if scheme.startswith("postgres")
            else f"{scheme!r} URLs are not supported"
        )
        raise typer.BadParameter(f"{hint}; give a file path.", param_hint="'--db'")
    path = Path(target).expanduser()
    if path.is_dir():
        raise typer.BadParameter(
            f"{target!r} is a folder; give the database file, e.g. {str(path / 'satchel.db')!r}.",
            param_hint="'--db'",
        )
    return path


async def _approve(request: ConsentRequest, /) -> bool:
    return True
