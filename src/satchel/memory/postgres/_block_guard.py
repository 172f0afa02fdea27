"""The conditions every block write on PostgreSQL checks in its own statement, and the
reason it gives when one fails.

Concurrency design. The permission level the gate allowed is re-checked *inside* the
writing statement, against the block row itself: a block's shares live in its own row
(``shares jsonb``), so the check ``level = CASE WHEN owner THEN permission ELSE
shares ->> agent END`` is part of the ``WHERE`` clause. Under READ COMMITTED an
``UPDATE`` that waits for another writer's row lock re-evaluates its ``WHERE`` on the
newest row version, so the level, the expected version and the character limit are
always checked against the row the write actually changes. Appends are one such
``UPDATE ... SET value = value || ...``: concurrent appends from any number of
processes serialise on the row lock and all land.

When a conditional write changes no row, :func:`explain` reads the block to say why:
it is gone (:class:`NotFoundError`), the level changed (:class:`LevelChanged`, the
store runs the gate again), the version moved (:class:`VersionConflictError`), or the
text would pass the limit (:class:`CharLimitError`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, LiteralString, NoReturn

from satchel.memory._block_rules import LevelChanged, check_version, limit_error
from satchel.memory._models import Block, Permission, utc_now
from satchel.memory._permissions import effective_permission
from satchel.memory.postgres._blocks import load
from satchel.memory.postgres._db import Conn

__all__ = ["LEVEL", "VERSION", "explain", "write_params"]

LEVEL: LiteralString = (
    "(CASE WHEN b.agent = %(me)s THEN b.permission ELSE b.shares ->> %(me)s END) = %(level)s"
)
"""A ``WHERE`` condition: ``%(me)s``'s level on block ``b`` is still ``%(level)s``."""
VERSION: LiteralString = "(%(expected)s::integer IS NULL OR b.version = %(expected)s)"
"""A ``WHERE`` condition: block ``b`` is at version ``%(expected)s``, if one is given."""


async def explain(
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


def write_params(pk: int, agent: str, level: Permission, **more: Any) -> dict[str, Any]:
    """The parameters :data:`LEVEL` and a write's ``%(pk)s`` and ``%(now)s`` read, and
    ``more``."""
    return {"pk": pk, "me": agent, "level": level.value, "now": utc_now(), **more}
