"""SQLite in satchel's storage layer: the lazily opened, migrated file of the small
stores (approvals, learned pairs), where the default database file lives, and what a
path or ``sqlite:///`` URL names."""

from satchel.db.sqlite._file import SQLiteFile, default_path
from satchel.db.sqlite._location import sqlite_location

__all__ = ["SQLiteFile", "default_path", "sqlite_location"]
