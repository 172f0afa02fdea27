"""SQL for conversation messages and stored embeddings on PostgreSQL."""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, LiteralString

import numpy as np
import numpy.typing as npt

from satchel.memory._models import Message, Role
from satchel.memory.postgres._db import Conn
from satchel.memory.postgres._rows import (
    MESSAGE_COLUMNS,
    dec,
    dump_json,
    enc,
    enc_all,
    message_from_row,
    utc,
)
from satchel.memory.postgres._search_sql import BLOCKS, MESSAGES
from satchel.memory.postgres._vector_rows import (
    BLOCK_VECTORS,
    MESSAGE_VECTORS,
    store_vector,
    with_side_row,
)

__all__ = [
    "count_texts",
    "count_without_vector",
    "insert_message",
    "list_messages",
    "read_meta",
    "store_vectors",
    "texts_to_embed",
    "texts_without_vector",
    "write_meta",
]

F32 = npt.NDArray[np.float32]

_TEXT_COLUMN: dict[int, tuple[LiteralString, LiteralString, LiteralString]] = {
    BLOCKS.key: ("satchel_blocks", "value", BLOCK_VECTORS),
    MESSAGES.key: ("satchel_messages", "content", MESSAGE_VECTORS),
}


async def insert_message(
    conn: Conn,
    *,
    agent: str,
    role: Role,
    content: str,
    conversation_id: str,
    created_at: datetime,
    tags: tuple[str, ...],
    metadata: Mapping[str, Any] | None,
    vector: F32 | None,
    model: str | None,
) -> Message:
    """Insert a message with its vector, in one statement."""
    cursor = await conn.execute(
        with_side_row(
            "INSERT INTO satchel_messages AS m (id, agent, conversation_id, role, content, "
            "created_at, tags, metadata) VALUES (%(id)s, %(agent)s, %(conversation)s, "
            "%(role)s, %(content)s, %(created)s, %(tags)s, %(metadata)s) "
            f"RETURNING {MESSAGE_COLUMNS}",
            MESSAGE_VECTORS,
        ),
        {
            "id": uuid.uuid4().hex,
            "agent": agent,
            "conversation": enc(conversation_id),
            "role": role,
            "content": enc(content),
            "created": utc(created_at),
            "tags": enc_all(tags),
            "metadata": dump_json(metadata),
            "vec": vector,
            "model": model,
        },
    )
    row = await cursor.fetchone()
    assert row is not None
    return message_from_row(row)


async def list_messages(
    conn: Conn,
    agent: str,
    *,
    conversation_id: str | None,
    limit: int,
    before: datetime | None,
) -> list[Message]:
    """The latest ``limit`` messages, oldest first."""
    where: LiteralString = "m.agent = %(me)s"
    params: dict[str, Any] = {"me": agent, "limit": limit}
    if conversation_id is not None:
        where += " AND m.conversation_id = %(conversation)s"
        params["conversation"] = enc(conversation_id)
    if before is not None:
        where += " AND m.created_at < %(before)s"
        params["before"] = utc(before)
    cursor = await conn.execute(
        f"SELECT {MESSAGE_COLUMNS} FROM satchel_messages AS m WHERE {where} "
        "ORDER BY m.created_at DESC, m.pk DESC LIMIT %(limit)s",
        params,
    )
    return [message_from_row(row) for row in reversed(await cursor.fetchall())]


async def store_vectors(
    conn: Conn,
    domain: int,
    items: Sequence[tuple[int, str]],
    vectors: F32,
    model: str,
) -> None:
    """Store the vector of each ``(pk, text)`` whose row still holds exactly ``text``
    (a newer write wins over a late embedding)."""
    query = store_vector(*_TEXT_COLUMN[domain])
    params = [
        {"pk": pk, "text": enc(text), "vec": vector, "model": model}
        for (pk, text), vector in zip(items, vectors, strict=True)
    ]
    if len(params) == 1:
        await conn.execute(query, params[0])
        return
    async with conn.cursor() as cursor:
        await cursor.executemany(query, params)


async def texts_to_embed(
    conn: Conn, domain: int, after_pk: int, limit: int
) -> list[tuple[int, str]]:
    """The next ``limit`` non-empty ``(pk, text)`` pairs of a domain with ``pk >
    after_pk``."""
    table, column, _ = _TEXT_COLUMN[domain]
    cursor = await conn.execute(
        f"SELECT pk, {column} FROM {table} WHERE pk > %s AND {column} <> '' ORDER BY pk LIMIT %s",
        (after_pk, limit),
    )
    return [(int(pk), dec(text)) for pk, text in await cursor.fetchall()]


async def texts_without_vector(
    conn: Conn, domain: int, after_pk: int, limit: int
) -> list[tuple[int, str]]:
    """The next ``limit`` non-empty ``(pk, text)`` pairs of a domain with ``pk >
    after_pk`` that have no vector."""
    table, column, vectors = _TEXT_COLUMN[domain]
    cursor = await conn.execute(
        f"SELECT t.pk, t.{column} FROM {table} AS t LEFT JOIN {vectors} AS v ON v.pk = t.pk "
        f"WHERE t.pk > %s AND t.{column} <> '' AND v.embedding IS NULL ORDER BY t.pk LIMIT %s",
        (after_pk, limit),
    )
    return [(int(pk), dec(text)) for pk, text in await cursor.fetchall()]


async def count_without_vector(conn: Conn) -> int:
    """How many non-empty blocks and messages have no vector."""
    total = 0
    for table, column, vectors in _TEXT_COLUMN.values():
        cursor = await conn.execute(
            f"SELECT count(*) FROM {table} AS t LEFT JOIN {vectors} AS v ON v.pk = t.pk "
            f"WHERE t.{column} <> '' AND v.embedding IS NULL"
        )
        row = await cursor.fetchone()
        total += int(row[0]) if row else 0
    return total


async def read_meta(conn: Conn, key: str) -> str | None:
    """The value of ``key`` in ``satchel_meta``, or ``None``."""
    cursor = await conn.execute("SELECT value FROM satchel_meta WHERE key = %s", (key,))
    row = await cursor.fetchone()
    return None if row is None else str(row[0])


async def write_meta(conn: Conn, key: str, value: str | None) -> None:
    """Set ``key`` in ``satchel_meta`` to ``value`` (``None``: remove it)."""
    if value is None:
        await conn.execute("DELETE FROM satchel_meta WHERE key = %s", (key,))
        return
    await conn.execute(
        "INSERT INTO satchel_meta (key, value) VALUES (%s, %s) "
        "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        (key, value),
    )


async def count_texts(conn: Conn) -> int:
    """How many non-empty blocks and messages there are."""
    cursor = await conn.execute(
        "SELECT (SELECT count(*) FROM satchel_blocks WHERE value <> '') + "
        "(SELECT count(*) FROM satchel_messages WHERE content <> '')"
    )
    row = await cursor.fetchone()
    return int(row[0]) if row else 0
