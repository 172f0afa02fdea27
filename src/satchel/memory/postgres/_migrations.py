"""Ordered, named, append-only schema migrations for the PostgreSQL store.

Each migration is a SQL script registered with :func:`migration` under a unique name.
:func:`migrate` first makes sure the extensions exist (``vector`` for pgvector,
``unaccent`` for accent-folding full-text search), then runs in order the migrations
not yet recorded in ``satchel_migrations``, each in one transaction together with its
record, under a transaction-level advisory lock: many processes may open one new
database at once and each migration still runs exactly once. Never edit or reorder a
migration that has shipped: append a new one.

Tables carry a ``satchel_`` prefix so the store can share a database (or schema) with
other applications; put it in its own schema with ``?options=-csearch_path%3Dname``
in the URL.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg import errors, sql

from satchel._errors import SatchelUsageError, StorageError

__all__ = [
    "LOCK_KEY",
    "MIGRATIONS",
    "REQUIRED_EXTENSIONS",
    "applied_migrations",
    "ensure_extensions",
    "migrate",
]

LOCK_KEY = 0x5A7C4E1
"""The advisory lock key that serialises schema changes (migrations, the embedding
model claim) across every process using the database."""


@dataclass(kw_only=True, frozen=True)
class _Migration:
    name: str
    sql: str


MIGRATIONS: list[_Migration] = []
"""Every migration, in the order they run."""


def migration(name: str, sql: str) -> None:
    """Append a migration called ``name`` that runs the SQL script ``sql``."""
    if any(m.name == name for m in MIGRATIONS):
        raise SatchelUsageError(f"duplicate migration name {name!r}")
    MIGRATIONS.append(_Migration(name=name, sql=sql))


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


async def applied_migrations(conn: psycopg.AsyncConnection[Any]) -> list[str]:
    """The names of the migrations recorded in the database, in the order applied."""
    await conn.execute(
        "CREATE TABLE IF NOT EXISTS satchel_migrations ("
        " position integer PRIMARY KEY,"
        " name text NOT NULL UNIQUE,"
        " applied_at timestamptz NOT NULL DEFAULT now())"
    )
    cursor = await conn.execute("SELECT name FROM satchel_migrations ORDER BY position")
    return [str(row[0]) for row in await cursor.fetchall()]


async def migrate(conn: psycopg.AsyncConnection[Any]) -> list[str]:
    """Create the extensions, then apply every pending migration, each atomically with
    its record.

    ``conn`` must be in autocommit mode. Returns the names applied now (empty when the
    database was up to date).

    Raises:
        StorageError: An extension is missing (see :func:`ensure_extensions`).
    """
    await ensure_extensions(conn)
    try:
        async with conn.transaction():
            await conn.execute("SELECT pg_advisory_xact_lock(%s)", (LOCK_KEY,))
            done = await applied_migrations(conn)
    except errors.UniqueViolation:  # two first-ever openers raced on CREATE TABLE
        done = await applied_migrations(conn)
    applied: list[str] = []
    for position, step in enumerate(MIGRATIONS, start=1):
        if step.name in done:
            continue
        async with conn.transaction():
            await conn.execute("SELECT pg_advisory_xact_lock(%s)", (LOCK_KEY,))
            cursor = await conn.execute(
                "SELECT 1 FROM satchel_migrations WHERE name = %s", (step.name,)
            )
            if await cursor.fetchone() is not None:
                continue  # another process applied it while we waited for the lock
            await conn.execute(step.sql.encode())
            await conn.execute(
                "INSERT INTO satchel_migrations (position, name) VALUES (%s, %s)",
                (position, step.name),
            )
        applied.append(step.name)
    return applied
