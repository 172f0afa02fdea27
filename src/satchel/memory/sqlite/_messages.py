"""Blocking SQL for conversation messages and stored embeddings."""

from __future__ import annotations

import json
import sqlite3
import uuid
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, cast

import numpy as np
import numpy.typing as npt

from satchel.memory._models import Message, Role
from satchel.memory.sqlite._rows import (
    MESSAGE_COLUMNS,
    MESSAGE_FROM,
    agent_id,
    dump_json,
    message_from_row,
    to_us,
)

__all__ = [
    "BLOCKS",
    "MESSAGES",
    "insert_message",
    "list_messages",
    "store_vectors",
    "texts_to_embed",
]

BLOCKS = 0
"""``embeddings.domain`` of a block."""
MESSAGES = 1
"""``embeddings.domain`` of a message."""

F32 = npt.NDArray[np.float32]


def insert_message(
    conn: sqlite3.Connection,
    *,
    agent: str,
    role: Role,
    content: str,
    conversation_id: str,
    created_at: datetime,
    tags: tuple[str, ...],
    metadata: Mapping[str, Any] | None,
    vector: F32 | None,
) -> Message:
    """Insert a message (and its vector, in the same transaction)."""
    owner = agent_id(conn, agent, create=True)
    cursor = conn.execute(
        "INSERT INTO messages (id, agent_id, conversation_id, role, content, created_at, "
        "tags, metadata) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (
            uuid.uuid4().hex,
            owner,
            conversation_id,
            role,
            content,
            to_us(created_at),
            json.dumps(list(tags), ensure_ascii=False),
            dump_json(metadata),
        ),
    )
    pk = int(cursor.lastrowid or 0)
    conn.executemany(
        "INSERT INTO message_tags (tag, message_pk) VALUES (?, ?)", [(tag, pk) for tag in tags]
    )
    if vector is not None:
        conn.execute(
            "INSERT OR REPLACE INTO embeddings (domain, item, agent_id, vec) VALUES (?, ?, ?, ?)",
            (MESSAGES, pk, owner, vector.astype(np.float32).tobytes()),
        )
    row = conn.execute(
        f"SELECT {MESSAGE_COLUMNS} FROM {MESSAGE_FROM} WHERE m.pk = ?", (pk,)
    ).fetchone()
    return message_from_row(row)


def list_messages(
    conn: sqlite3.Connection,
    agent: str,
    *,
    conversation_id: str | None,
    limit: int,
    before: datetime | None,
) -> list[Message]:
    """The latest ``limit`` messages, oldest first."""
    me = agent_id(conn, agent, create=False)
    if me is None:
        return []
    where = "m.agent_id = ?"
    params: list[Any] = [me]
    if conversation_id is not None:
        where += " AND m.conversation_id = ?"
        params.append(conversation_id)
    if before is not None:
        where += " AND m.created_at < ?"
        params.append(to_us(before))
    rows = conn.execute(
        f"SELECT {MESSAGE_COLUMNS} FROM {MESSAGE_FROM} WHERE {where} "
        "ORDER BY m.created_at DESC, m.pk DESC LIMIT ?",
        (*params, limit),
    ).fetchall()
    return [message_from_row(row) for row in reversed(rows)]


def store_vectors(
    conn: sqlite3.Connection, domain: int, items: Sequence[tuple[int, str]], vectors: F32
) -> int:
    """Store the vector of each ``(pk, text)`` whose row still holds exactly ``text``
    (a newer write wins over a late embedding). Returns how many were stored."""
    table, column = ("blocks", "value") if domain == BLOCKS else ("messages", "content")
    stored = 0
    for (pk, text), vector in zip(items, vectors, strict=True):
        cursor = conn.execute(
            "INSERT OR REPLACE INTO embeddings (domain, item, agent_id, vec) "
            f"SELECT ?, pk, agent_id, ? FROM {table} WHERE pk = ? AND {column} = ?",
            (domain, vector.astype(np.float32).tobytes(), pk, text),
        )
        stored += cursor.rowcount
    return stored


def texts_to_embed(
    conn: sqlite3.Connection, domain: int, after_pk: int, limit: int, *, missing_only: bool
) -> list[tuple[int, str]]:
    """The next ``limit`` non-empty ``(pk, text)`` pairs of a domain with ``pk >
    after_pk`` (only those without a vector if ``missing_only``)."""
    table, column = ("blocks", "value") if domain == BLOCKS else ("messages", "content")
    missing = (
        f" AND NOT EXISTS (SELECT 1 FROM embeddings AS e WHERE e.domain = {domain} "
        "AND e.item = t.pk)"
        if missing_only
        else ""
    )
    rows = conn.execute(
        f"SELECT t.pk, t.{column} FROM {table} AS t WHERE t.pk > ? AND t.{column} != ''"
        f"{missing} ORDER BY t.pk LIMIT ?",
        (after_pk, limit),
    ).fetchall()
    return [(int(row[0]), cast(str, row[1])) for row in rows]
