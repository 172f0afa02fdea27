"""The operator's block write: what a person at the console (or a CLI) changes directly.

A person editing memory is the human the permission table asks for consent, so their
edit does not pass the gate: it may set the text of a ``read_only`` block, delete one
below ``admin``, and change its settings. It is still one write: the value, the
description, the permission, the limit and the kind change together, in one
transaction, checked against the version the person saw (optimistic concurrency, the
same :class:`~satchel.VersionConflictError` as any write), so no one ever sees a
half-made edit, such as a permission raised for the write and not yet set back.

This module holds what every backend applies to such a write, written once:
:class:`BlockChange` (what is asked), :func:`check_change` (argument checks, before
anything is read) and :func:`changed` (the block after the change, checked against
its limit; run by the backend on the row inside its transaction). The store's
entry points are :meth:`~satchel.memory.GatedStore.operator_edit` and
:meth:`~satchel.memory.GatedStore.operator_delete`; no model-facing tool reaches them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from satchel._errors import CharLimitError, InvalidInputError
from satchel.memory._models import UNSET, Block, BlockKind, Permission, Unset

__all__ = ["MAX_STORED_INT", "BlockChange", "changed", "check_change", "check_version_number"]

MAX_STORED_INT: Final = 2**31 - 1
"""The largest version or limit every backend stores (PostgreSQL keeps integers)."""


@dataclass(frozen=True, kw_only=True)
class BlockChange:
    """What an operator's edit sets; a field left at its default keeps the block's.

    Attributes:
        value: The new text, or ``None`` to keep it.
        description: The new description, or ``None`` to keep it.
        permission: The new permission, or ``None`` to keep it.
        char_limit: The new limit (``>= 0``), ``None`` for no limit, or ``UNSET`` to
            keep it.
        kind: The kind to move the block to (archive is ``ARCHIVAL``, load is
            ``WORKING``), or ``None`` to keep it.
    """

    value: str | None = None
    description: str | None = None
    permission: Permission | None = None
    char_limit: int | Unset | None = UNSET
    kind: BlockKind | None = None


def _text(name: str, text: object) -> str | None:
    if text is None:
        return None
    if not isinstance(text, str):
        raise InvalidInputError(f"{name} must be text, not {type(text).__name__}")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidInputError(
            f"{name} holds a lone surrogate (U+{ord(text[exc.start]):04X} at character "
            f"{exc.start}), which is not text"
        ) from None
    return text


def _number(name: str, number: object) -> int:
    if isinstance(number, bool) or not isinstance(number, int):
        raise InvalidInputError(f"{name} must be a whole number, not {type(number).__name__}")
    if not 0 <= number <= MAX_STORED_INT:
        raise InvalidInputError(f"{name} must be 0 to {MAX_STORED_INT}, not {number}")
    return number


def check_version_number(expected_version: object) -> int:
    """``expected_version`` if it is a version number a block could have.

    Raises:
        InvalidInputError: Not a whole number from 0 to :data:`MAX_STORED_INT`.
    """
    return _number("expected_version", expected_version)


def check_change(change: BlockChange) -> BlockChange:
    """``change`` with its permission and kind as enums, once every field is valid.

    Raises:
        InvalidInputError: A field has the wrong type, a text holds a lone surrogate,
            a limit is negative or too large, or a permission or kind is unknown.
    """
    try:
        permission = None if change.permission is None else Permission(change.permission)
    except ValueError:
        names = ", ".join(p.value for p in Permission)
        raise InvalidInputError(
            f"{str(change.permission)[:40]!r} is not a permission; choose {names}"
        ) from None
    try:
        kind = None if change.kind is None else BlockKind(change.kind)
    except ValueError:
        names = ", ".join(k.value for k in BlockKind)
        raise InvalidInputError(
            f"{str(change.kind)[:40]!r} is not a kind of block; choose {names}"
        ) from None
    limit = change.char_limit
    if not isinstance(limit, Unset) and limit is not None:
        limit = _number("char_limit", limit)
    return BlockChange(
        value=_text("value", change.value),
        description=_text("description", change.description),
        permission=permission,
        char_limit=limit,
        kind=kind,
    )


def changed(block: Block, change: BlockChange) -> Block | None:
    """``block`` after ``change`` (a checked one), or ``None`` when it changes nothing.

    Shares above a new permission come down to it (a share is never above the block's
    own permission). The text and the limit that result are checked together, whenever
    either changes, and always as a hard limit: the operator sets both in the same
    edit, so a text over the limit is refused rather than stored with a warning. The
    caller writes the returned block's ``value``, ``description``, ``permission``,
    ``char_limit``, ``kind`` and ``shares``; version and time are its to bump.

    Raises:
        CharLimitError: The text would be longer than the limit.
    """
    update: dict[str, object] = {}
    value = block.value if change.value is None else change.value
    limit = block.char_limit if isinstance(change.char_limit, Unset) else change.char_limit
    if value != block.value:
        update["value"] = value
    if limit != block.char_limit:
        update["char_limit"] = limit
    if update and limit is not None and len(value) > limit:
        raise CharLimitError(
            f"block {block.label!r} would hold {len(value)} characters, over the limit of "
            f"{limit} by {len(value) - limit}: shorten the text or raise the limit",
            details={
                "label": block.label,
                "chars": block.chars,
                "attempted_chars": len(value),
                "char_limit": limit,
            },
        )
    if change.permission is not None and change.permission != block.permission:
        update["permission"] = change.permission
        update["shares"] = {
            who: min(level, change.permission) for who, level in block.shares.items()
        }
    if change.description is not None and change.description != block.description:
        update["description"] = change.description
    if change.kind is not None and change.kind != block.kind:
        update["kind"] = change.kind
    return block.model_copy(update=update) if update else None
