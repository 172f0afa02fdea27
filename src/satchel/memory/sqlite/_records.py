"""Blocking SQL for the operator's tools: listing agents, exporting and restoring.

:func:`restore` writes records exactly as given (ids, versions, timestamps, shares)
without the permission gate; the store runs it in one transaction per batch.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from satchel.memory._models import Block, ImportReport, Message, OnConflict
from satchel.memory._transfer import conflict_error, foreign_id_error
from satchel.memory.sqlite._messages import BLOCKS, MESSAGES
from satchel.memory.sqlite._rows import (
    BLOCK_COLUMNS,
    BLOCK_FROM,
    MESSAGE_COLUMNS,
    MESSAGE_FROM,
    agent_id,
    block_from_row,
    dump_json,
    message_from_row,
    shares_of,
    to_us,
)

__all__ = ["BlockKey", "MessageKey", "export_blocks", "export_messages", "list_agents", "restore"]

F32 = npt.NDArray[np.float32]
BlockKey = tuple[str, str]
"""Where a page of blocks ends: ``(owner, label)``."""
MessageKey = tuple[str, int, int]
"""Where a page of messages ends: ``(owner, created_at in µs, pk)``."""


def list_agents(conn: sqlite3.Connection) -> list[str]:
    """Every agent owning a block or a message, by name."""
    rows = conn.execute(
        "SELECT a.name FROM agents AS a WHERE EXISTS (SELECT 1 FROM blocks AS b "
        "WHERE b.agent_id = a.id) OR EXISTS (SELECT 1 FROM messages AS m "
        "WHERE m.agent_id = a.id) ORDER BY a.name"
    ).fetchall()
    return [str(row[0]) for row in rows]


def export_blocks(
    conn: sqlite3.Connection, agent: str | None, after: BlockKey | None, limit: int
) -> tuple[list[Block], BlockKey | None]:
    """The next ``limit`` blocks after ``after`` in (owner, label) order, and the key
    of the last one."""
    where, params = ["1"], list[Any]()
    if agent is not None:
        where.append("a.name = ?")
        params.append(agent)
    if after is not None:
        where.append("(a.name, b.label) > (?, ?)")
        params.extend(after)
    rows = conn.execute(
        f"SELECT {BLOCK_COLUMNS} FROM {BLOCK_FROM} WHERE {' AND '.join(where)} "
        "ORDER BY a.name, b.label LIMIT ?",
        (*params, limit),
    ).fetchall()
    shares = shares_of(conn, [int(row[0]) for row in rows])
    blocks = [block_from_row(row, shares[int(row[0])]) for row in rows]
    return blocks, ((rows[-1][2], rows[-1][3]) if rows else None)


def export_messages(
    conn: sqlite3.Connection, agent: str | None, after: MessageKey | None, limit: int
) -> tuple[list[Message], MessageKey | None]:
    """The next ``limit`` messages after ``after`` in (owner, time, pk) order, and the
    key of the last one."""
    where, params = ["1"], list[Any]()
    if agent is not None:
        where.append("a.name = ?")
        params.append(agent)
    if after is not None:
        where.append("(a.name, m.created_at, m.pk) > (?, ?, ?)")
        params.extend(after)
    rows = conn.execute(
        f"SELECT {MESSAGE_COLUMNS} FROM {MESSAGE_FROM} WHERE {' AND '.join(where)} "
        "ORDER BY a.name, m.created_at, m.pk LIMIT ?",
        (*params, limit),
    ).fetchall()
    last = (str(rows[-1][2]), int(rows[-1][6]), int(rows[-1][0])) if rows else None
    return [message_from_row(row) for row in rows], last


def _conflicts(conn: sqlite3.Connection, record: Block | Message) -> tuple[str, list[int]]:
    """The table and rows ``record`` would replace.

    Raises:
        InvalidInputError: its id belongs to another agent's record.
    """
    if isinstance(record, Block):
        # Two indexed lookups: with OR across the join SQLite scans every block, which
        # made a large import quadratic.
        rows = conn.execute(
            f"SELECT b.pk, a.name FROM {BLOCK_FROM} WHERE b.id = ? UNION "
            f"SELECT b.pk, a.name FROM {BLOCK_FROM} WHERE a.name = ? AND b.label = ?",
            (record.id, record.agent, record.label),
        ).fetchall()
        table = "blocks"
    else:
        rows = conn.execute(
            f"SELECT m.pk, a.name FROM {MESSAGE_FROM} WHERE m.id = ?", (record.id,)
        ).fetchall()
        table = "messages"
    if any(str(row[1]) != record.agent for row in rows):
        raise foreign_id_error(record)
    return table, [int(row[0]) for row in rows]


def _insert_block(conn: sqlite3.Connection, block: Block) -> int:
    cursor = conn.execute(
        "INSERT INTO blocks (id, agent_id, label, value, chars, description, kind, "
        "permission, char_limit, pinned, version, created_at, updated_at, tags, metadata) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            block.id,
            agent_id(conn, block.agent, create=True),
            block.label,
            block.value,
            block.chars,
            block.description,
            block.kind.value,
            block.permission.value,
            block.char_limit,
            int(block.pinned),
            block.version,
            to_us(block.created_at),
            to_us(block.updated_at),
            json.dumps(list(block.tags), ensure_ascii=False),
            dump_json(block.metadata),
        ),
    )
    pk = int(cursor.lastrowid or 0)
    conn.executemany(
        "INSERT INTO block_tags (tag, block_pk) VALUES (?, ?)", [(t, pk) for t in block.tags]
    )
    conn.executemany(
        "INSERT INTO shares (block_pk, agent_id, permission) VALUES (?, ?, ?)",
        [
            (pk, agent_id(conn, name, create=True), level.value)
            for name, level in block.shares.items()
        ],
    )
    return pk


def _insert_message(conn: sqlite3.Connection, message: Message) -> int:
    cursor = conn.execute(
        "INSERT INTO messages (id, agent_id, conversation_id, role, content, created_at, "
        "tags, metadata) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (
            message.id,
            agent_id(conn, message.agent, create=True),
            message.conversation_id,
            message.role,
            message.content,
            to_us(message.created_at),
            json.dumps(list(message.tags), ensure_ascii=False),
            dump_json(message.metadata),
        ),
    )
    pk = int(cursor.lastrowid or 0)
    conn.executemany(
        "INSERT INTO message_tags (tag, message_pk) VALUES (?, ?)",
        [(t, pk) for t in message.tags],
    )
    return pk


def _store_vector(conn: sqlite3.Connection, domain: int, pk: int, vector: F32) -> None:
    """The vector of the row ``pk`` this transaction just wrote. Unlike
    :func:`~satchel.memory.sqlite._messages.store_vectors`, no check that the row still
    holds the embedded text (nothing else can write it meanwhile), so a large value is
    not bound and compared a second time."""
    table = "blocks" if domain == BLOCKS else "messages"
    conn.execute(
        "INSERT OR REPLACE INTO embeddings (domain, item, agent_id, vec) "
        f"SELECT ?, pk, agent_id, ? FROM {table} WHERE pk = ?",
        (domain, vector.astype(np.float32).tobytes(), pk),
    )


def restore(
    conn: sqlite3.Connection,
    records: Sequence[Block | Message],
    vectors: Sequence[F32 | None],
    on_conflict: OnConflict,
) -> ImportReport:
    """Write checked ``records`` (with their vectors) exactly as given, inside the
    caller's transaction.

    Raises:
        AlreadyExistsError: A record conflicts and ``on_conflict`` is ``"error"``.
    """
    blocks = messages = skipped = 0
    for record, vector in zip(records, vectors, strict=True):
        table, existing = _conflicts(conn, record)
        if existing:
            if on_conflict == "skip":
                skipped += 1
                continue
            if on_conflict == "error":
                raise conflict_error(record)
            conn.executemany(f"DELETE FROM {table} WHERE pk = ?", [(pk,) for pk in existing])
        if isinstance(record, Block):
            pk = _insert_block(conn, record)
            blocks += 1
            if vector is not None:
                _store_vector(conn, BLOCKS, pk, vector)
        else:
            pk = _insert_message(conn, record)
            messages += 1
            if vector is not None:
                _store_vector(conn, MESSAGES, pk, vector)
    return ImportReport(blocks=blocks, messages=messages, skipped=skipped)
