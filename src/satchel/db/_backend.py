"""What a storage backend is to satchel: a :class:`DatabaseBackend` record, registered
with :func:`satchel.db.register_backend`."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["DatabaseBackend", "Locate"]

Locate = Callable[[str | Path | None, bool], str | Path]
"""``(target, must_exist) -> location``: a backend's reading of a target."""


def _url_as_given(target: str | Path | None, must_exist: bool) -> str | Path:
    return target if target is not None else ""


@dataclass(frozen=True, kw_only=True)
class DatabaseBackend:
    """A storage backend, as registered with :func:`register_backend`.

    Attributes:
        name: The backend's name, which is also :attr:`Database.dialect`
            (``"sqlite"``).
        schemes: The URL schemes it serves (``("postgresql", "postgres")``).
        example: How an error message names its targets (``"a postgresql:// URL"``).
        components: Per component (``"memory"``, ``"approvals"``, ``"usage"``), the
            ``"module:attribute"`` that implements it on this backend; the attribute
            may be dotted (``"satchel.memory.sqlite:SQLiteStore.open"``).
        locate: Turns a target into the location the components receive (a file
            path, a URL); by default the target as given.
    """

    name: str
    schemes: tuple[str, ...]
    example: str
    components: Mapping[str, str]
    locate: Locate = field(default=_url_as_given)
