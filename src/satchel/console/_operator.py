"""The operator's writes: what the console does when a person edits memory.

A person at the console is the human the permission table asks for consent, so the
console's store view consents to its own writes (as ``satchel memory ... --yes`` does),
and settings go through :meth:`~satchel.memory.MemoryStore.configure_block`, the
operator's path that no model reaches. Where the table *denies* a write at the block's
permission (an overwrite of a ``read_only`` block, a delete below ``admin``), the
operator first raises the block's permission (the same ``configure_block`` the CLI
offers), writes at the version that step returned, then sets the permission the form
asked for. If that write fails (a model wrote in between, so the version moved on),
the permission is put back before the error reaches the page. Every step is checked up
front (limit against text, the expected version), so a refused edit changes nothing.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

from satchel._errors import CharLimitError, InvalidInputError, VersionConflictError
from satchel.memory import (
    Block,
    BlockKind,
    ConsentRequest,
    GatedStore,
    MemoryStore,
    Operation,
    Permission,
    RequestOrigin,
    Verdict,
    verdict,
)

__all__ = [
    "MAX_VALUE_CHARS",
    "ORIGIN",
    "BlockEdit",
    "Operator",
    "check_value",
    "operator_view",
    "parse_limit",
    "parse_permission",
]

_T = TypeVar("_T")

ORIGIN = RequestOrigin(channel="console")
"""The origin of the console's writes."""

MAX_VALUE_CHARS = 1_000_000
"""The longest text the console accepts for a block (larger posts are refused whole)."""


async def _operator_consents(request: ConsentRequest, /) -> bool:
    """The person at the console asked for this write: it is their consent."""
    return True


def operator_view(store: MemoryStore) -> MemoryStore:
    """``store`` as the console writes to it: the same backend, whose consent handler
    is the person at the console. A store that is not a
    :class:`~satchel.memory.GatedStore` is used as it is."""
    if not isinstance(store, GatedStore):
        return store
    return GatedStore(
        store.backend,
        embedder=store.embedder,
        consent=_operator_consents,
        char_limit_mode="hard" if store.hard_limit else "soft",
        fusion=store.fusion,
    )


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
        store: The operator's view (see :func:`operator_view`).
    """

    def __init__(self, store: MemoryStore) -> None:
        self.store = store

    async def _loosened(self, agent: str, block: Block, operation: Operation) -> Block:
        """``block``, its permission raised first if the table denies ``operation``."""
        if verdict(operation, block.permission) is not Verdict.DENY:
            return block
        level = Permission.ADMIN if operation is Operation.DELETE else Permission.READ_WRITE
        return await self.store.configure_block(agent, block.label, permission=level)

    async def _as_loosened(
        self,
        agent: str,
        block: Block,
        operation: Operation,
        write: Callable[[Block], Awaitable[_T]],
    ) -> _T:
        """Run ``write`` on ``block`` loosened for ``operation`` (see :meth:`_loosened`);
        if it fails, the block's permission is set back to what it was."""
        loosened = await self._loosened(agent, block, operation)
        try:
            return await write(loosened)
        except BaseException:
            if loosened.permission != block.permission:
                await self.store.configure_block(agent, block.label, permission=block.permission)
            raise

    async def edit(self, agent: str, label: str, edit: BlockEdit) -> Block:
        """Apply the block form: value, description, permission and limit.

        Raises:
            VersionConflictError: The block changed since the form was shown.
            CharLimitError: The text is longer than the limit asked for.
            NotFoundError: No such block.
        """
        block = await self.store.get_block(agent, label)
        if block.version != edit.expected_version:
            raise VersionConflictError(
                f"block {label!r} changed while you edited it (version {block.version}, "
                f"your form was of version {edit.expected_version}); your text is kept "
                "below: compare and save again",
                details={"label": label, "version": block.version},
            )
        check_value(edit.value)
        if edit.char_limit is not None and len(edit.value) > edit.char_limit:
            raise CharLimitError(
                f"the text has {len(edit.value)} characters, over the limit of "
                f"{edit.char_limit}: shorten it or raise the limit",
                details={"label": label, "chars": len(edit.value), "limit": edit.char_limit},
            )
        if edit.value != block.value:
            grows = edit.char_limit is None or (
                block.char_limit is not None and edit.char_limit > block.char_limit
            )
            if grows and edit.char_limit != block.char_limit:
                block = await self.store.configure_block(agent, label, char_limit=edit.char_limit)
            block = await self._as_loosened(
                agent,
                block,
                Operation.OVERWRITE,
                lambda b: self.store.update_block_text(
                    agent, label, edit.value, expected_version=b.version, origin=ORIGIN
                ),
            )
        return await self.store.configure_block(
            agent,
            label,
            permission=edit.permission,
            char_limit=edit.char_limit,
            description=edit.description,
        )

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
        """Archive (``ARCHIVAL``) or load (``WORKING``) a block, keeping its permission."""
        block = await self.store.get_block(agent, label)
        original = block.permission
        moved = await self._as_loosened(
            agent,
            block,
            Operation.KIND_CHANGE,
            lambda b: self.store.set_kind(
                agent, label, kind, expected_version=b.version, origin=ORIGIN
            ),
        )
        if moved.permission != original:
            moved = await self.store.configure_block(agent, label, permission=original)
        return moved

    async def delete(self, agent: str, label: str, *, expected_version: int) -> Block:
        """Delete a block the operator confirmed at ``expected_version``.

        Raises:
            VersionConflictError: The block changed since the confirmation was shown.
        """
        block = await self.store.get_block(agent, label)
        if block.version != expected_version:
            raise VersionConflictError(
                f"block {label!r} changed since you asked to delete it (now version "
                f"{block.version}); look at it again before deleting",
                details={"label": label, "version": block.version},
            )
        return await self._as_loosened(
            agent,
            block,
            Operation.DELETE,
            lambda b: self.store.delete_block(
                agent, label, expected_version=b.version, origin=ORIGIN
            ),
        )
