"""SQL that writes a block's text on PostgreSQL: create, append, overwrite, replace a
passage, delete.

Each write checks the level the gate allowed, the expected version and the character
limit in its own statement (:mod:`._block_guard`), and drops or replaces the block's
vector with the text (:mod:`._vector_rows`).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any, LiteralString

import numpy as np
import numpy.typing as npt
from psycopg import errors

from satchel._errors import AlreadyExistsError, InvalidInputError
from satchel.memory._block_rules import (
    LevelChanged,
    check_limit,
    check_new_value,
    check_version,
    limit_error,
    replace_once,
)
from satchel.memory._models import Block, BlockKind, Permission, utc_now
from satchel.memory._permissions import effective_permission
from satchel.memory.postgres._block_guard import LEVEL, VERSION, explain, write_params
from satchel.memory.postgres._blocks import load
from satchel.memory.postgres._db import Conn
from satchel.memory.postgres._rows import (
    BLOCK_COLUMNS,
    block_from_row,
    dump_json,
    enc,
    enc_all,
)
from satchel.memory.postgres._vector_rows import (
    BLOCK_VECTORS,
    VECTOR_VALUE,
    with_side_row,
    with_vector_set,
)

__all__ = ["append", "delete", "insert", "replace", "set_text"]

F32 = npt.NDArray[np.float32]


async def insert(
    conn: Conn,
    *,
    agent: str,
    label: str,
    value: str,
    description: str,
    kind: BlockKind,
    permission: Permission,
    char_limit: int | None,
    pinned: bool,
    tags: tuple[str, ...],
    metadata: Mapping[str, Any] | None,
    hard_limit: bool,
    vector: F32 | None,
    model: str | None,
) -> tuple[int, Block]:
    """Create a block (with its vector, when given).

    Raises:
        AlreadyExistsError: The agent owns a block with that label.
        CharLimitError: ``value`` is over ``char_limit`` (hard limits).
    """
    check_new_value(agent, label, value, char_limit, hard=hard_limit)
    now = utc_now()
    try:
        cursor = await conn.execute(
            with_side_row(
                "INSERT INTO satchel_blocks AS b (id, agent, label, value, chars, description, "
                "kind, permission, char_limit, pinned, created_at, updated_at, tags, metadata) "
                "VALUES (%(id)s, %(agent)s, %(label)s, %(value)s, %(chars)s, "
                "%(description)s, %(kind)s, %(permission)s, %(char_limit)s, %(pinned)s, "
                f"%(now)s, %(now)s, %(tags)s, %(metadata)s) RETURNING {BLOCK_COLUMNS}",
                BLOCK_VECTORS,
            ),
            {
                "id": uuid.uuid4().hex,
                "agent": agent,
                "label": label,
                "value": enc(value),
                "chars": len(value),
                "description": enc(description),
                "kind": kind.value,
                "permission": permission.value,
                "char_limit": char_limit,
                "pinned": pinned,
                "now": now,
                "tags": enc_all(tags),
                "metadata": dump_json(metadata),
                "vec": vector,
                "model": model,
            },
        )
    except errors.UniqueViolation as exc:
        raise AlreadyExistsError(
            f"agent {agent!r} already has a block labelled {label!r}",
            details={"label": label},
        ) from exc
    row = await cursor.fetchone()
    assert row is not None
    return int(row[0]), block_from_row(row)


async def append(
    conn: Conn,
    pk: int,
    agent: str,
    level: Permission,
    text: str,
    separator: str,
    *,
    hard_limit: bool,
) -> Block:
    """Append in one ``UPDATE`` (no read-modify-write); the level and the limit are
    checked by the same statement on the newest row version. The stale vector is
    dropped with the write; the store embeds the new text afterwards."""
    first, more = len(text), len(separator) + len(text)
    added: LiteralString = "CASE WHEN b.chars = 0 THEN %(first)s ELSE %(more)s END"
    cursor = await conn.execute(
        with_vector_set(
            "UPDATE satchel_blocks AS b SET value = CASE WHEN b.chars = 0 THEN %(text)s "
            "ELSE b.value || %(sep)s || %(text)s END, "
            f"chars = b.chars + {added}, version = b.version + 1, updated_at = %(now)s "
            f"WHERE b.pk = %(pk)s AND {LEVEL} AND (NOT %(hard)s OR b.char_limit IS NULL "
            f"OR b.chars + {added} <= b.char_limit) RETURNING {BLOCK_COLUMNS}",
            BLOCK_VECTORS,
            "NULL",
        ),
        write_params(
            pk,
            agent,
            level,
            text=enc(text),
            sep=enc(separator),
            first=first,
            more=more,
            hard=hard_limit,
        ),
    )
    row = await cursor.fetchone()
    if row is None:
        await explain(
            conn,
            pk,
            agent,
            level,
            attempted=lambda b: b.chars + (more if b.chars else first),
            hard_limit=hard_limit,
        )
    block = block_from_row(row)
    check_limit(block, block.chars, hard=False)
    return block


async def set_text(
    conn: Conn,
    pk: int,
    agent: str,
    level: Permission,
    value: str,
    *,
    expected_version: int | None,
    description: str | None,
    hard_limit: bool,
    vector: F32 | None,
    model: str | None,
) -> Block:
    """Overwrite the value (and maybe the description), with its new vector."""
    cursor = await conn.execute(
        with_vector_set(
            "UPDATE satchel_blocks AS b SET value = %(value)s, chars = %(chars)s, "
            "description = coalesce(%(description)s, b.description), "
            "version = b.version + 1, updated_at = %(now)s "
            f"WHERE b.pk = %(pk)s AND {LEVEL} AND {VERSION} AND (NOT %(hard)s "
            f"OR b.char_limit IS NULL OR %(chars)s <= b.char_limit) RETURNING {BLOCK_COLUMNS}",
            BLOCK_VECTORS,
            VECTOR_VALUE,
        ),
        write_params(
            pk,
            agent,
            level,
            value=enc(value),
            chars=len(value),
            description=None if description is None else enc(description),
            expected=expected_version,
            hard=hard_limit,
            vec=vector,
            model=model,
        ),
    )
    row = await cursor.fetchone()
    if row is None:
        await explain(
            conn,
            pk,
            agent,
            level,
            expected_version=expected_version,
            attempted=lambda _: len(value),
            hard_limit=hard_limit,
        )
    block = block_from_row(row)
    check_limit(block, block.chars, hard=False)
    return block


async def replace(
    conn: Conn,
    pk: int,
    agent: str,
    level: Permission,
    old: str,
    new: str,
    *,
    expected_version: int | None,
    hard_limit: bool,
) -> Block:
    """Replace the single occurrence of ``old``, counted under the row lock.

    Raises:
        NotFoundError: ``old`` does not occur.
        MemoryStoreError: ``old`` occurs more than once.
    """
    if not old:
        raise InvalidInputError("the text to replace must not be empty")
    async with conn.transaction():
        before = await load(conn, pk, lock=True)
        if effective_permission(before, agent) != level:
            raise LevelChanged("the permission changed between the gate and the write")
        check_version(before, expected_version)
        value = replace_once(before, old, new)
        over = before.char_limit is not None and len(value) > before.char_limit
        if over and hard_limit:
            raise limit_error(before, len(value))
        cursor = await conn.execute(
            with_vector_set(
                "UPDATE satchel_blocks AS b SET value = %(value)s, chars = %(chars)s, "
                "version = b.version + 1, updated_at = %(now)s "
                f"WHERE b.pk = %(pk)s RETURNING {BLOCK_COLUMNS}",
                BLOCK_VECTORS,
                "NULL",
            ),
            write_params(pk, agent, level, value=enc(value), chars=len(value)),
        )
        row = await cursor.fetchone()
    assert row is not None
    block = block_from_row(row)
    check_limit(block, block.chars, hard=False)
    return block


async def delete(
    conn: Conn, pk: int, agent: str, level: Permission, *, expected_version: int | None
) -> Block:
    """Delete the block and return it as it was."""
    cursor = await conn.execute(
        f"DELETE FROM satchel_blocks AS b WHERE b.pk = %(pk)s AND {LEVEL} AND {VERSION} "
        f"RETURNING {BLOCK_COLUMNS}",
        write_params(pk, agent, level, expected=expected_version),
    )
    row = await cursor.fetchone()
    if row is None:
        await explain(conn, pk, agent, level, expected_version=expected_version)
    return block_from_row(row)
