"""Where the memory database named by ``--db`` is, checked before anything opens it."""

from __future__ import annotations

from pathlib import Path

from satchel._errors import InvalidInputError
from satchel.memory import store_location
from satchel.serve._options import option_error

__all__ = ["database_location"]


def database_location(target: str | Path | None, *, must_exist: bool = False) -> str | Path:
    """What ``--db`` names: a PostgreSQL URL, or the SQLite file (``None``: the default
    file).

    A new file is created in an existing folder, and the default file's folder (the
    data dir) is created when missing; a file in a folder that does not exist is
    refused rather than created: it is far more often a typo than a wish, and a typo
    must not start a new, empty memory in a new folder tree.

    Raises:
        SatchelUsageError: An unsupported URL, a folder, no database file there when
            ``must_exist``, or a given file's folder does not exist
            (``details["option"]`` is ``"--db"``).
    """
    text = None if target is None else str(target)
    try:
        where = store_location(text, must_exist=must_exist)
    except InvalidInputError as exc:
        raise option_error("--db", f"{exc.message}.") from None
    explicit = text is not None and bool(text.strip())
    if explicit and isinstance(where, Path) and not where.parent.is_dir():
        folder = str(where.parent)
        raise option_error(
            "--db",
            f"the folder {folder!r} does not exist; create it first (mkdir -p {folder!r}) "
            "or check the path.",
        )
    return where
