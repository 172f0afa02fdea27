"""Where a SQLite target points: a file path, a ``sqlite:///`` URL, or nothing (the
default file)."""

from __future__ import annotations

from pathlib import Path

from satchel._errors import InvalidInputError
from satchel.db.sqlite._file import default_path

__all__ = ["sqlite_location"]


def sqlite_location(target: str | Path | None, must_exist: bool) -> Path:
    """The database file ``target`` names.

    Args:
        target: A path, ``sqlite:///path``, or ``None`` or blank for
            :func:`default_path`.
        must_exist: Refuse a file that does not exist yet.

    Raises:
        InvalidInputError: A folder, or (with ``must_exist``) no file there.
    """
    if isinstance(target, Path):
        path = target.expanduser()
    elif target is None or not target.strip():
        path = default_path()
    else:
        path = Path(target.removeprefix("sqlite:///")).expanduser()
    if path.is_dir():
        raise InvalidInputError(
            f"{str(path)!r} is a folder; give the database file, e.g. {str(path / 'satchel.db')!r}",
            details={"path": str(path)},
        )
    if must_exist and not path.exists():
        raise InvalidInputError(
            f"there is no memory database at {str(path)!r}; check the path",
            details={"path": str(path)},
        )
    return path
