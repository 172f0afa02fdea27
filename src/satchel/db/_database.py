"""The one URL → backend switch: :func:`open_database` and the backends registered
with :func:`register_backend`.

Every component that keeps tables (memory, the approval store, the meta-tools'
learned pairs, the console through them) asks :func:`open_database` what a target
names, once, and then asks the :class:`Database` for its own implementation on that
backend (:meth:`Database.component`). A backend is a :class:`DatabaseBackend` record:
its URL schemes, how a target becomes a location, and per component the
``"module:attribute"`` of the class or opener that implements it. The modules are
imported only when a component is asked for, so registering PostgreSQL does not import
psycopg. A new backend is therefore one folder (its stores) and one
:func:`register_backend` call; nothing else in satchel names it.
"""

from __future__ import annotations

import importlib
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from satchel._errors import InvalidInputError, SatchelUsageError, StorageError
from satchel.db._backend import DatabaseBackend
from satchel.db._builtin import BUILTIN

__all__ = [
    "FILE_BACKEND",
    "Database",
    "DatabaseBackend",
    "backends",
    "open_database",
    "register_backend",
    "unregister_backend",
]

FILE_BACKEND = "sqlite"
"""The backend of a target without a URL scheme (a file path, or nothing)."""

_lock = threading.Lock()
_backends: dict[str, DatabaseBackend] = {backend.name: backend for backend in BUILTIN}


def register_backend(backend: DatabaseBackend, *, replace: bool = False) -> None:
    """Make ``backend`` a target of :func:`open_database`.

    Raises:
        SatchelUsageError: Its name or one of its schemes is taken (and not
            ``replace``).

    Example:
        >>> register_backend(DatabaseBackend(  # doctest: +SKIP
        ...     name="duckdb", schemes=("duckdb",), example="a duckdb:// URL",
        ...     components={"memory": "my_duck.memory:DuckStore.open"}))
    """
    with _lock:
        if not replace:
            taken = backend.name in _backends or any(
                scheme in other.schemes
                for other in _backends.values()
                for scheme in backend.schemes
            )
            if taken:
                raise SatchelUsageError(
                    f"a database backend named {backend.name!r} or serving "
                    f"{', '.join(backend.schemes)} is registered already; pass replace=True"
                )
        _backends[backend.name] = backend


def unregister_backend(name: str) -> None:
    """Remove the backend called ``name`` (a no-op when there is none)."""
    with _lock:
        _backends.pop(name, None)


def backends() -> list[DatabaseBackend]:
    """The registered backends, in the order they were registered."""
    with _lock:
        return list(_backends.values())


@dataclass(frozen=True, kw_only=True)
class Database:
    """A database that satchel's stores share, as :func:`open_database` found it.

    Attributes:
        backend: The backend that serves it.
        location: What its components open: a :class:`~pathlib.Path` for a file, a URL
            otherwise.
    """

    backend: DatabaseBackend
    location: str | Path

    @property
    def dialect(self) -> str:
        """The backend's name (``"sqlite"``, ``"postgresql"``)."""
        return self.backend.name

    @property
    def path(self) -> Path | None:
        """The database file, or ``None`` for a server's database."""
        return self.location if isinstance(self.location, Path) else None

    def component(self, name: str) -> Any:
        """The class or opener that implements component ``name`` on this backend,
        imported now.

        Raises:
            StorageError: The backend does not implement ``name``.
        """
        spec = self.backend.components.get(name)
        if spec is None:
            raise StorageError(
                f"the {self.dialect} backend has no {name} store",
                details={"backend": self.dialect, "component": name},
            )
        module, _, attribute = spec.partition(":")
        found: Any = importlib.import_module(module)
        for part in attribute.split("."):
            found = getattr(found, part)
        return found


def _scheme(target: str | Path | None) -> str | None:
    if isinstance(target, str) and "://" in target:
        return target.split("://", 1)[0]
    return None


def open_database(
    target: str | Path | Database | None = None, *, must_exist: bool = False
) -> Database:
    """The database ``target`` names: a file path, ``sqlite:///path``,
    ``postgresql://...`` (any registered backend's URL), or ``None`` or blank for the
    default file. Nothing connects yet: each component opens its own connections.

    Args:
        target: The path or URL; a :class:`Database` is returned as it is.
        must_exist: Refuse a database file that does not exist yet.

    Raises:
        InvalidInputError: A scheme no backend serves, a folder, or (with
            ``must_exist``) no file there.

    Example:
        >>> open_database("postgresql://localhost/satchel").dialect
        'postgresql'
    """
    if isinstance(target, Database):
        return target
    scheme = _scheme(target)
    with _lock:
        known = list(_backends.values())
    if scheme is None:
        chosen = next(b for b in known if b.name == FILE_BACKEND)
    else:
        found = [b for b in known if scheme in b.schemes]
        if not found:
            examples = [b.example for b in known]
            listed = ", ".join(examples[:-1]) + (" or " if len(examples) > 1 else "") + examples[-1]
            raise InvalidInputError(
                f"{scheme!r} URLs are not supported; give a file path, {listed}",
                details={"scheme": scheme},
            )
        chosen = found[0]
    return Database(backend=chosen, location=chosen.locate(target, must_exist))
