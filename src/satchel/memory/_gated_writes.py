"""The permission-gated block writes of :class:`~satchel.memory.GatedStore`.

Every write an agent makes to a block (overwrite, append, replace, delete, kind
changes, swaps, sharing) goes through :func:`satchel.memory._gate.gated_write` here:
the gate resolves the block, applies DESIGN §4's table at the agent's level, asks the
consent handler with the reason written below, and retries when the level moved before
the backend's write re-checked it. :class:`GatedWrites` is a part
:class:`~satchel.memory.GatedStore` holds, with the store's backend, embedding upkeep
and :class:`WriteRules`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from satchel._errors import InvalidInputError
from satchel.memory._backend import MemoryBackend
from satchel.memory._gate import gated_swap, gated_write
from satchel.memory._models import Block, BlockKind, Permission, validate_agent
from satchel.memory._permissions import ConsentHandler, Operation, RequestOrigin
from satchel.memory._vector_upkeep import VectorUpkeep

__all__ = ["GatedWrites", "WriteRules"]

_T = TypeVar("_T")


@dataclass(kw_only=True)
class WriteRules:
    """The store's write policy, shared by its parts (and changed through the store's
    ``consent`` and ``hard_limit``)."""

    consent: ConsentHandler | None
    """Asked when a write needs consent; ``None`` makes such writes raise."""
    hard_limit: bool
    """Refuse a write past a block's ``char_limit`` (else accept and log)."""


class GatedWrites:
    """The gated block writes of :class:`~satchel.memory.GatedStore` (see the module
    docstring).

    Args:
        backend: The store's database steps.
        vectors: The store's embedding upkeep.
        rules: The store's write policy.
    """

    def __init__(self, backend: MemoryBackend, vectors: VectorUpkeep, rules: WriteRules) -> None:
        self.backend = backend
        self._vectors = vectors
        self.rules = rules

    async def _gated(
        self,
        agent: str,
        label: str,
        operation: Operation,
        reason: Callable[[Block], str],
        write: Callable[[int, Permission], Awaitable[_T]],
        *,
        share_level: Permission | None = None,
        content: Any = None,
        origin: RequestOrigin | None = None,
    ) -> tuple[int, _T]:
        return await gated_write(
            self.backend,
            self.rules.consent,
            agent,
            label,
            operation,
            reason,
            write,
            share_level=share_level,
            content=content,
            origin=origin,
        )

    async def update_block_text(
        self,
        agent: str,
        label: str,
        value: str,
        *,
        expected_version: int | None = None,
        description: str | None = None,
        origin: RequestOrigin | None = None,
    ) -> Block:
        """See :meth:`MemoryStore.update_block_text`."""
        vector = await self._vectors.embed_one(value)
        _, block = await self._gated(
            agent,
            label,
            Operation.OVERWRITE,
            lambda b: (
                f"overwrite block {b.label!r} ({b.chars} characters) with {len(value)} characters"
            ),
            lambda pk, level: self.backend.set_text(
                agent,
                pk,
                level,
                value,
                expected_version=expected_version,
                description=description,
                vector=vector,
                hard_limit=self.rules.hard_limit,
            ),
            content={"value": value, "description": description},
            origin=origin,
        )
        return block

    async def append_to_block(
        self,
        agent: str,
        label: str,
        text: str,
        *,
        separator: str = "\n",
        origin: RequestOrigin | None = None,
    ) -> Block:
        """See :meth:`MemoryStore.append_to_block`."""
        pk, block = await self._gated(
            agent,
            label,
            Operation.APPEND,
            lambda b: f"append {len(text)} characters to block {b.label!r}",
            lambda pk, level: self.backend.append(
                agent, pk, level, text, separator, hard_limit=self.rules.hard_limit
            ),
            content={"text": text, "separator": separator},
            origin=origin,
        )
        await self._vectors.refresh_block(pk, block.value)
        return block

    async def replace_in_block(
        self,
        agent: str,
        label: str,
        old: str,
        new: str,
        *,
        expected_version: int | None = None,
        origin: RequestOrigin | None = None,
    ) -> Block:
        """See :meth:`MemoryStore.replace_in_block`."""
        pk, block = await self._gated(
            agent,
            label,
            Operation.OVERWRITE,
            lambda b: (
                f"replace {len(old)} characters of block {b.label!r} with {len(new)} characters"
            ),
            lambda pk, level: self.backend.replace(
                agent,
                pk,
                level,
                old,
                new,
                expected_version=expected_version,
                hard_limit=self.rules.hard_limit,
            ),
            content={"old": old, "new": new},
            origin=origin,
        )
        await self._vectors.refresh_block(pk, block.value)
        return block

    async def delete_block(
        self,
        agent: str,
        label: str,
        *,
        expected_version: int | None = None,
        origin: RequestOrigin | None = None,
    ) -> Block:
        """See :meth:`MemoryStore.delete_block`."""
        _, block = await self._gated(
            agent,
            label,
            Operation.DELETE,
            lambda b: f"delete block {b.label!r} ({b.chars} characters)",
            lambda pk, level: self.backend.delete(
                agent, pk, level, expected_version=expected_version
            ),
            origin=origin,
        )
        return block

    async def set_kind(
        self,
        agent: str,
        label: str,
        kind: BlockKind,
        *,
        expected_version: int | None = None,
        origin: RequestOrigin | None = None,
    ) -> Block:
        """See :meth:`MemoryStore.set_kind`."""
        kind = BlockKind(kind)
        _, block = await self._gated(
            agent,
            label,
            Operation.KIND_CHANGE,
            lambda b: f"move block {b.label!r} from {b.kind.value} to {kind.value} memory",
            lambda pk, level: self.backend.set_kind(
                agent, pk, level, kind, expected_version=expected_version
            ),
            content={"kind": kind.value},
            origin=origin,
        )
        return block

    async def swap_blocks(
        self,
        agent: str,
        archive_label: str,
        load_label: str,
        *,
        origin: RequestOrigin | None = None,
    ) -> tuple[Block, Block]:
        """See :meth:`MemoryStore.swap_blocks`."""
        return await gated_swap(
            self.backend, self.rules.consent, agent, archive_label, load_label, origin
        )

    async def share_block(
        self,
        agent: str,
        label: str,
        recipient: str,
        permission: Permission,
        *,
        origin: RequestOrigin | None = None,
    ) -> Block:
        """See :meth:`MemoryStore.share_block`."""
        validate_agent(recipient)
        return await self._share(agent, label, recipient, Permission(permission), origin)

    async def unshare_block(
        self, agent: str, label: str, recipient: str, *, origin: RequestOrigin | None = None
    ) -> Block:
        """See :meth:`MemoryStore.unshare_block`."""
        validate_agent(recipient)
        return await self._share(agent, label, recipient, None, origin)

    async def _share(
        self,
        agent: str,
        label: str,
        recipient: str,
        permission: Permission | None,
        origin: RequestOrigin | None,
    ) -> Block:
        def reason(block: Block) -> str:
            if permission is None:
                return f"stop sharing block {block.label!r} with {recipient!r}"
            return f"share block {block.label!r} with {recipient!r} at {permission.value}"

        _, block = await self._gated(
            agent,
            label,
            Operation.SHARE,
            reason,
            lambda pk, level: self._set_share(agent, pk, level, recipient, permission),
            share_level=permission,
            content={"recipient": recipient, "permission": permission and permission.value},
            origin=origin,
        )
        return block

    async def _set_share(
        self, agent: str, pk: int, level: Permission, recipient: str, permission: Permission | None
    ) -> Block:
        if recipient == agent:  # past the gate, ``agent`` is the owner
            raise InvalidInputError("a block cannot be shared with its own owner")
        return await self.backend.set_share(agent, pk, level, recipient, permission)
