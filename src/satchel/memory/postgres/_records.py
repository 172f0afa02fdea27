"""SQL for the operator's tools on PostgreSQL: listing agents, exporting, restoring.

:func:`restore` writes records exactly as given (ids, versions, timestamps, shares)
without the permission gate; the store runs it in one transaction per batch.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any, LiteralString

import numpy as np
import numpy.typing as npt
from psycopg import errors

from satchel.memory._models import Block, ImportReport, Message, OnConflict
from satchel.memory._transfer import conflict_error, foreign_id_error
from satchel.memory.postgres._db import Conn
from satchel.memory.postgres._rows import (
    BLOCK_COLUMNS,
    MESSAGE_COLUMNS,
    block_from_row,
    dump_json,
    enc,
    enc_all,
    message_from_row,
)
from satchel.memory.postgres._vector_rows import BLOCK_VECTORS, MESSAGE_VECTORS, with_side_row

__all__ = ["BlockKey", "MessageKey", "export_blocks", "export_messages", "list_agents", "restore"]

F32 = npt.NDArray[np.float32]
BlockKey = tuple[str, str]
"""Where a page of blocks ends: ``(owner, label)``."""
MessageKey = tuple[str, datetime, int]
"""Where a page of messages ends: ``(owner, created_at, pk)``."""


async def list_agents(conn: Conn) -> list[str]:
    """Every agent owning a block or a message, by name (byte order, as SQLite)."""
    cursor = await conn.execute(
        "SELECT agent FROM (SELECT agent FROM satchel_blocks UNION "
        'SELECT agent FROM satchel_messages) AS owners ORDER BY agent COLLATE "C"'
    )
    return [str(row[0]) for row in await cursor.fetchall()]


async def export_blocks(
    conn: Conn, agent: str | None, after: BlockKey | None, limit: int
) -> tuple[list[Block], BlockKey | None]:
    """The next ``limit`` blocks after ``after`` in (owner, label) order, and the key
    of the last one."""
    where: LiteralString = "(%(agent)s::text IS NULL OR b.agent = %(agent)s)"
    params: dict[str, Any] = {"agent": agent, "limit": limit}
    if after is not None:
        where += (
            ' AND (b.agent COLLATE "C" > %(a)s OR (b.agent = %(a)s '
            'AND b.label COLLATE "C" > %(l)s))'
        )
        params.update(a=after[0], l=after[1])
    cursor = await conn.execute(
        f"SELECT {BLOCK_COLUMNS} FROM satchel_blocks AS b WHERE {where} "
        'ORDER BY b.agent COLLATE "C", b.label COLLATE "C" LIMIT %(limit)s',
        params,
    )
    rows = await cursor.fetchall()
    return [block_from_row(row) for row in rows], ((rows[-1][2], rows[-1][3]) if rows else None)


async def export_messages(
    conn: Conn, agent: str | None, after: MessageKey | None, limit: int
) -> tuple[list[Message], MessageKey | None]:
    """The next ``limit`` messages after ``after`` in (owner, time, pk) order, and the
    key of the last one."""
    where: LiteralString = "(%(agent)s::text IS NULL OR m.agent = %(agent)s)"
    params: dict[str, Any] = {"agent": agent, "limit": limit}
    if after is not None:
        where += (
            ' AND (m.agent COLLATE "C" > %(a)s OR (m.agent = %(a)s '
            "AND (m.created_at, m.pk) > (%(t)s, %(pk)s)))"
        )
        params.update(a=after[0], t=after[1], pk=after[2])
    cursor = await conn.execute(
        f"SELECT {MESSAGE_COLUMNS} FROM satchel_messages AS m WHERE {where} "
        'ORDER BY m.agent COLLATE "C", m.created_at, m.pk LIMIT %(limit)s',
        params,
    )
    rows = await cursor.fetchall()
    last = (str(rows[-1][2]), rows[-1][6], int(rows[-1][0])) if rows else None
    return [message_from_row(row) for row in rows], last


async def _conflicts(conn: Conn, record: Block | Message) -> list[int]:
    """The rows ``record`` would replace, locked.

    Raises:
        InvalidInputError: its id belongs to another agent's record.
    """
    if isinstance(record, Block):
        cursor = await conn.execute(
            "SELECT pk, agent FROM satchel_blocks "
            "WHERE id = %s OR (agent = %s AND label = %s) FOR UPDATE",
            (record.id, record.agent, record.label),
        )
    else:
        cursor = await conn.execute(
            "SELECT pk, agent FROM satchel_messages WHERE id = %s FOR UPDATE", (record.id,)
        )
    rows = await cursor.fetchall()
    if any(str(row[1]) != record.agent for row in rows):
        raise foreign_id_error(record)
    return [int(row[0]) for row in rows]


async def _insert_block(conn: Conn, block: Block, vector: F32 | None, model: str | None) -> None:
    await conn.execute(
        with_side_row(
            "INSERT INTO satchel_blocks (id, agent, label, value, chars, description, kind, "
            "permission, char_limit, pinned, version, created_at, updated_at, tags, metadata, "
            "shares) VALUES (%(id)s, %(agent)s, %(label)s, %(value)s, %(chars)s, "
            "%(description)s, %(kind)s, %(permission)s, %(char_limit)s, %(pinned)s, "
            "%(version)s, %(created)s, %(updated)s, %(tags)s, %(metadata)s, "
            "%(shares)s::jsonb) RETURNING pk",
            BLOCK_VECTORS,
        ),
        {
            "id": block.id,
            "agent": block.agent,
            "label": block.label,
            "value": enc(block.value),
            "chars": block.chars,
            "description": enc(block.description),
            "kind": block.kind.value,
            "permission": block.permission.value,
            "char_limit": block.char_limit,
            "pinned": block.pinned,
            "version": block.version,
            "created": block.created_at,
            "updated": block.updated_at,
            "tags": enc_all(block.tags),
            "metadata": dump_json(block.metadata),
            "shares": json.dumps({name: level.value for name, level in block.shares.items()}),
            "vec": vector,
            "model": model if vector is not None else None,
        },
    )


async def _insert_message(
    conn: Conn, message: Message, vector: F32 | None, model: str | None
) -> None:
    await conn.execute(
        with_side_row(
            "INSERT INTO satchel_messages (id, agent, conversation_id, role, content, "
            "created_at, tags, metadata) VALUES (%(id)s, %(agent)s, %(conversation)s, "
            "%(role)s, %(content)s, %(created)s, %(tags)s, %(metadata)s) RETURNING pk",
            MESSAGE_VECTORS,
        ),
        {
            "id": message.id,
            "agent": message.agent,
            "conversation": enc(message.conversation_id),
            "role": message.role,
            "content": enc(message.content),
            "created": message.created_at,
            "tags": enc_all(message.tags),
            "metadata": dump_json(message.metadata),
            "vec": vector,
            "model": model if vector is not None else None,
        },
    )


async def restore(
    conn: Conn,
    records: Sequence[Block | Message],
    vectors: Sequence[F32 | None],
    on_conflict: OnConflict,
    model: str | None,
) -> ImportReport:
    """Write checked ``records`` (with their vectors, computed with ``model``) exactly
    as given, in one transaction.

    Raises:
        AlreadyExistsError: A record conflicts and ``on_conflict`` is ``"error"``.
    """
    blocks = messages = skipped = 0
    async with conn.transaction():
        for record, vector in zip(records, vectors, strict=True):
            existing = await _conflicts(conn, record)
            if existing:
                if on_conflict == "skip":
                    skipped += 1
                    continue
                if on_conflict == "error":
                    raise conflict_error(record)
                table: LiteralString = (
                    "satchel_blocks" if isinstance(record, Block) else "satchel_messages"
                )
                await conn.execute(f"DELETE FROM {table} WHERE pk = ANY(%s)", (existing,))
            try:  # a concurrent writer may have taken the id or label since the check
                if isinstance(record, Block):
                    await _insert_block(conn, record, vector, model)
                else:
                    await _insert_message(conn, record, vector, model)
            except errors.UniqueViolation as exc:
                raise conflict_error(record) from exc
            if isinstance(record, Block):
                blocks += 1
            else:
                messages += 1
    return ImportReport(blocks=blocks, messages=messages, skipped=skipped)
