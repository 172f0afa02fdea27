"""satchel's storage layer: one way from a path or URL to a database, one migration
runner, and the connections of the small stores, below every component that keeps
tables.

* :func:`open_database` is the one URL → backend switch: memory
  (:func:`satchel.memory.open_store`), the approval store
  (:func:`satchel.consent.open_approval_store`), the meta-tools' learned pairs
  (:func:`satchel.meta.open_usage_store`) and the console each ask it once, then ask
  the :class:`Database` for their implementation on its backend.
* :func:`register_backend` adds a backend: one :class:`DatabaseBackend` naming, per
  component, the module that implements it.
* Migrations (:class:`Migration`, :func:`add_migration`) are ordered, named and
  append-only, recorded per component in one table per database
  (:mod:`satchel.db._migrations`).
* :mod:`satchel.db.sqlite` and :mod:`satchel.db.postgres` hold each dialect's
  connection helpers; the PostgreSQL one imports psycopg, so it is never imported
  here.
"""

from satchel.db._database import (
    FILE_BACKEND,
    Database,
    DatabaseBackend,
    backends,
    open_database,
    register_backend,
    unregister_backend,
)
from satchel.db._migrations import Migration, add_migration

__all__ = [
    "FILE_BACKEND",
    "Database",
    "DatabaseBackend",
    "Migration",
    "add_migration",
    "backends",
    "open_database",
    "register_backend",
    "unregister_backend",
]
