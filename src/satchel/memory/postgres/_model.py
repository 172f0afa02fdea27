"""Which embedding model's vectors the database holds, and the HNSW indexes for them.

The ``embedding`` columns of the side tables (``satchel_block_vectors``,
``satchel_message_vectors``) are untyped ``vector`` so that a model change needs no
migration. The HNSW index is an expression index on ``embedding::vector(dim)`` with
``vector_cosine_ops`` (``m = 16``, ``ef_construction = 64``, pgvector's defaults),
created when a store first claims the database for a model. The model id
(``name:dim``) is recorded in ``satchel_meta``; a store whose embedder differs leaves
vector search off until :meth:`PostgresStore.reembed` adopts its model. Both steps
run under the schema advisory lock, so concurrent processes agree.
"""

from __future__ import annotations

import logging
from typing import LiteralString, cast

from satchel._errors import InvalidInputError
from satchel.db._migrations import LOCK_KEY
from satchel.memory._model_change import model_change_message
from satchel.memory.postgres._db import Conn
from satchel.memory.postgres._vector_rows import BLOCK_VECTORS, MESSAGE_VECTORS

__all__ = ["HNSW_MAX_DIM", "adopt_model", "claim_model", "dim_sql"]

logger = logging.getLogger("satchel.memory")

HNSW_MAX_DIM = 2000
"""pgvector's HNSW limit for ``vector``; larger models get exact vector search only."""

_TABLES: tuple[LiteralString, ...] = (BLOCK_VECTORS, MESSAGE_VECTORS)
"""The tables holding vectors: the records' side tables (see :mod:`._vector_rows`)."""


def dim_sql(dim: int) -> LiteralString:
    """The dimension as SQL text, after checking it is a plain positive integer.

    Raises:
        InvalidInputError: It is not.
    """
    if type(dim) is not int or not 1 <= dim <= 16_000:
        raise InvalidInputError(f"embedding dimension must be an integer in 1..16000, got {dim!r}")
    return cast(LiteralString, str(dim))


async def _ensure_indexes(conn: Conn, dim: int) -> None:
    if dim > HNSW_MAX_DIM:
        logger.warning("embedding dimension %d is over HNSW's limit: exact vector search", dim)
        return
    size = dim_sql(dim)
    for table in _TABLES:
        name: LiteralString = f"{table}_embedding_{size}_hnsw"
        row = await (await conn.execute("SELECT to_regclass(%s)", (name,))).fetchone()
        if row is not None and row[0] is not None:
            continue
        await conn.execute(
            f"CREATE INDEX IF NOT EXISTS {name} ON {table} USING hnsw "
            f"((embedding::vector({size})) vector_cosine_ops) "
            "WITH (m = 16, ef_construction = 64)"
        )


async def claim_model(conn: Conn, model: str, dim: int) -> str:
    """Record ``model`` as the database's embedding model if it has none, and make sure
    its indexes exist. Returns the database's model (``model`` unless it holds another
    model's vectors)."""
    async with conn.transaction():
        await conn.execute("SELECT pg_advisory_xact_lock(%s)", (LOCK_KEY,))
        cursor = await conn.execute("SELECT value FROM satchel_meta WHERE key = 'embedding_model'")
        row = await cursor.fetchone()
        if row is None:
            await conn.execute(
                "INSERT INTO satchel_meta (key, value) VALUES ('embedding_model', %s)", (model,)
            )
        elif row[0] != model:
            logger.warning("%s", model_change_message(str(row[0]), model))
            return str(row[0])
        await _ensure_indexes(conn, dim)
    return model


async def adopt_model(conn: Conn, model: str, dim: int) -> None:
    """Make ``model`` the database's embedding model: forget every stored vector, drop
    the other models' indexes and create this one's."""
    async with conn.transaction():
        await conn.execute("SELECT pg_advisory_xact_lock(%s)", (LOCK_KEY,))
        await conn.execute(
            "INSERT INTO satchel_meta (key, value) VALUES ('embedding_model', %s) "
            "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            (model,),
        )
        cursor = await conn.execute(
            "SELECT indexname FROM pg_indexes WHERE schemaname = current_schema() "
            "AND tablename = ANY(%s) AND indexname LIKE %s",
            (list(_TABLES), "%\\_embedding\\_%\\_hnsw"),
        )
        keep = {f"{table}_embedding_{dim}_hnsw" for table in _TABLES}
        for (name,) in await cursor.fetchall():
            if name not in keep:
                await conn.execute(f"DROP INDEX {cast(LiteralString, _quote(str(name)))}")
        for table in _TABLES:
            await conn.execute(f"UPDATE {table} SET embedding = NULL WHERE embedding IS NOT NULL")
        await _ensure_indexes(conn, dim)


def _quote(identifier: str) -> str:
    return '"' + identifier.replace('"', '""') + '"'
