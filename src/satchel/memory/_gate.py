"""The permission gate around a backend's write step, and its retry loop.

:class:`~satchel.memory.GatedStore` runs every write to a block through
:func:`gated_write` (and a swap, which gates two blocks at once, through
:func:`gated_swap`): resolve the label, ask :func:`~satchel.memory.authorize` (the
permission table and the consent handler; nothing is held open while a human decides),
then run the backend's write step with the level the gate allowed. The step re-checks
that level as part of the write; when it moved meanwhile the step raises
:class:`~satchel.memory._block_rules.LevelChanged` and the gate runs again, at most
five times.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

from satchel._errors import InvalidInputError, VersionConflictError
from satchel.memory._block_rules import LevelChanged
from satchel.memory._models import Block, BlockKind, Permission, validate_agent
from satchel.memory._permissions import ConsentHandler, Operation, RequestOrigin, authorize

if TYPE_CHECKING:
    from satchel.memory._backend import MemoryBackend

__all__ = ["gated_swap", "gated_write"]

_T = TypeVar("_T")
_RETRIES = 5


async def gated_write(
    backend: MemoryBackend,
    consent: ConsentHandler | None,
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
    """Resolve ``label`` for ``agent``, pass the gate for ``operation`` (``reason``
    tells a consent handler what would change), then run ``write(pk, level)``.

    Returns the block's primary key and what ``write`` returned.

    Raises:
        PermissionDeniedError: The table or the human says no.
        ConsentRequiredError: Consent is needed and there is no handler.
        VersionConflictError: The level kept changing under the gate.
    """
    validate_agent(agent)
    for _ in range(_RETRIES):
        [(pk, block)] = await backend.resolve(agent, [label])
        level = await authorize(
            operation,
            block=block,
            agent=agent,
            consent=consent,
            reason=reason(block),
            share_level=share_level,
            content=content,
            origin=origin,
        )
        try:
            return pk, await write(pk, level)
        except LevelChanged:
            continue
    raise VersionConflictError(
        f"the permissions of block {label!r} kept changing; try again",
        details={"label": label},
    )


async def gated_swap(
    backend: MemoryBackend,
    consent: ConsentHandler | None,
    agent: str,
    archive_label: str,
    load_label: str,
    origin: RequestOrigin | None,
) -> tuple[Block, Block]:
    """Gate both kind changes of a swap, then archive one block and load the other in
    one backend write.

    Raises:
        InvalidInputError: Both labels name the same block.
        PermissionDeniedError: The table or the human says no to either.
        VersionConflictError: The levels kept changing under the gate.
    """
    validate_agent(agent)
    for _ in range(_RETRIES):
        (pk_a, block_a), (pk_l, block_l) = await backend.resolve(agent, [archive_label, load_label])
        if pk_a == pk_l:
            raise InvalidInputError("swap needs two different blocks")
        levels = [
            await authorize(
                Operation.KIND_CHANGE,
                block=block,
                agent=agent,
                consent=consent,
                reason=f"swap: move block {block.label!r} to {target.value} memory",
                content={"kind": target.value},
                origin=origin,
            )
            for block, target in ((block_a, BlockKind.ARCHIVAL), (block_l, BlockKind.WORKING))
        ]
        try:
            return await backend.swap(agent, (pk_a, levels[0]), (pk_l, levels[1]))
        except LevelChanged:
            continue
    raise VersionConflictError("the permissions of the blocks kept changing; try again")
