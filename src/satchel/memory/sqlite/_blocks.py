"""Blocking SQL for blocks: resolve, create, write, kind changes, sharing.

Every function takes a connection already inside a transaction (the store runs them
through :class:`~satchel.memory.sqlite._db.Database`). Writes that depend on the
permission checked before the transaction call :func:`check_level` first, so a
permission changed in between is noticed instead of bypassed.
"""

from __future__ import annotations

import json
import sqlite3
import uuid
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from satchel._errors import AlreadyExistsError, InvalidInputError, NotFoundError
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
from satchel.memory.sqlite._rows import (
    BLOCK_COLUMNS,
    BLOCK_FROM,
    agent_id,
    block_from_row,
    dump_json,
    placeholders,
    shares_of,
    to_us,
)

__all__ = [
    "append",
    "check_level",
    "configure",
    "delete",
    "insert",
    "list_visible",
    "load",
    "replace",
    "resolve",
    "resolve_id",
    "set_kinds",
    "set_share",
    "set_text",
]

_KIND_ORDER = "CASE b.kind WHEN 'core' THEN 0 WHEN 'working' THEN 1 ELSE 2 END"


def load(conn: sqlite3.Connection, pk: int) -> Block:
    """The block with primary key ``pk``.

    Raises:
        NotFoundError: It was deleted.
    """
    row = conn.execute(f"SELECT {BLOCK_COLUMNS} FROM {BLOCK_FROM} WHERE b.pk = ?", (pk,)).fetchone()
    if row is None:
        raise NotFoundError("the block was deleted meanwhile")
    return block_from_row(row, shares_of(conn, [pk])[pk])


def _load_many(
    conn: sqlite3.Connection, where: str, params: Sequence[Any]
) -> list[tuple[int, Block]]:
    rows = conn.execute(
        f"SELECT {BLOCK_COLUMNS} FROM {BLOCK_FROM} WHERE {where} "
        f"ORDER BY {_KIND_ORDER}, a.name, b.label",
        tuple(params),
    ).fetchall()
    shares = shares_of(conn, [int(row[0]) for row in rows])
    return [(int(row[0]), block_from_row(row, shares[int(row[0])])) for row in rows]


def resolve(conn: sqlite3.Connection, agent: str, label: str) -> tuple[int, Block]:
    """Find the block ``agent`` means by ``label`` (bare or ``owner/label``).

    The agent's own block wins; otherwise a block shared with it under that label; an
    ``owner/label`` name picks a shared block explicitly.

    Raises:
        NotFoundError: Nothing visible to ``agent`` has that name, or a bare label is
            shared by two owners (the message lists the ``owner/label`` names).
    """
    me = agent_id(conn, agent, create=False)
    if me is None:
        raise NotFoundError(f"no block {label!r} for agent {agent!r}", details={"label": label})
    if "/" in label:
        owner, _, bare = label.partition("/")
        found = _load_many(
            conn,
            "a.name = ? AND b.label = ? AND (b.agent_id = ? OR EXISTS "
            "(SELECT 1 FROM shares AS s WHERE s.block_pk = b.pk AND s.agent_id = ?))",
            (owner, bare, me, me),
        )
    else:
        found = _load_many(conn, "b.agent_id = ? AND b.label = ?", (me, label))
        if not found:
            found = _load_many(
                conn,
                "b.label = ? AND b.pk IN (SELECT block_pk FROM shares WHERE agent_id = ?)",
                (label, me),
            )
    return only_match(found, agent, label)


def resolve_id(conn: sqlite3.Connection, agent: str, block_id: str) -> Block:
    """The block with id ``block_id``, if ``agent`` owns it or it is shared with it.

    Raises:
        NotFoundError: No block visible to ``agent`` has that id.
    """
    me = agent_id(conn, agent, create=False)
    found = (
        _load_many(
            conn,
            "b.id = ? AND (b.agent_id = ? OR b.pk IN "
            "(SELECT block_pk FROM shares WHERE agent_id = ?))",
            (block_id, me, me),
        )
        if me is not None
        else []
    )
    if not found:
        raise NotFoundError(
            f"no block with id {block_id[:80]!r} for agent {agent!r}", details={"id": block_id}
        )
    return as_seen_by(found[0][1], agent)


def list_visible(
    conn: sqlite3.Connection, agent: str, kinds: Collection[BlockKind] | None
) -> list[Block]:
    """Every block ``agent`` owns or that is shared with it."""
    me = agent_id(conn, agent, create=False)
    if me is None:
        return []
    where = "(b.agent_id = ? OR b.pk IN (SELECT block_pk FROM shares WHERE agent_id = ?))"
    params: list[Any] = [me, me]
    if kinds is not None:
        kinds = list(kinds)
        where += f" AND b.kind IN ({placeholders(len(kinds))})"
        params.extend(BlockKind(kind).value for kind in kinds)
    return [as_seen_by(block, agent) for _, block in _load_many(conn, where, params)]


def check_level(conn: sqlite3.Connection, pk: int, agent: str, level: Permission) -> None:
    """Re-check, inside the write transaction, that ``agent`` still acts on block ``pk``
    at ``level``.

    Raises:
        NotFoundError: The block is gone.
        LevelChanged: The level is different now (the caller re-runs the gate).
    """
    row = conn.execute(
        "SELECT a.name, b.permission, "
        "(SELECT s.permission FROM shares AS s JOIN agents AS r ON r.id = s.agent_id "
        " WHERE s.block_pk = b.pk AND r.name = ?) "
        "FROM blocks AS b JOIN agents AS a ON a.id = b.agent_id WHERE b.pk = ?",
        (agent, pk),
    ).fetchone()
    if row is None:
        raise NotFoundError("the block was deleted meanwhile")
    current = row[1] if row[0] == agent else row[2]
    if current != level.value:
        raise LevelChanged("the permission changed between the gate and the write")


def insert(
    conn: sqlite3.Connection,
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
) -> tuple[int, Block]:
    """Create a block.

    Raises:
        AlreadyExistsError: The agent owns a block with that label.
        CharLimitError: ``value`` is over ``char_limit`` (hard limits).
    """
    check_new_value(agent, label, value, char_limit, hard=hard_limit)
    owner = agent_id(conn, agent, create=True)
    now = to_us(utc_now())
    block_id = uuid.uuid4().hex
    tags_json, metadata_json = json.dumps(list(tags), ensure_ascii=False), dump_json(metadata)
    try:
        cursor = conn.execute(
            "INSERT INTO blocks (id, agent_id, label, value, chars, description, kind, "
            "permission, char_limit, pinned, version, created_at, updated_at, tags, metadata) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?, ?, ?)",
            (
                block_id,
                owner,
                label,
                value,
                len(value),
                description,
                kind.value,
                permission.value,
                char_limit,
                int(pinned),
                now,
                now,
                tags_json,
                metadata_json,
            ),
        )
    except sqlite3.IntegrityError as exc:
        raise AlreadyExistsError(
            f"agent {agent!r} already has a block labelled {label!r}",
            details={"label": label},
        ) from exc
    pk = int(cursor.lastrowid or 0)
    conn.executemany(
        "INSERT INTO block_tags (tag, block_pk) VALUES (?, ?)", [(tag, pk) for tag in tags]
    )
    # The block as written, built from what was written rather than read back: reading
    # would copy a large value out of the database a second time.
    row = (pk, block_id, agent, label, value, description, kind.value, permission.value,
           char_limit, int(pinned), 1, now, now, tags_json, metadata_json)  # fmt: skip
    return pk, block_from_row(row, {})


def append(
    conn: sqlite3.Connection, pk: int, text: str, separator: str, *, hard_limit: bool
) -> Block:
    """Append in one ``UPDATE`` statement (no read-modify-write), enforcing the limit in
    the same statement."""
    added_first, added_more = len(text), len(separator) + len(text)
    row = conn.execute(
        "UPDATE blocks SET "
        " value = CASE WHEN chars = 0 THEN ?1 ELSE value || ?2 || ?1 END, "
        " chars = chars + CASE WHEN chars = 0 THEN ?3 ELSE ?4 END, "
        " version = version + 1, updated_at = ?5 "
        "WHERE pk = ?6 AND (?7 = 0 OR char_limit IS NULL "
        " OR chars + CASE WHEN chars = 0 THEN ?3 ELSE ?4 END <= char_limit) "
        "RETURNING chars, char_limit",
        (text, separator, added_first, added_more, to_us(utc_now()), pk, int(hard_limit)),
    ).fetchone()
    if row is None:
        block = load(conn, pk)
        raise limit_error(block, block.chars + (added_more if block.chars else added_first))
    block = load(conn, pk)
    check_limit(block, block.chars, hard=False)
    return block


def set_text(
    conn: sqlite3.Connection,
    pk: int,
    value: str,
    *,
    expected_version: int | None,
    description: str | None,
    hard_limit: bool,
) -> tuple[Block, Block]:
    """Overwrite the value (and maybe description). Returns ``(before, after)``."""
    before = load(conn, pk)
    check_version(before, expected_version)
    check_limit(before, len(value), hard=hard_limit)
    conn.execute(
        "UPDATE blocks SET value = ?, chars = ?, description = coalesce(?, description), "
        "version = version + 1, updated_at = ? WHERE pk = ?",
        (value, len(value), description, to_us(utc_now()), pk),
    )
    return before, load(conn, pk)


def replace(
    conn: sqlite3.Connection,
    pk: int,
    old: str,
    new: str,
    *,
    expected_version: int | None,
    hard_limit: bool,
) -> Block:
    """Replace the single occurrence of ``old``; counted inside the write transaction.

    Raises:
        NotFoundError: ``old`` does not occur.
        MemoryStoreError: ``old`` occurs more than once.
    """
    before = load(conn, pk)
    check_version(before, expected_version)
    if not old:
        raise InvalidInputError("the text to replace must not be empty")
    value = replace_once(before, old, new)
    check_limit(before, len(value), hard=hard_limit)
    conn.execute(
        "UPDATE blocks SET value = ?, chars = ?, version = version + 1, updated_at = ? "
        "WHERE pk = ?",
        (value, len(value), to_us(utc_now()), pk),
    )
    return load(conn, pk)


def delete(conn: sqlite3.Connection, pk: int, *, expected_version: int | None) -> Block:
    """Delete the block (its tags, shares, FTS row and vector go with it)."""
    before = load(conn, pk)
    check_version(before, expected_version)
    conn.execute("DELETE FROM blocks WHERE pk = ?", (pk,))
    return before


def set_kinds(
    conn: sqlite3.Connection,
    changes: Sequence[tuple[int, BlockKind, int | None]],
) -> list[Block]:
    """Change the kind of each ``(pk, kind, expected_version)``, all or none."""
    now = to_us(utc_now())
    for pk, kind, expected_version in changes:
        check_version(load(conn, pk), expected_version)
        conn.execute(
            "UPDATE blocks SET kind = ?, version = version + 1, updated_at = ? WHERE pk = ?",
            (kind.value, now, pk),
        )
    return [load(conn, pk) for pk, _, _ in changes]


def set_share(
    conn: sqlite3.Connection, pk: int, recipient: str, permission: Permission | None
) -> Block:
    """Share block ``pk`` with ``recipient`` at ``permission``, or unshare with
    ``None``.

    Raises:
        NotFoundError: Unsharing a block that is not shared with ``recipient``.
        InvalidInputError: Sharing with the owner.
    """
    block = load(conn, pk)
    if recipient == block.agent:
        raise InvalidInputError("a block cannot be shared with its own owner")
    if permission is None:
        rid = agent_id(conn, recipient, create=False)
        removed = (
            conn.execute(
                "DELETE FROM shares WHERE block_pk = ? AND agent_id = ?", (pk, rid)
            ).rowcount
            if rid is not None
            else 0
        )
        if not removed:
            raise NotFoundError(
                f"block {block.label!r} is not shared with {recipient!r}",
                details={"label": block.label, "recipient": recipient},
            )
    else:
        rid = agent_id(conn, recipient, create=True)
        conn.execute(
            "INSERT INTO shares (block_pk, agent_id, permission) VALUES (?, ?, ?) "
            "ON CONFLICT (block_pk, agent_id) DO UPDATE SET permission = excluded.permission",
            (pk, rid, permission.value),
        )
    conn.execute(
        "UPDATE blocks SET version = version + 1, updated_at = ? WHERE pk = ?",
        (to_us(utc_now()), pk),
    )
    return load(conn, pk)


def configure(
    conn: sqlite3.Connection,
    pk: int,
    agent: str,
    *,
    permission: Permission | None,
    char_limit: int | Unset | None,
    description: str | None,
) -> Block:
    """Change the block's permission, limit and description, and lower its shares
    above a new permission, for its owner ``agent``; a no-op keeps the version.

    Raises:
        NotFoundError: The block is gone (or is no longer ``agent``'s).
        CharLimitError: The block holds more than the new limit.
    """
    before = load(conn, pk)
    if before.agent != agent:
        raise NotFoundError("the block was deleted meanwhile")
    after = configured(
        before, permission=permission, char_limit=char_limit, description=description
    )
    if after is None:
        return before
    conn.execute(
        "UPDATE blocks SET permission = ?, char_limit = ?, description = ?, "
        "version = version + 1, updated_at = ? WHERE pk = ?",
        (after.permission.value, after.char_limit, after.description, to_us(utc_now()), pk),
    )
    conn.executemany(
        "UPDATE shares SET permission = ? WHERE block_pk = ? "
        "AND agent_id = (SELECT id FROM agents WHERE name = ?)",
        [
            (level.value, pk, who)
            for who, level in after.shares.items()
            if level != before.shares[who]
        ],
    )
    return load(conn, pk)
