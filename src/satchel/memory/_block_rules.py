"""The rules every backend applies to a block write, written once.

The SQL that writes a block differs per backend (:mod:`satchel.memory.sqlite._blocks`
checks inside a transaction; :mod:`satchel.memory.postgres._block_guard` in the
writing statement), but what it enforces and the errors it raises are the same: a new
value within its character limit, the expected version, a replace that matches exactly
once, a bare label that names one block, and a recipient that sees only its own share. A
permission lowered between the gate and the write raises :class:`LevelChanged`, which
the store (:class:`~satchel.memory._store_base.StoreBase`) answers by running the gate
again.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from satchel._errors import (
    CharLimitError,
    InvalidInputError,
    MemoryStoreError,
    NotFoundError,
    VersionConflictError,
)
from satchel.memory._models import Block, Permission, Unset

__all__ = [
    "LevelChanged",
    "as_seen_by",
    "check_limit",
    "check_new_value",
    "check_version",
    "configured",
    "limit_error",
    "only_match",
    "replace_once",
]

logger = logging.getLogger("satchel.memory")


class LevelChanged(MemoryStoreError):
    """Internal retry signal: the acting agent's permission changed between the gate
    and the write. The store catches it and runs the gate again."""


def as_seen_by(block: Block, agent: str) -> Block:
    """A recipient sees only its own share, not who else the owner shared with."""
    if block.agent == agent:
        return block
    return block.model_copy(update={"shares": {agent: block.shares[agent]}})


def only_match(found: Sequence[tuple[int, Block]], agent: str, label: str) -> tuple[int, Block]:
    """The one block ``label`` resolved to, as ``agent`` sees it.

    Raises:
        NotFoundError: ``found`` is empty, or holds blocks of two owners (the message
            lists the ``owner/label`` names).
    """
    if not found:
        raise NotFoundError(
            f"no block {label!r} visible to agent {agent!r}", details={"label": label}
        )
    if len(found) > 1:
        names = sorted(f"{block.agent}/{block.label}" for _, block in found)
        raise NotFoundError(
            f"label {label!r} is ambiguous for agent {agent!r}: use one of {names}",
            details={"label": label, "candidates": names},
        )
    pk, block = found[0]
    return pk, as_seen_by(block, agent)


def limit_error(block: Block, chars: int) -> CharLimitError:
    """The refusal of a write that would make ``block`` hold ``chars`` characters."""
    limit = block.char_limit or 0
    return CharLimitError(
        f"block {block.label!r} would hold {chars} characters, over its limit of {limit} "
        f"by {chars - limit} (it holds {block.chars} now). Summarise the block, or "
        "archive part of it to archival memory, then try again.",
        details={
            "label": block.label,
            "chars": block.chars,
            "attempted_chars": chars,
            "char_limit": limit,
        },
    )


def check_limit(block: Block, chars: int, *, hard: bool) -> None:
    """Refuse (``hard``) or log a warning about ``block`` holding ``chars`` characters
    when that is over its limit.

    Raises:
        CharLimitError: Over the limit, and ``hard``.
    """
    if block.char_limit is None or chars <= block.char_limit:
        return
    if hard:
        raise limit_error(block, chars)
    logger.warning(
        "block %r of %r is over its soft char_limit: %d > %d",
        block.label,
        block.agent,
        chars,
        block.char_limit,
    )


def check_new_value(
    agent: str, label: str, value: str, char_limit: int | None, *, hard: bool
) -> None:
    """Check the value and limit of a block about to be created.

    Raises:
        InvalidInputError: ``char_limit`` is negative.
        CharLimitError: ``value`` is over ``char_limit``, and ``hard``.
    """
    if char_limit is not None and char_limit < 0:
        raise InvalidInputError("char_limit must be >= 0")
    if char_limit is not None and len(value) > char_limit:
        if hard:
            raise CharLimitError(
                f"the value of block {label!r} has {len(value)} characters, over its limit "
                f"of {char_limit}. Summarise it, or store it in archival memory.",
                details={"label": label, "attempted_chars": len(value), "char_limit": char_limit},
            )
        logger.warning("block %r of %r is created over its soft char_limit", label, agent)


def configured(
    block: Block,
    *,
    permission: Permission | None,
    char_limit: int | Unset | None,
    description: str | None,
) -> Block | None:
    """``block`` with the settings an operator gave (``None``/``UNSET``: keep), or
    ``None`` when that changes nothing. Shares above a new permission come down to it:
    a share is never above the block's own permission.

    The caller writes the returned block's ``permission``, ``char_limit``,
    ``description`` and ``shares``; version and time are its to bump.

    Raises:
        CharLimitError: The block holds more characters than the new limit.
    """
    update: dict[str, object] = {}
    if permission is not None and permission != block.permission:
        update["permission"] = permission
        update["shares"] = {who: min(level, permission) for who, level in block.shares.items()}
    if not isinstance(char_limit, Unset) and char_limit != block.char_limit:
        if char_limit is not None and block.chars > char_limit:
            raise CharLimitError(
                f"block {block.label!r} holds {block.chars} characters, over the new limit "
                f"of {char_limit} by {block.chars - char_limit}. Summarise the block, or "
                "archive part of it to archival memory, then set the limit again.",
                details={"label": block.label, "chars": block.chars, "char_limit": char_limit},
            )
        update["char_limit"] = char_limit
    if description is not None and description != block.description:
        update["description"] = description
    return block.model_copy(update=update) if update else None


def check_version(block: Block, expected_version: int | None) -> None:
    """Refuse a write made against another version of ``block``.

    Raises:
        VersionConflictError: ``expected_version`` is given and is not the block's.
    """
    if expected_version is not None and block.version != expected_version:
        raise VersionConflictError(
            f"block {block.label!r} is at version {block.version}, not {expected_version}: "
            "someone wrote it meanwhile. Read it again and retry.",
            details={
                "label": block.label,
                "expected_version": expected_version,
                "current_version": block.version,
            },
        )


def replace_once(block: Block, old: str, new: str) -> str:
    """The block's value with its single occurrence of ``old`` replaced by ``new``.

    Raises:
        NotFoundError: ``old`` does not occur.
        MemoryStoreError: ``old`` occurs more than once.
    """
    matches = block.value.count(old)
    details = {"label": block.label, "matches": matches}
    if matches == 0:
        raise NotFoundError(
            f"the text to replace does not occur in block {block.label!r} (0 matches)",
            details=details,
        )
    if matches > 1:
        raise MemoryStoreError(
            f"the text to replace occurs {matches} times in block {block.label!r}; give "
            "a longer passage that occurs exactly once",
            details=details,
        )
    return block.value.replace(old, new, 1)
