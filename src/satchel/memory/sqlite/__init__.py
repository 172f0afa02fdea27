"""The embedded SQLite backend of satchel's memory."""

from satchel.memory.sqlite._store import SQLiteStore, default_path

__all__ = ["SQLiteStore", "default_path"]
