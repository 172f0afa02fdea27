"""Ordered, named, append-only schema migrations for the SQLite store.

Each migration is a SQL script appended with :func:`migration` under a unique name;
:func:`migrate` has :mod:`satchel.db._migrations` run, in order, the ones not yet
recorded (as component ``memory``) in the file's one ``_satchel_migrations`` table.
Never edit or reorder a migration that has shipped: append a new one.
"""

from __future__ import annotations

import sqlite3

from satchel.db._migrations import Migration, add_migration, migrate_sqlite, sqlite_applied
from satchel.memory.sqlite import _history

__all__ = ["COMPONENT", "MIGRATIONS", "TOKENIZER", "applied_migrations", "migrate"]


MIGRATIONS: list[Migration] = []
"""Every migration, in the order they run."""


def migration(name: str, sql: str) -> None:
    """Append a migration called ``name`` that runs the SQL script ``sql``."""
    add_migration(MIGRATIONS, name, sql)


TOKENIZER = "porter unicode61 remove_diacritics 2"
"""The FTS5 tokenizer of every full-text table (search re-uses it to check candidates)."""


migration(
    "0001_blocks_messages_fts",
    f"""
        CREATE TABLE agents (
            id INTEGER PRIMARY KEY,
            name TEXT NOT NULL UNIQUE
        );

        CREATE TABLE blocks (
            pk INTEGER PRIMARY KEY AUTOINCREMENT,
            id TEXT NOT NULL UNIQUE,
            agent_id INTEGER NOT NULL REFERENCES agents (id),
            label TEXT NOT NULL,
            value TEXT NOT NULL,
            chars INTEGER NOT NULL,
            description TEXT NOT NULL DEFAULT '',
            kind TEXT NOT NULL,
            permission TEXT NOT NULL,
            char_limit INTEGER,
            pinned INTEGER NOT NULL DEFAULT 0,
            version INTEGER NOT NULL DEFAULT 1,
            created_at INTEGER NOT NULL,
            updated_at INTEGER NOT NULL,
            tags TEXT NOT NULL DEFAULT '[]',
            metadata TEXT NOT NULL DEFAULT '{{}}',
            UNIQUE (agent_id, label)
        );
        CREATE INDEX blocks_agent_kind ON blocks (agent_id, kind);

        CREATE TABLE block_tags (
            tag TEXT NOT NULL,
            block_pk INTEGER NOT NULL REFERENCES blocks (pk) ON DELETE CASCADE,
            PRIMARY KEY (tag, block_pk)
        ) WITHOUT ROWID;
        CREATE INDEX block_tags_block ON block_tags (block_pk);

        CREATE TABLE shares (
            block_pk INTEGER NOT NULL REFERENCES blocks (pk) ON DELETE CASCADE,
            agent_id INTEGER NOT NULL REFERENCES agents (id),
            permission TEXT NOT NULL,
            PRIMARY KEY (block_pk, agent_id)
        ) WITHOUT ROWID;
        CREATE INDEX shares_agent ON shares (agent_id);

        CREATE TABLE messages (
            pk INTEGER PRIMARY KEY AUTOINCREMENT,
            id TEXT NOT NULL UNIQUE,
            agent_id INTEGER NOT NULL REFERENCES agents (id),
            conversation_id TEXT NOT NULL,
            role TEXT NOT NULL,
            content TEXT NOT NULL,
            created_at INTEGER NOT NULL,
            tags TEXT NOT NULL DEFAULT '[]',
            metadata TEXT NOT NULL DEFAULT '{{}}'
        );
        CREATE INDEX messages_agent_time ON messages (agent_id, created_at);
        CREATE INDEX messages_agent_conversation_time
            ON messages (agent_id, conversation_id, created_at);

        CREATE TABLE message_tags (
            tag TEXT NOT NULL,
            message_pk INTEGER NOT NULL REFERENCES messages (pk) ON DELETE CASCADE,
            PRIMARY KEY (tag, message_pk)
        ) WITHOUT ROWID;
        CREATE INDEX message_tags_message ON message_tags (message_pk);

        CREATE VIRTUAL TABLE blocks_fts USING fts5 (
            label, description, value,
            content = 'blocks', content_rowid = 'pk', tokenize = '{TOKENIZER}'
        );
        CREATE TRIGGER blocks_fts_insert AFTER INSERT ON blocks BEGIN
            INSERT INTO blocks_fts (rowid, label, description, value)
            VALUES (new.pk, new.label, new.description, new.value);
        END;
        CREATE TRIGGER blocks_fts_delete AFTER DELETE ON blocks BEGIN
            INSERT INTO blocks_fts (blocks_fts, rowid, label, description, value)
            VALUES ('delete', old.pk, old.label, old.description, old.value);
        END;
        CREATE TRIGGER blocks_fts_update AFTER UPDATE OF label, description, value
        ON blocks BEGIN
            INSERT INTO blocks_fts (blocks_fts, rowid, label, description, value)
            VALUES ('delete', old.pk, old.label, old.description, old.value);
            INSERT INTO blocks_fts (rowid, label, description, value)
            VALUES (new.pk, new.label, new.description, new.value);
        END;

        CREATE VIRTUAL TABLE messages_fts USING fts5 (
            content, content = 'messages', content_rowid = 'pk', tokenize = '{TOKENIZER}'
        );
        CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
            INSERT INTO messages_fts (rowid, content) VALUES (new.pk, new.content);
        END;
        CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages BEGIN
            INSERT INTO messages_fts (messages_fts, rowid, content)
            VALUES ('delete', old.pk, old.content);
        END;
        """,
)

# domain 0 = blocks, 1 = messages. ``seq`` only grows (AUTOINCREMENT) and SQLite has
# one writer at a time, so "rows with seq > n" is exactly what was written since a
# reader saw n; ``embedding_deletes`` logs removals the same way.
migration(
    "0002_embeddings",
    """
        CREATE TABLE embeddings (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            domain INTEGER NOT NULL,
            item INTEGER NOT NULL,
            agent_id INTEGER NOT NULL,
            vec BLOB NOT NULL,
            UNIQUE (domain, item)
        );
        CREATE TABLE embedding_deletes (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            domain INTEGER NOT NULL,
            item INTEGER NOT NULL
        );
        CREATE TRIGGER embeddings_log_delete AFTER DELETE ON embeddings BEGIN
            INSERT INTO embedding_deletes (domain, item) VALUES (old.domain, old.item);
        END;
        CREATE TRIGGER blocks_embedding_delete AFTER DELETE ON blocks BEGIN
            DELETE FROM embeddings WHERE domain = 0 AND item = old.pk;
        END;
        CREATE TRIGGER blocks_embedding_stale AFTER UPDATE OF value ON blocks
        WHEN old.value IS NOT new.value BEGIN
            DELETE FROM embeddings WHERE domain = 0 AND item = old.pk;
        END;
        CREATE TRIGGER messages_embedding_delete AFTER DELETE ON messages BEGIN
            DELETE FROM embeddings WHERE domain = 1 AND item = old.pk;
        END;
        CREATE TABLE meta (
            key TEXT PRIMARY KEY,
            value TEXT NOT NULL
        );
        """,
)


# Agents record when they were first seen and whether (and from which template) their
# starting blocks were created: ``initialised_at`` NULL means "never set up". Agents
# that already own a block or a message are marked set up (template NULL), so an
# upgrade never adds starting blocks to an agent someone already used.
migration(
    "0003_agents_initialised",
    """
        ALTER TABLE agents ADD COLUMN created_at INTEGER;
        ALTER TABLE agents ADD COLUMN initialised_at INTEGER;
        ALTER TABLE agents ADD COLUMN template TEXT;
        UPDATE agents SET created_at = coalesce(
            min(coalesce(first_block, first_message), coalesce(first_message, first_block)),
            CAST((julianday('now') - 2440587.5) * 86400000000 AS INTEGER)
        ) FROM (
            SELECT a.id AS agent,
                (SELECT min(created_at) FROM blocks WHERE agent_id = a.id) AS first_block,
                (SELECT min(created_at) FROM messages WHERE agent_id = a.id) AS first_message
            FROM agents AS a
        ) AS firsts WHERE firsts.agent = agents.id;
        UPDATE agents SET initialised_at = created_at
        WHERE EXISTS (SELECT 1 FROM blocks WHERE agent_id = agents.id)
           OR EXISTS (SELECT 1 FROM messages WHERE agent_id = agents.id);
        """,
)

# The history of blocks (satchel.memory._history), filled by triggers.
migration(_history.MIGRATION_NAME, _history.MIGRATION_SQL)

# How many vectors each domain holds, kept by triggers in the same transaction as the
# vectors, so opening the vector index checks its size without a count(*) over the
# whole table (1.0–2.2 s at 1M rows when the file is not in the page cache). The
# BEFORE INSERT trigger counts only a new (domain, item): ``INSERT OR REPLACE`` of an
# existing one deletes the old row without firing delete triggers, so it must not
# count either. A statement that fails rolls its trigger's update back with it.
migration(
    "0005_vector_counts",
    """
        CREATE TABLE vector_counts (
            domain INTEGER PRIMARY KEY,
            n INTEGER NOT NULL
        );
        INSERT INTO vector_counts (domain, n) VALUES (0, 0), (1, 0);
        UPDATE vector_counts SET n = (
            SELECT count(*) FROM embeddings WHERE embeddings.domain = vector_counts.domain
        );
        CREATE TRIGGER embeddings_count_insert BEFORE INSERT ON embeddings
        WHEN NOT EXISTS (
            SELECT 1 FROM embeddings WHERE domain = new.domain AND item = new.item
        ) BEGIN
            INSERT INTO vector_counts (domain, n) VALUES (new.domain, 1)
            ON CONFLICT (domain) DO UPDATE SET n = n + 1;
        END;
        CREATE TRIGGER embeddings_count_delete AFTER DELETE ON embeddings BEGIN
            UPDATE vector_counts SET n = n - 1 WHERE domain = old.domain;
        END;
        CREATE TRIGGER embeddings_count_move AFTER UPDATE OF domain, item ON embeddings
        WHEN old.domain IS NOT new.domain OR old.item IS NOT new.item BEGIN
            UPDATE vector_counts SET n = n - 1 WHERE domain = old.domain;
            INSERT INTO vector_counts (domain, n) VALUES (new.domain, 1)
            ON CONFLICT (domain) DO UPDATE SET n = n + 1;
        END;
        """,
)


COMPONENT = "memory"
"""The memory store's name in the migrations table."""


def applied_migrations(conn: sqlite3.Connection) -> list[str]:
    """The names of the memory migrations recorded in the file, in the order applied."""
    return sqlite_applied(conn, COMPONENT)


def migrate(conn: sqlite3.Connection) -> list[str]:
    """Apply every pending memory migration, each atomically with its record.

    ``conn`` must be in autocommit mode (``isolation_level=None``). Returns the names
    applied now (empty when the database was up to date). Safe to run from several
    processes at once: a migration another process applied first is skipped.
    """
    return migrate_sqlite(conn, COMPONENT, MIGRATIONS)
