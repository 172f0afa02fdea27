"""Row conversion and small helpers shared by the SQLite store's SQL modules."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, cast

from satchel._errors import InvalidInputError
from satchel.memory._models import (
    Block,
    BlockKind,
    Message,
    Permission,
    Role,
    dump_json,
    normalise_tags,
)

__all__ = [
    "BLOCK_COLUMNS",
    "BLOCK_FROM",
    "MESSAGE_COLUMNS",
    "MESSAGE_FROM",
    "agent_id",
    "block_from_row",
    "dump_json",
    "from_us",
    "message_from_row",
    "normalise_tags",
    "placeholders",
    "shares_of",
    "to_us",
]

BLOCK_COLUMNS = (
    "b.pk, b.id, a.name, b.label, b.value, b.description, b.kind, b.permission, "
    "b.char_limit, b.pinned, b.version, b.created_at, b.updated_at, b.tags, b.metadata"
)
BLOCK_FROM = "blocks AS b JOIN agents AS a ON a.id = b.agent_id"

MESSAGE_COLUMNS = (
    "m.pk, m.id, a.name, m.conversation_id, m.role, m.content, m.created_at, m.tags, m.metadata"
)
MESSAGE_FROM = "messages AS m JOIN agents AS a ON a.id = m.agent_id"


def to_us(moment: datetime) -> int:
    """A timezone-aware datetime as integer microseconds since the Unix epoch.

    Raises:
        InvalidInputError: ``moment`` is naive.
    """
    if moment.tzinfo is None:
        raise InvalidInputError("datetimes given to the memory store must be timezone-aware")
    delta = moment - datetime(1970, 1, 1, tzinfo=UTC)
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def from_us(us: int) -> datetime:
    """Inverse of :func:`to_us` (in UTC)."""
    seconds, micro = divmod(us, 1_000_000)
    return datetime.fromtimestamp(seconds, UTC).replace(microsecond=micro)


def placeholders(count: int) -> str:
    """``?, ?, ...`` with ``count`` marks."""
    return ", ".join("?" * count)


def agent_id(conn: sqlite3.Connection, name: str, *, create: bool) -> int | None:
    """The id of agent ``name``; created when missing if ``create``."""
    row = conn.execute("SELECT id FROM agents WHERE name = ?", (name,)).fetchone()
    if row is not None:
        return int(row[0])
    if not create:
        return None
    cursor = conn.execute(
        "INSERT INTO agents (name, created_at) VALUES (?, ?)", (name, to_us(datetime.now(UTC)))
    )
    return int(cast(int, cursor.lastrowid))


def shares_of(conn: sqlite3.Connection, pks: Sequence[int]) -> dict[int, dict[str, Permission]]:
    """The shares of each block in ``pks``."""
    out: dict[int, dict[str, Permission]] = {pk: {} for pk in pks}
    for start in range(0, len(pks), 500):
        chunk = pks[start : start + 500]
        marks = placeholders(len(chunk))
        rows = conn.execute(
            "SELECT s.block_pk, a.name, s.permission FROM shares AS s "
            f"JOIN agents AS a ON a.id = s.agent_id WHERE s.block_pk IN ({marks})",
            tuple(chunk),
        ).fetchall()
        for pk, name, permission in rows:
            out[int(pk)][str(name)] = Permission(permission)
    return out


def block_from_row(row: Sequence[Any], shares: Mapping[str, Permission]) -> Block:
    """A :class:`Block` from a row selected with :data:`BLOCK_COLUMNS`."""
    return Block(
        id=row[1],
        agent=row[2],
        label=row[3],
        value=row[4],
        description=row[5],
        kind=BlockKind(row[6]),
        permission=Permission(row[7]),
        char_limit=row[8],
        pinned=bool(row[9]),
        version=row[10],
        created_at=from_us(row[11]),
        updated_at=from_us(row[12]),
        tags=tuple(json.loads(row[13])),
        metadata=json.loads(row[14]),
        shares=dict(shares),
    )


def message_from_row(row: Sequence[Any]) -> Message:
    """A :class:`Message` from a row selected with :data:`MESSAGE_COLUMNS`."""
    return Message(
        id=row[1],
        agent=row[2],
        conversation_id=row[3],
        role=cast(Role, row[4]),
        content=row[5],
        created_at=from_us(row[6]),
        tags=tuple(json.loads(row[7])),
        metadata=json.loads(row[8]),
    )
