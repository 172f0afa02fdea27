"""Ordered, named, append-only schema migrations for the PostgreSQL store.

Each migration is a SQL script registered with :func:`migration` under a unique name.
:func:`migrate` first makes sure the extensions exist (``vector`` for pgvector,
``unaccent`` for accent-folding full-text search), then runs in order the migrations
not yet recorded (as component ``memory``) in the database's one
``satchel_migrations`` table, through :mod:`satchel.db._migrations`: each in one
transaction together with its record, under a transaction-level advisory lock, so many
processes may open one new database at once and each migration still runs exactly
once. Never edit or reorder a
migration that has shipped: append a new one.

Tables carry a ``satchel_`` prefix so the store can share a database (or schema) with
other applications; put it in its own schema with ``?options=-csearch_path%3Dname``
in the URL.
"""

from __future__ import annotations

from typing import Any

import psycopg
from psycopg import errors, sql

from satchel._errors import StorageError
from satchel.db._migrations import (
    LOCK_KEY,
    Migration,
    add_migration,
    migrate_postgres,
    postgres_applied,
)
from satchel.memory.postgres import _history, _migration_vectors
from satchel.memory.postgres._context_sql import NEIGHBOUR_INDEX_SQL, ONE_BLOCK_INDEX_SQL

__all__ = [
    "COMPONENT",
    "LOCK_KEY",
    "MIGRATIONS",
    "REQUIRED_EXTENSIONS",
    "applied_migrations",
    "ensure_extensions",
    "migrate",
]

MIGRATIONS: list[Migration] = []
"""Every migration, in the order they run."""


def migration(name: str, sql: str) -> None:
    """Append a migration called ``name`` that runs the SQL script ``sql``."""
    add_migration(MIGRATIONS, name, sql)


# Full-text configuration: Snowball English stemming without a stop-word list (like
# SQLite's porter tokenizer, which drops no word either), after folding accents.
# Only the first 100,000 characters of a text are indexed: a tsvector is capped at
# 1 MB, and this keeps every possible text under that cap.
migration(
    "0001_blocks_messages_fts",
    """
    CREATE TEXT SEARCH DICTIONARY satchel_english_stem (
        TEMPLATE = pg_catalog.snowball, LANGUAGE = english
    );
    CREATE TEXT SEARCH CONFIGURATION satchel_fts (COPY = pg_catalog.simple);
    ALTER TEXT SEARCH CONFIGURATION satchel_fts
        ALTER MAPPING FOR asciiword, asciihword, hword_asciipart, word, hword, hword_part
        WITH unaccent, satchel_english_stem;

    CREATE TABLE satchel_meta (
        key text PRIMARY KEY,
        value text NOT NULL
    );

    CREATE TABLE satchel_blocks (
        pk bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        id text NOT NULL UNIQUE,
        agent text NOT NULL,
        label text NOT NULL,
        value text NOT NULL,
        chars integer NOT NULL,
        description text NOT NULL DEFAULT '',
        kind text NOT NULL CHECK (kind IN ('core', 'working', 'archival')),
        permission text NOT NULL,
        char_limit integer CHECK (char_limit >= 0),
        pinned boolean NOT NULL DEFAULT false,
        version integer NOT NULL DEFAULT 1,
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL,
        tags text[] NOT NULL DEFAULT '{}',
        metadata json NOT NULL DEFAULT '{}',
        shares jsonb NOT NULL DEFAULT '{}',
        embedding vector,
        fts tsvector GENERATED ALWAYS AS (
            setweight(to_tsvector('satchel_fts'::regconfig, label), 'B')
            || setweight(to_tsvector('satchel_fts'::regconfig, left(description, 100000)), 'B')
            || setweight(to_tsvector('satchel_fts'::regconfig, left(value, 100000)), 'A')
        ) STORED,
        UNIQUE (agent, label)
    );
    CREATE INDEX satchel_blocks_agent_kind ON satchel_blocks (agent, kind);
    CREATE INDEX satchel_blocks_shares ON satchel_blocks USING gin (shares);
    CREATE INDEX satchel_blocks_tags ON satchel_blocks USING gin (tags);
    CREATE INDEX satchel_blocks_fts ON satchel_blocks USING gin (fts);

    CREATE TABLE satchel_messages (
        pk bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        id text NOT NULL UNIQUE,
        agent text NOT NULL,
        conversation_id text NOT NULL,
        role text NOT NULL CHECK (role IN ('user', 'assistant', 'system', 'tool')),
        content text NOT NULL,
        created_at timestamptz NOT NULL,
        tags text[] NOT NULL DEFAULT '{}',
        metadata json NOT NULL DEFAULT '{}',
        embedding vector,
        fts tsvector GENERATED ALWAYS AS (
            to_tsvector('satchel_fts'::regconfig, left(content, 100000))
        ) STORED
    );
    CREATE INDEX satchel_messages_agent_time ON satchel_messages (agent, created_at, pk);
    CREATE INDEX satchel_messages_agent_conversation_time
        ON satchel_messages (agent, conversation_id, created_at, pk);
    CREATE INDEX satchel_messages_tags ON satchel_messages USING gin (tags);
    CREATE INDEX satchel_messages_fts ON satchel_messages USING gin (fts);
    """,
)

# One row per agent that was set up (its starting blocks created once, see
# MemoryStore.ensure_agent). Agents that already own a block or a message get a row
# with a NULL template, so an upgrade never adds starting blocks to an agent someone
# already used.
migration(
    "0002_agents_initialised",
    """
    CREATE TABLE satchel_agents (
        name text PRIMARY KEY,
        created_at timestamptz NOT NULL DEFAULT now(),
        template text
    );
    INSERT INTO satchel_agents (name, created_at)
    SELECT agent, min(created_at) FROM (
        SELECT agent, created_at FROM satchel_blocks
        UNION ALL SELECT agent, created_at FROM satchel_messages
    ) AS records GROUP BY agent;
    """,
)

# The history of blocks (satchel.memory._history), filled by triggers.
migration(_history.MIGRATION_NAME, _history.MIGRATION_SQL)

# Vectors in narrow side tables, so storing one does not rewrite a record's row.
migration(_migration_vectors.NAME, _migration_vectors.SQL)

# Neighbouring-entry context in search (satchel.memory._context_window).
migration("0005_block_neighbours", NEIGHBOUR_INDEX_SQL)

# One index on (agent, kind, pk) for blocks, so the planner cannot pick the shorter one.
migration("0006_one_block_owner_index", ONE_BLOCK_INDEX_SQL)

REQUIRED_EXTENSIONS: tuple[str, ...] = ("vector", "unaccent")
"""The extensions the schema needs: pgvector, and unaccent for full-text search."""

_HINTS = {
    "vector": (
        "Install pgvector on the database server (https://github.com/pgvector/pgvector: "
        "e.g. the postgresql-<version>-pgvector package, or the pgvector/pgvector Docker "
        "image), then run `CREATE EXTENSION vector;` in this database as a superuser, or "
        "let satchel create it by connecting once as one."
    ),
    "unaccent": "Install PostgreSQL's contrib modules (they ship unaccent).",
}


async def ensure_extensions(conn: psycopg.AsyncConnection[Any]) -> None:
    """Create the ``vector`` and ``unaccent`` extensions if the database lacks them.

    Raises:
        StorageError: An extension is not installed on the server, or the user may not
            create it; the message says what to do.
    """
    cursor = await conn.execute(
        "SELECT extname FROM pg_extension WHERE extname = ANY(%s)", (list(REQUIRED_EXTENSIONS),)
    )
    present = {str(row[0]) for row in await cursor.fetchall()}
    for name in REQUIRED_EXTENSIONS:
        if name in present:
            continue
        try:
            async with conn.transaction():
                await conn.execute(
                    sql.SQL("CREATE EXTENSION IF NOT EXISTS {}").format(sql.Identifier(name))
                )
        except (errors.UndefinedFile, errors.FeatureNotSupported) as exc:
            hint = _HINTS.get(name, f"Install the {name!r} extension on the server.")
            raise StorageError(
                f"the PostgreSQL server has no {name!r} extension, which satchel's "
                f"memory store needs. {hint}",
                details={"extension": name},
            ) from exc
        except errors.InsufficientPrivilege as exc:
            raise StorageError(
                f"the {name!r} extension is not enabled in this database and this user "
                f"may not enable it. Ask a superuser to run `CREATE EXTENSION {name};` "
                "in this database once.",
                details={"extension": name},
            ) from exc
        except errors.UniqueViolation:
            continue  # another process created it at the same moment


COMPONENT = "memory"
"""The memory store's name in the migrations table."""


async def applied_migrations(conn: psycopg.AsyncConnection[Any]) -> list[str]:
    """The names of the memory migrations recorded in the database, in order."""
    return await postgres_applied(conn, COMPONENT)


async def migrate(conn: psycopg.AsyncConnection[Any]) -> list[str]:
    """Create the extensions, then apply every pending migration, each atomically with
    its record.

    ``conn`` must be in autocommit mode. Returns the names applied now (empty when the
    database was up to date).

    Raises:
        StorageError: An extension is missing (see :func:`ensure_extensions`).
    """
    await ensure_extensions(conn)
    return await migrate_postgres(conn, COMPONENT, MIGRATIONS)
