"""SQL that changes a block's place and settings on PostgreSQL: its kind (one block,
or two swapped in one statement), its shares, and its permission, limit and
description.

The level and version checks are the writes' own (:mod:`._block_guard`).
"""

from __future__ import annotations

import json

from satchel._errors import MemoryStoreError, NotFoundError
from satchel.memory._block_rules import LevelChanged, configured
from satchel.memory._models import Block, BlockKind, Permission, Unset, utc_now
from satchel.memory._permissions import effective_permission
from satchel.memory.postgres._block_guard import LEVEL, VERSION, explain, write_params
from satchel.memory.postgres._blocks import load
from satchel.memory.postgres._db import Conn
from satchel.memory.postgres._rows import BLOCK_COLUMNS, block_from_row, enc, keyed_blocks

__all__ = ["configure", "set_kind", "set_share", "swap"]


async def set_kind(
    conn: Conn,
    pk: int,
    agent: str,
    level: Permission,
    kind: BlockKind,
    *,
    expected_version: int | None,
) -> Block:
    """Move the block to ``kind``."""
    cursor = await conn.execute(
        "UPDATE satchel_blocks AS b SET kind = %(kind)s, version = b.version + 1, "
        f"updated_at = %(now)s WHERE b.pk = %(pk)s AND {LEVEL} AND {VERSION} "
        f"RETURNING {BLOCK_COLUMNS}",
        write_params(pk, agent, level, kind=kind.value, expected=expected_version),
    )
    row = await cursor.fetchone()
    if row is None:
        await explain(conn, pk, agent, level, expected_version=expected_version)
    return block_from_row(row)


async def configure(
    conn: Conn,
    pk: int,
    agent: str,
    *,
    permission: Permission | None,
    char_limit: int | Unset | None,
    description: str | None,
) -> Block:
    """Change the block's permission, limit and description, and lower its shares
    above a new permission, under the row lock, for its owner ``agent``; a no-op keeps
    the version.

    Raises:
        NotFoundError: The block is gone (or is no longer ``agent``'s).
        CharLimitError: The block holds more than the new limit.
    """
    async with conn.transaction():
        before = await load(conn, pk, lock=True)
        if before.agent != agent:
            raise NotFoundError("the block was deleted meanwhile")
        after = configured(
            before, permission=permission, char_limit=char_limit, description=description
        )
        if after is None:
            return before
        cursor = await conn.execute(
            "UPDATE satchel_blocks AS b SET permission = %(permission)s, "
            "char_limit = %(char_limit)s, description = %(description)s, "
            "shares = %(shares)s::jsonb, version = b.version + 1, updated_at = %(now)s "
            f"WHERE b.pk = %(pk)s RETURNING {BLOCK_COLUMNS}",
            {
                "pk": pk,
                "permission": after.permission.value,
                "char_limit": after.char_limit,
                "description": enc(after.description),
                "shares": json.dumps({who: level.value for who, level in after.shares.items()}),
                "now": utc_now(),
            },
        )
        row = await cursor.fetchone()
    assert row is not None
    return block_from_row(row)


class _SwapFailed(MemoryStoreError):
    """Rolls a swap's transaction back; caught in this module, never raised out."""


async def swap(
    conn: Conn,
    agent: str,
    archive: tuple[int, Permission],
    load_: tuple[int, Permission],
) -> tuple[Block, Block]:
    """Archive one block and load the other in one statement: both or neither."""
    (pk_a, level_a), (pk_l, level_l) = archive, load_
    params = {
        "a": pk_a,
        "l": pk_l,
        "me": agent,
        "level_a": level_a.value,
        "level_l": level_l.value,
        "now": utc_now(),
    }
    level_a_sql = LEVEL.replace("%(level)s", "%(level_a)s")
    level_l_sql = LEVEL.replace("%(level)s", "%(level_l)s")
    try:
        async with conn.transaction():
            cursor = await conn.execute(
                "UPDATE satchel_blocks AS b SET kind = CASE WHEN b.pk = %(a)s THEN "
                "'archival' ELSE 'working' END, version = b.version + 1, updated_at = %(now)s "
                f"WHERE (b.pk = %(a)s AND {level_a_sql}) OR (b.pk = %(l)s AND {level_l_sql}) "
                f"RETURNING {BLOCK_COLUMNS}",
                params,
            )
            rows = keyed_blocks(await cursor.fetchall())
            if len(rows) != 2:
                raise _SwapFailed("the swap did not touch both blocks")
    except _SwapFailed:
        for pk, level in (archive, load_):
            block = await load(conn, pk)
            if effective_permission(block, agent) != level:
                raise LevelChanged("the permission changed meanwhile") from None
        raise LevelChanged("the blocks changed while they were swapped") from None
    by_pk = dict(rows)
    return by_pk[pk_a], by_pk[pk_l]


async def set_share(
    conn: Conn,
    pk: int,
    agent: str,
    level: Permission,
    recipient: str,
    permission: Permission | None,
) -> Block:
    """Share block ``pk`` with ``recipient`` at ``permission``, or unshare with
    ``None``.

    Raises:
        NotFoundError: Unsharing a block that is not shared with ``recipient``.
    """
    params = write_params(
        pk, agent, level, recipient=recipient, permission=permission and permission.value
    )
    if permission is None:
        cursor = await conn.execute(
            "UPDATE satchel_blocks AS b SET shares = b.shares - %(recipient)s::text, "
            "version = b.version + 1, updated_at = %(now)s "
            f"WHERE b.pk = %(pk)s AND {LEVEL} AND b.shares ? %(recipient)s "
            f"RETURNING {BLOCK_COLUMNS}",
            params,
        )
    else:
        cursor = await conn.execute(
            "UPDATE satchel_blocks AS b SET shares = b.shares || "
            "jsonb_build_object(%(recipient)s::text, %(permission)s::text), "
            "version = b.version + 1, updated_at = %(now)s "
            f"WHERE b.pk = %(pk)s AND {LEVEL} RETURNING {BLOCK_COLUMNS}",
            params,
        )
    row = await cursor.fetchone()
    if row is None:
        block = await load(conn, pk)
        if permission is None and effective_permission(block, agent) == level:
            raise NotFoundError(
                f"block {block.label!r} is not shared with {recipient!r}",
                details={"label": block.label, "recipient": recipient},
            )
        await explain(conn, pk, agent, level)
    return block_from_row(row)
