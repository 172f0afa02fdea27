"""The PostgreSQL history of blocks: the migration that adds it (a table and trigger
functions, registered by :mod:`._migrations`) and the query that reads it (see
:mod:`satchel.memory._history`)."""

from __future__ import annotations

from typing import Final

from satchel.memory._history import HISTORY_VERSIONS, BlockVersion
from satchel.memory.postgres._db import Conn
from satchel.memory.postgres._rows import dec, utc

__all__ = ["MIGRATION_NAME", "MIGRATION_SQL", "block_history"]

MIGRATION_NAME: Final = "0003_block_history"
"""The history migration's name in ``satchel_migrations``."""

MIGRATION_SQL: Final = f"""
    CREATE TABLE satchel_block_history (
        pk bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        block_id text NOT NULL,
        agent text NOT NULL,
        label text NOT NULL,
        version integer NOT NULL,
        value text NOT NULL,
        description text NOT NULL,
        permission text NOT NULL,
        char_limit integer,
        kind text NOT NULL,
        changed_at timestamptz NOT NULL
    );
    CREATE INDEX satchel_block_history_block ON satchel_block_history (block_id, version);

    CREATE FUNCTION satchel_block_history_keep() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        IF OLD.version IS DISTINCT FROM NEW.version THEN
            INSERT INTO satchel_block_history (block_id, agent, label, version, value,
                description, permission, char_limit, kind, changed_at)
            VALUES (OLD.id, OLD.agent, OLD.label, OLD.version, OLD.value,
                OLD.description, OLD.permission, OLD.char_limit, OLD.kind, OLD.updated_at);
            DELETE FROM satchel_block_history WHERE block_id = OLD.id AND pk NOT IN (
                SELECT pk FROM satchel_block_history WHERE block_id = OLD.id
                ORDER BY version DESC LIMIT {HISTORY_VERSIONS}
            );
        END IF;
        RETURN NULL;
    END $$;
    CREATE TRIGGER satchel_block_history_keep AFTER UPDATE ON satchel_blocks
        FOR EACH ROW EXECUTE FUNCTION satchel_block_history_keep();

    CREATE FUNCTION satchel_block_history_forget() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        DELETE FROM satchel_block_history WHERE block_id = OLD.id;
        RETURN NULL;
    END $$;
    CREATE TRIGGER satchel_block_history_forget AFTER DELETE ON satchel_blocks
        FOR EACH ROW EXECUTE FUNCTION satchel_block_history_forget();
    """
"""The history migration's SQL: the table, and the triggers that fill and empty it."""


async def block_history(conn: Conn, block_id: str) -> list[BlockVersion]:
    """The kept earlier versions of the block ``block_id``, oldest first."""
    cursor = await conn.execute(
        "SELECT block_id, agent, label, version, value, description, permission, "
        "char_limit, kind, changed_at FROM satchel_block_history WHERE block_id = %s "
        "ORDER BY version",
        (block_id,),
    )
    rows = await cursor.fetchall()
    return [BlockVersion.from_row(row, changed_at=utc(row[9]), text=dec) for row in rows]
