"""Row conversion for the PostgreSQL store, and the one text quirk it has to hide.

PostgreSQL ``text`` cannot hold the NUL character, but a block or message may contain
it (any text is valid input). Every free text the store keeps (values, descriptions,
message contents, tags, conversation ids) is therefore passed through :func:`enc` on
the way in and :func:`dec` on the way out. The escape works character by character
(``\\x00`` becomes ``ESC 0``, ``ESC`` becomes ``ESC 1``, with ``ESC`` the private-use
character U+E000), so ``enc(a + b) == enc(a) + enc(b)``: an append can still
concatenate in SQL. Text without either character, nearly all text, is stored as is.
Lengths are counted on the real text and kept in the ``chars`` column.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
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
    "BLOCKS_TABLE",
    "BLOCK_COLUMNS",
    "MESSAGES_TABLE",
    "MESSAGE_COLUMNS",
    "Row",
    "block_from_row",
    "dec",
    "dump_json",
    "enc",
    "enc_all",
    "keyed_blocks",
    "message_from_row",
    "normalise_tags",
    "utc",
]

Row = tuple[Any, ...]

BLOCKS_TABLE = "satchel_blocks"
MESSAGES_TABLE = "satchel_messages"

BLOCK_COLUMNS = (
    "b.pk, b.id, b.agent, b.label, b.value, b.description, b.kind, b.permission, "
    "b.char_limit, b.pinned, b.version, b.created_at, b.updated_at, b.tags, b.metadata, "
    "b.shares"
)
"""The columns :func:`block_from_row` reads, on alias ``b``."""

MESSAGE_COLUMNS = (
    "m.pk, m.id, m.agent, m.conversation_id, m.role, m.content, m.created_at, m.tags, m.metadata"
)
"""The columns :func:`message_from_row` reads, on alias ``m``."""

_ESC = "\ue000"
_DECODE_RE = re.compile(_ESC + "(.)", re.DOTALL)


def enc(text: str) -> str:
    """``text`` in a form PostgreSQL accepts (no NUL); see the module doc."""
    if "\x00" not in text and _ESC not in text:
        return text
    return text.replace(_ESC, _ESC + "1").replace("\x00", _ESC + "0")


def dec(text: str) -> str:
    """Inverse of :func:`enc`."""
    if _ESC not in text:
        return text
    return _DECODE_RE.sub(lambda m: "\x00" if m.group(1) == "0" else _ESC, text)


def enc_all(texts: Iterable[str]) -> list[str]:
    """:func:`enc` of each text."""
    return [enc(text) for text in texts]


def utc(moment: datetime) -> datetime:
    """A timestamp read from the database, in UTC.

    Raises:
        InvalidInputError: ``moment`` is naive (only possible for input, never for output).
    """
    if moment.tzinfo is None:
        raise InvalidInputError("datetimes given to the memory store must be timezone-aware")
    return moment.astimezone(UTC)


def _json(value: Any) -> dict[str, Any]:
    if isinstance(value, str):
        return cast(dict[str, Any], json.loads(value))
    return cast(dict[str, Any], value)


def block_from_row(row: Sequence[Any]) -> Block:
    """A :class:`Block` from a row selected with :data:`BLOCK_COLUMNS`."""
    shares = _json(row[15])
    return Block(
        id=row[1],
        agent=row[2],
        label=row[3],
        value=dec(row[4]),
        description=dec(row[5]),
        kind=BlockKind(row[6]),
        permission=Permission(row[7]),
        char_limit=row[8],
        pinned=row[9],
        version=row[10],
        created_at=utc(row[11]),
        updated_at=utc(row[12]),
        tags=tuple(dec(tag) for tag in row[13]),
        metadata=_json(row[14]),
        shares={name: Permission(level) for name, level in shares.items()},
    )


def keyed_blocks(rows: list[tuple[Any, ...]]) -> list[tuple[int, Block]]:
    """Each row selected with :data:`BLOCK_COLUMNS` as its primary key and its block."""
    return [(int(row[0]), block_from_row(row)) for row in rows]


def message_from_row(row: Sequence[Any]) -> Message:
    """A :class:`Message` from a row selected with :data:`MESSAGE_COLUMNS`."""
    return Message(
        id=row[1],
        agent=row[2],
        conversation_id=dec(row[3]),
        role=cast(Role, row[4]),
        content=dec(row[5]),
        created_at=utc(row[6]),
        tags=tuple(dec(tag) for tag in row[7]),
        metadata=_json(row[8]),
    )
