"""Opening the memory store that ``--db`` names, for the ``memory``, ``approvals`` and
``serve`` commands: a file path, a ``sqlite:///`` URL or a ``postgresql://`` URL.

The path or URL is read by :func:`satchel.memory.open_store` and
:func:`satchel.consent.open_approval_store`; this module only turns their refusals
into ``--db`` usage errors."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from satchel._errors import SatchelUsageError
from satchel.consent import ApprovalStore, open_approval_store
from satchel.embed import default_embedder
from satchel.memory import (
    ConsentRequest,
    MemoryStore,
    MissingDatabaseError,
    resolve_location,
)
from satchel.memory import open_store as open_memory

__all__ = ["DbOption", "approval_store", "check_db", "open_store"]

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
    """Open the store ``--db`` names (see :func:`satchel.memory.open_store`).

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
    check_db(target)
    try:
        return await open_memory(
            target,
            embedder=default_embedder() if embed else None,
            consent=_approve if consent else None,
            create=create,
        )
    except MissingDatabaseError as exc:
        raise typer.BadParameter(
            f"there is no memory database at {exc.details['path']!r}. Check the path; a "
            "command that writes (set, import) creates it.",
            param_hint="'--db'",
        ) from exc


def approval_store(target: str | None, *, must_exist: bool) -> ApprovalStore:
    """The approval store of the database ``--db`` names (see
    :func:`satchel.consent.open_approval_store`).

    Raises:
        typer.BadParameter: An unsupported URL, or no SQLite file there when
            ``must_exist``.
    """
    location = check_db(target)
    if must_exist and isinstance(location, Path) and not location.exists():
        raise typer.BadParameter(
            f"there is no memory database at {str(location)!r}. Check the path or --db.",
            param_hint="'--db'",
        )
    return open_approval_store(location)


def check_db(target: str | None) -> Path | str:
    """The SQLite file or PostgreSQL URL ``--db`` names (``None``: the default file).

    Raises:
        typer.BadParameter: Not a database location.
    """
    try:
        return resolve_location(target)
    except SatchelUsageError as exc:
        raise typer.BadParameter(exc.message, param_hint="'--db'") from exc


async def _approve(request: ConsentRequest, /) -> bool:
    return True
