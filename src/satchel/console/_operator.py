"""The operator's writes: what the console does when a person edits memory.

A person at the console is the human the permission table asks for consent, so the
console writes as the operator: an edit (value, description, permission and limit
together), an archive or load, and a delete are each one write of
:meth:`~satchel.memory.GatedStore.operator_edit` or
:meth:`~satchel.memory.GatedStore.operator_delete`, which pass no permission gate and
check the version the page showed in the same transaction. So a ``read_only`` block's
text can be corrected and stay read-only, and no one (a model on another ``satchel
serve`` process) ever sees the block with a permission the form did not ask for. A
refused edit (a stale version, a text over the limit) changes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

from satchel._errors import InvalidInputError, SatchelUsageError, VersionConflictError
from satchel.memory import Block, BlockKind, GatedStore, MemoryStore, Permission

__all__ = [
    "MAX_VALUE_CHARS",
    "BlockEdit",
    "Operator",
    "check_value",
    "operator_store",
    "parse_limit",
    "parse_permission",
]

MAX_VALUE_CHARS = 1_000_000
"""The longest text the console accepts for a block (larger posts are refused whole)."""


def operator_store(store: MemoryStore) -> GatedStore:
    """``store``, which the console writes to as the operator.

    Raises:
        SatchelUsageError: ``store`` is not a :class:`~satchel.memory.GatedStore`
            (whose operator writes the console needs).
    """
    if not isinstance(store, GatedStore):
        raise SatchelUsageError(
            f"the console needs a GatedStore (such as SQLiteStore or PostgresStore) for "
            f"the operator's writes, not {type(store).__name__}"
        )
    return store


@dataclass(frozen=True, kw_only=True)
class BlockEdit:
    """What the block form asks for."""

    value: str
    description: str
    permission: Permission
    char_limit: int | None
    expected_version: int


def parse_limit(raw: str) -> int | None:
    """The char limit typed in a form: empty for none, else an integer ``>= 0``.

    Raises:
        InvalidInputError: Not such a number.
    """
    text = raw.strip()
    if not text:
        return None
    try:
        limit = int(text)
    except ValueError:
        raise InvalidInputError(
            f"the char limit must be a whole number of characters (or empty for none), "
            f"not {text[:40]!r}"
        ) from None
    if limit < 0:
        raise InvalidInputError(f"the char limit must not be negative, got {limit}")
    return limit


def parse_permission(raw: str) -> Permission:
    """A permission named in a form.

    Raises:
        InvalidInputError: No such permission.
    """
    try:
        return Permission(raw)
    except ValueError:
        names = ", ".join(p.value for p in Permission)
        raise InvalidInputError(f"{raw[:40]!r} is not a permission; choose {names}") from None


def check_value(value: str) -> str:
    """``value`` if the console accepts text that long.

    Raises:
        InvalidInputError: Longer than :data:`MAX_VALUE_CHARS`.
    """
    if len(value) > MAX_VALUE_CHARS:
        raise InvalidInputError(
            f"the text has {len(value)} characters; the console takes at most "
            f"{MAX_VALUE_CHARS} (archive or split it)"
        )
    return value


class Operator:
    """The console's writes on one store.

    Args:
        store: The store (see :func:`operator_store`).
    """

    def __init__(self, store: GatedStore) -> None:
        self.store = store

    async def edit(self, agent: str, label: str, edit: BlockEdit) -> Block:
        """Apply the block form: value, description, permission and limit, in one
        write at the form's version.

        Raises:
            VersionConflictError: The block changed since the form was shown.
            CharLimitError: The text is longer than the limit asked for.
            NotFoundError: No such block.
            InvalidInputError: The text is longer than :data:`MAX_VALUE_CHARS`.
        """
        check_value(edit.value)
        try:
            return await self.store.operator_edit(
                agent,
                label,
                expected_version=edit.expected_version,
                value=edit.value,
                description=edit.description,
                permission=edit.permission,
                char_limit=edit.char_limit,
            )
        except VersionConflictError as exc:
            version = exc.details.get("current_version")
            raise VersionConflictError(
                f"block {label!r} changed while you edited it (version {version}, "
                f"your form was of version {edit.expected_version}); your text is kept "
                "below: compare and save again",
                details={"label": label, "version": version},
            ) from exc

    async def create(
        self,
        agent: str,
        label: str,
        value: str,
        *,
        description: str,
        kind: BlockKind,
        permission: Permission,
        char_limit: int | None,
    ) -> Block:
        """Create a block for ``agent``."""
        return await self.store.create_block(
            agent,
            label,
            check_value(value),
            description=description,
            kind=kind,
            permission=permission,
            char_limit=char_limit,
        )

    async def move(self, agent: str, label: str, kind: BlockKind) -> Block:
        """Archive (``ARCHIVAL``) or load (``WORKING``) a block, keeping its permission,
        at the version read just before.

        Raises:
            VersionConflictError: Someone wrote the block between that read and the move.
        """
        block = await self.store.get_block(agent, label)
        return await self.store.operator_edit(
            agent, label, expected_version=block.version, kind=kind
        )

    async def delete(self, agent: str, label: str, *, expected_version: int) -> Block:
        """Delete a block the operator confirmed at ``expected_version``.

        Raises:
            VersionConflictError: The block changed since the confirmation was shown.
        """
        try:
            return await self.store.operator_delete(agent, label, expected_version=expected_version)
        except VersionConflictError as exc:
            version = exc.details.get("current_version")
            raise VersionConflictError(
                f"block {label!r} changed since you asked to delete it (now version "
                f"{version}); look at it again before deleting",
                details={"label": label, "version": version},
            ) from exc
