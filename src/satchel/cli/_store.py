"""Opening the memory store that ``--db`` names, for the ``memory``, ``approvals`` and
``serve`` commands: a file path, a ``sqlite:///`` URL or a ``postgresql://`` URL."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Annotated, TypeVar

import anyio
import typer

from satchel import memory
from satchel._errors import ConsentRequiredError, InvalidInputError, SatchelUsageError
from satchel.cli._embed_options import EmbedderChoice
from satchel.embed import default_embedder
from satchel.memory import ConsentRequest, MemoryStore
from satchel.serve import database_location

__all__ = ["DbOption", "open_store", "resolve_db_location", "run_on_store"]

_T = TypeVar("_T")

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
    target: str | None,
    *,
    create: bool,
    embed: bool = True,
    consent: bool = False,
    embedder: EmbedderChoice = "default",
) -> MemoryStore:
    """Open the store ``--db`` names, through :func:`satchel.memory.open_store`.

    Args:
        target: A file path, a ``sqlite:///path`` URL, a ``postgresql://`` URL, or
            ``None`` for the default file.
        create: Create the database if it does not exist (commands that write).
        embed: Open with an embedder (writes and searches keep vectors current).
        consent: Approve every write that needs a human's consent (``--yes``).
        embedder: With ``embed``, the embedder (``--embedder``); ``"default"`` for the
            bundled local model.

    Raises:
        typer.BadParameter: An unsupported URL, a missing database when not
            ``create``, or a ``--db`` in a folder that does not exist.
    """
    resolve_db_location(target, must_exist=not create)  # the CLI's own wording, early
    chosen = (default_embedder() if embedder == "default" else embedder) if embed else None
    handler = _approve if consent else None
    try:
        return await memory.open_store(
            target, must_exist=not create, embedder=chosen, consent=handler
        )
    except InvalidInputError as exc:
        raise typer.BadParameter(f"{exc.message}.", param_hint="'--db'") from None


def resolve_db_location(target: str | None, *, must_exist: bool) -> str | Path:
    """What ``--db`` names: a PostgreSQL URL, or the SQLite file (``None``: the default
    file); see :func:`satchel.serve.database_location`, whose errors this words for a
    command line.

    Raises:
        typer.BadParameter: An unsupported URL, a folder, no database file there when
            ``must_exist``, or a given file's folder does not exist.
    """
    try:
        return database_location(target, must_exist=must_exist)
    except SatchelUsageError as exc:
        message = exc.message
        if must_exist and "there is no memory database" in message:
            message = (
                message.removesuffix(".")
                + " (a command that writes, such as set or import, creates it)."
            )
        raise typer.BadParameter(message, param_hint="'--db'") from None


async def _approve(request: ConsentRequest, /) -> bool:
    return True


def run_on_store(
    work: Callable[[MemoryStore], Awaitable[_T]], store_opener: Awaitable[MemoryStore]
) -> _T:
    """Open the store, run ``work`` on it, close it; a store's ``ValueError`` (a bad
    label, a bad tag) becomes a usage error, and a refusal for want of consent says how
    to give it."""

    async def main() -> _T:
        store = await store_opener
        try:
            return await work(store)
        finally:
            await store.close()

    try:
        return anyio.run(main)
    except ValueError as exc:
        raise typer.BadParameter(str(exc).rstrip(".") + ".") from exc
    except ConsentRequiredError as exc:
        raise ConsentRequiredError(
            f"{exc.message}. Pass --yes to give it.", details=exc.details
        ) from exc
