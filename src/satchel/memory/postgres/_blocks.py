"""SQL for blocks on PostgreSQL: resolve, create, write, kind changes, sharing.

Concurrency design. The permission level the gate allowed is re-checked *inside* the
writing statement, against the block row itself: a block's shares live in its own row
(``shares jsonb``), so the check ``level = CASE WHEN owner THEN permission ELSE
shares ->> agent END`` is part of the ``WHERE`` clause. Under READ COMMITTED an
``UPDATE`` that waits for another writer's row lock re-evaluates its ``WHERE`` on the
newest row version, so the level, the expected version and the character limit are
always checked against the row the write actually changes. Appends are one such
``UPDATE ... SET value = value || ...``: concurrent appends from any number of
processes serialise on the row lock and all land.

When a conditional write changes no row, :func:`_explain` reads the block to say why:
it is gone (:class:`NotFoundError`), the level changed (:class:`LevelChanged`, the
store runs the gate again), the version moved (:class:`VersionConflictError`), or the
text would pass the limit (:class:`CharLimitError`).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Collection, Mapping
from typing import Any, LiteralString, NoReturn

import numpy as np
import numpy.typing as npt
from psycopg import errors

from satchel._errors import AlreadyExistsError, InvalidInputError, MemoryStoreError, NotFoundError
from satchel.memory._block_rules import (
    LevelChanged,
    as_seen_by,
    check_limit,
    check_new_value,
    check_version,
    configured,
    limit_error,
    only_match,
    replace_once,
)
from satchel.memory._models import Block, BlockKind, Permission, Unset, utc_now
from satchel.memory._permissions import effective_permission
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

__all__ = [
    "append",
    "configure",
    "delete",
    "insert",
    "list_visible",
    "load",
    "replace",
    "resolve",
    "resolve_id",
    "set_kind",
    "set_share",
    "set_text",
    "swap",
]

F32 = npt.NDArray[np.float32]

_LEVEL: LiteralString = (
    "(CASE WHEN b.agent = %(me)s THEN b.permission ELSE b.shares ->> %(me)s END) = %(level)s"
)
_VERSION: LiteralString = "(%(expected)s::integer IS NULL OR b.version = %(expected)s)"
_KIND_ORDER: LiteralString = (
    "CASE b.kind WHEN 'core' THEN 0 WHEN 'working' THEN 1 ELSE 2 END, "
    'b.agent COLLATE "C", b.label COLLATE "C"'
)


def _rows(rows: list[tuple[Any, ...]]) -> list[tuple[int, Block]]:
    return [(int(row[0]), block_from_row(row)) for row in rows]


async def load(conn: Conn, pk: int, *, lock: bool = False) -> Block:
    """The block with primary key ``pk`` (locked for update if ``lock``).

    Raises:
        NotFoundError: It was deleted.
    """
    query: LiteralString = f"SELECT {BLOCK_COLUMNS} FROM satchel_blocks AS b WHERE b.pk = %s"
    if lock:
        query += " FOR UPDATE"
    row = await (await conn.execute(query, (pk,))).fetchone()
    if row is None:
        raise NotFoundError("the block was deleted meanwhile")
    return block_from_row(row)


async def resolve(conn: Conn, agent: str, label: str) -> tuple[int, Block]:
    """Find the block ``agent`` means by ``label`` (bare or ``owner/label``).

    The agent's own block wins; otherwise a block shared with it under that label; an
    ``owner/label`` name picks a shared block explicitly.

    Raises:
        NotFoundError: Nothing visible to ``agent`` has that name, or a bare label is
            shared by two owners (the message lists the ``owner/label`` names).
    """
    found: list[tuple[int, Block]] = []
    if "\x00" not in label:
        if "/" in label:
            owner, _, bare = label.partition("/")
            cursor = await conn.execute(
                f"SELECT {BLOCK_COLUMNS} FROM satchel_blocks AS b "
                "WHERE b.agent = %(owner)s AND b.label = %(label)s "
                "AND (b.agent = %(me)s OR b.shares ? %(me)s)",
                {"owner": owner, "label": bare, "me": agent},
            )
        else:
            cursor = await conn.execute(
                f"SELECT {BLOCK_COLUMNS} FROM satchel_blocks AS b "
                "WHERE (b.agent = %(me)s AND b.label = %(label)s) "
                "OR (b.shares ? %(me)s AND b.label = %(label)s) "
                'ORDER BY b.agent COLLATE "C"',
                {"label": label, "me": agent},
            )
        found = _rows(await cursor.fetchall())
        own = [item for item in found if item[1].agent == agent]
        found = own or found
    return only_match(found, agent, label)


async def resolve_id(conn: Conn, agent: str, block_id: str) -> Block:
    """The block with id ``block_id``, if ``agent`` owns it or it is shared with it.

    Raises:
        NotFoundError: No block visible to ``agent`` has that id.
    """
    found: list[tuple[int, Block]] = []
    if "\x00" not in block_id:  # PostgreSQL text cannot hold NUL: no such id
        cursor = await conn.execute(
            f"SELECT {BLOCK_COLUMNS} FROM satchel_blocks AS b "
            "WHERE b.id = %(id)s AND (b.agent = %(me)s OR b.shares ? %(me)s)",
            {"id": block_id, "me": agent},
        )
        found = _rows(await cursor.fetchall())
    if not found:
        raise NotFoundError(
            f"no block with id {block_id[:80]!r} for agent {agent!r}", details={"id": block_id}
        )
    return as_seen_by(found[0][1], agent)


async def list_visible(conn: Conn, agent: str, kinds: Collection[BlockKind] | None) -> list[Block]:
    """Every block ``agent`` owns or that is shared with it."""
    where: LiteralString = "(b.agent = %(me)s OR b.shares ? %(me)s)"
    params: dict[str, Any] = {"me": agent}
    if kinds is not None:
        where += " AND b.kind = ANY(%(kinds)s)"
        params["kinds"] = [BlockKind(kind).value for kind in kinds]
    cursor = await conn.execute(
        f"SELECT {BLOCK_COLUMNS} FROM satchel_blocks AS b WHERE {where} ORDER BY {_KIND_ORDER}",
        params,
    )
    return [as_seen_by(block, agent) for _, block in _rows(await cursor.fetchall())]


async def _explain(
    conn: Conn,
    pk: int,
    agent: str,
    level: Permission,
    *,
    expected_version: int | None = None,
    attempted: Callable[[Block], int] | None = None,
    hard_limit: bool = True,
) -> NoReturn:
    """Raise the reason a conditional write on block ``pk`` changed no row."""
    block = await load(conn, pk)
    if effective_permission(block, agent) != level:
        raise LevelChanged("the permission changed between the gate and the write")
    check_version(block, expected_version)
    if attempted is not None and hard_limit and block.char_limit is not None:
        chars = attempted(block)
        if chars > block.char_limit:
            raise limit_error(block, chars)
    raise LevelChanged("the block changed while it was written; run the gate again")


def _write_params(pk: int, agent: str, level: Permission, **more: Any) -> dict[str, Any]:
    return {"pk": pk, "me": agent, "level": level.value, "now": utc_now(), **more}


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
            f"WHERE b.pk = %(pk)s AND {_LEVEL} AND (NOT %(hard)s OR b.char_limit IS NULL "
            f"OR b.chars + {added} <= b.char_limit) RETURNING {BLOCK_COLUMNS}",
            BLOCK_VECTORS,
            "NULL",
        ),
        _write_params(
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
        await _explain(
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
            f"WHERE b.pk = %(pk)s AND {_LEVEL} AND {_VERSION} AND (NOT %(hard)s "
            f"OR b.char_limit IS NULL OR %(chars)s <= b.char_limit) RETURNING {BLOCK_COLUMNS}",
            BLOCK_VECTORS,
            VECTOR_VALUE,
        ),
        _write_params(
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
        await _explain(
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
            _write_params(pk, agent, level, value=enc(value), chars=len(value)),
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
        f"DELETE FROM satchel_blocks AS b WHERE b.pk = %(pk)s AND {_LEVEL} AND {_VERSION} "
        f"RETURNING {BLOCK_COLUMNS}",
        _write_params(pk, agent, level, expected=expected_version),
    )
    row = await cursor.fetchone()
    if row is None:
        await _explain(conn, pk, agent, level, expected_version=expected_version)
    return block_from_row(row)


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
        f"updated_at = %(now)s WHERE b.pk = %(pk)s AND {_LEVEL} AND {_VERSION} "
        f"RETURNING {BLOCK_COLUMNS}",
        _write_params(pk, agent, level, kind=kind.value, expected=expected_version),
    )
    row = await cursor.fetchone()
    if row is None:
        await _explain(conn, pk, agent, level, expected_version=expected_version)
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
    level_a_sql = _LEVEL.replace("%(level)s", "%(level_a)s")
    level_l_sql = _LEVEL.replace("%(level)s", "%(level_l)s")
    try:
        async with conn.transaction():
            cursor = await conn.execute(
                "UPDATE satchel_blocks AS b SET kind = CASE WHEN b.pk = %(a)s THEN "
                "'archival' ELSE 'working' END, version = b.version + 1, updated_at = %(now)s "
                f"WHERE (b.pk = %(a)s AND {level_a_sql}) OR (b.pk = %(l)s AND {level_l_sql}) "
                f"RETURNING {BLOCK_COLUMNS}",
                params,
            )
            rows = _rows(await cursor.fetchall())
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
    params = _write_params(
        pk, agent, level, recipient=recipient, permission=permission and permission.value
    )
    if permission is None:
        cursor = await conn.execute(
            "UPDATE satchel_blocks AS b SET shares = b.shares - %(recipient)s::text, "
            "version = b.version + 1, updated_at = %(now)s "
            f"WHERE b.pk = %(pk)s AND {_LEVEL} AND b.shares ? %(recipient)s "
            f"RETURNING {BLOCK_COLUMNS}",
            params,
        )
    else:
        cursor = await conn.execute(
            "UPDATE satchel_blocks AS b SET shares = b.shares || "
            "jsonb_build_object(%(recipient)s::text, %(permission)s::text), "
            "version = b.version + 1, updated_at = %(now)s "
            f"WHERE b.pk = %(pk)s AND {_LEVEL} RETURNING {BLOCK_COLUMNS}",
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
        await _explain(conn, pk, agent, level)
    return block_from_row(row)
