"""The steps of the ``context`` tool beyond one plain call to the store: replace and
create, which turn a refused write into a hint the model can act on (a passage that does
not occur exactly once, a label already taken); set (read, then overwrite at that
version or create, again when another writer moved first); the check that a block is
where an operation needs it; and the output that reports a written block.

:class:`ContextSteps` is a part of :class:`~satchel.builtin._context.ContextTool` (its
base), kept in its own module; it holds no state of its own.
"""

from __future__ import annotations

from satchel._errors import (
    AlreadyExistsError,
    MemoryStoreError,
    NotFoundError,
    ToolRetry,
    VersionConflictError,
)
from satchel.builtin._context_ops import ContextCreate, ContextOutput, ContextReplace, ContextSet
from satchel.builtin._views import block_written, checked
from satchel.memory import Block, BlockKind, MemoryStore, RequestOrigin

__all__ = ["ContextSteps", "done"]

_SET_ATTEMPTS = 5


class ContextSteps:
    """The multi-step operations of :class:`~satchel.builtin._context.ContextTool` (see
    the module docstring); the tool supplies the attributes below."""

    store: MemoryStore
    new_block_kind: BlockKind

    async def _replace(
        self, agent: str, params: ContextReplace, origin: RequestOrigin
    ) -> ContextOutput:
        try:
            block = await checked(
                self.store.replace_in_block(
                    agent, params.label, params.old, params.new, origin=origin
                )
            )
        except MemoryStoreError as exc:
            matches = exc.details.get("matches")
            if not isinstance(matches, int):
                raise
            how = "does not occur" if matches == 0 else f"occurs {matches} times"
            raise ToolRetry(
                f"The old text {how} in block {params.label!r} (it must match exactly once). "
                + (
                    "Copy the passage exactly as the block shows it, or list the block first."
                    if matches == 0
                    else "Include more of the surrounding text so it matches only once."
                ),
                details={"label": params.label, "matches": matches},
            ) from exc
        return done("Replaced the passage in {}", block, agent)

    async def _new_block(
        self, agent: str, label: str, value: str, description: str
    ) -> ContextOutput:
        """Create a block of :attr:`new_block_kind`; raises ``AlreadyExistsError``."""
        created = await checked(
            self.store.create_block(
                agent, label, value, description=description, kind=self.new_block_kind
            )
        )
        return ContextOutput(
            message=f"Created the {created.kind.value} block "
            f"{created.address_for(agent)!r} with {created.chars} characters.",
            block=block_written(created, agent),
        )

    async def _create(self, agent: str, params: ContextCreate) -> ContextOutput:
        try:
            return await self._new_block(
                agent, params.label, params.value, params.description or ""
            )
        except AlreadyExistsError as exc:
            raise ToolRetry(
                f"Block {params.label!r} already exists. Use append or replace to change "
                "it, set to overwrite it, or create the block under another label.",
                details={"label": params.label},
            ) from exc

    async def _set(self, agent: str, params: ContextSet, origin: RequestOrigin) -> ContextOutput:
        for _ in range(_SET_ATTEMPTS):
            try:
                before = await checked(self.store.get_block(agent, params.label))
            except NotFoundError:
                try:
                    return await self._new_block(
                        agent, params.label, params.value, params.description or ""
                    )
                except AlreadyExistsError:
                    continue  # created meanwhile: overwrite it on the next round
            try:
                after = await checked(
                    self.store.update_block_text(
                        agent,
                        params.label,
                        params.value,
                        expected_version=before.version,
                        description=params.description,
                        origin=origin,
                    )
                )
            except (VersionConflictError, NotFoundError):
                continue  # written or deleted meanwhile: read again
            return ContextOutput(
                message=f"Set {after.address_for(agent)!r} to {after.chars} characters "
                f"(it had {before.chars}; version {after.version}).",
                block=block_written(after, agent),
                previous_value=before.value,
            )
        raise VersionConflictError(
            f"block {params.label!r} kept changing while it was being set; try again",
            details={"label": params.label},
        )

    async def _expect(self, agent: str, label: str, *, in_context: bool) -> Block:
        """Check the block is where the operation needs it, with a hint when not."""
        block = await checked(self.store.get_block(agent, label))
        if in_context and block.kind is BlockKind.ARCHIVAL:
            raise ToolRetry(
                f"Block {label!r} is already in archival memory; only core and working "
                "blocks can be archived.",
                details={"label": label, "kind": block.kind.value},
            )
        if not in_context and block.kind is not BlockKind.ARCHIVAL:
            raise ToolRetry(
                f"Block {label!r} is already in context ({block.kind.value} memory); only "
                "archival blocks can be loaded.",
                details={"label": label, "kind": block.kind.value},
            )
        return block


def done(template: str, block: Block, agent: str) -> ContextOutput:
    """An output whose message is ``template`` with ``{}`` as the block's address, plus
    its size."""
    limit = f" of {block.char_limit}" if block.char_limit is not None else ""
    what = template.format(repr(block.address_for(agent)))
    return ContextOutput(
        message=f"{what}; it has {block.chars}{limit} characters (version {block.version}).",
        block=block_written(block, agent),
    )
