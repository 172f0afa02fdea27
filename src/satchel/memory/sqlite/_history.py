"""The SQLite history of blocks: the migration that adds it (a table and triggers,
registered by :mod:`._migrations`) and the query that reads it (see
:mod:`satchel.memory._history`)."""

from __future__ import annotations

import sqlite3
from typing import Final

from satchel.memory._history import HISTORY_VERSIONS, BlockVersion
from satchel.memory.sqlite._rows import from_us

__all__ = ["MIGRATION_NAME", "MIGRATION_SQL", "block_history"]

MIGRATION_NAME: Final = "0004_block_history"
"""The history migration's name in ``_satchel_migrations``."""

MIGRATION_SQL: Final = f"""
        CREATE TABLE block_history (
            pk INTEGER PRIMARY KEY AUTOINCREMENT,
            block_id TEXT NOT NULL,
            agent_id INTEGER NOT NULL,
            label TEXT NOT NULL,
            version INTEGER NOT NULL,
            value TEXT NOT NULL,
            description TEXT NOT NULL,
            permission TEXT NOT NULL,
            char_limit INTEGER,
            kind TEXT NOT NULL,
            changed_at INTEGER NOT NULL
        );
        CREATE INDEX block_history_block ON block_history (block_id, version);

        CREATE TRIGGER block_history_keep AFTER UPDATE ON blocks
        WHEN OLD.version <> NEW.version
        BEGIN
            INSERT INTO block_history (block_id, agent_id, label, version, value,
                description, permission, char_limit, kind, changed_at)
            VALUES (OLD.id, OLD.agent_id, OLD.label, OLD.version, OLD.value,
                OLD.description, OLD.permission, OLD.char_limit, OLD.kind, OLD.updated_at);
            DELETE FROM block_history WHERE block_id = OLD.id AND pk NOT IN (
                SELECT pk FROM block_history WHERE block_id = OLD.id
                ORDER BY version DESC LIMIT {HISTORY_VERSIONS}
            );
        END;

        CREATE TRIGGER block_history_forget AFTER DELETE ON blocks
        BEGIN
            DELETE FROM block_history WHERE block_id = OLD.id;
        END;
    """
"""The history migration's SQL: the table, and the triggers that fill and empty it."""


def block_history(conn: sqlite3.Connection, block_id: str) -> list[BlockVersion]:
    """The kept earlier versions of the block ``block_id``, oldest first."""
    rows = conn.execute(
        "SELECT h.block_id, a.name, h.label, h.version, h.value, h.description, "
        "h.permission, h.char_limit, h.kind, h.changed_at FROM block_history h "
        "JOIN agents a ON a.id = h.agent_id WHERE h.block_id = ? ORDER BY h.version",
        (block_id,),
    ).fetchall()
    return [BlockVersion.from_row(row, changed_at=from_us(row[9])) for row in rows]
