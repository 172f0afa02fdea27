"""The operator's writes of :class:`~satchel.memory.GatedStore`: a person's edit or
delete of a block, in one transaction, past the permission gate.

These are the memory console's writes (see :mod:`satchel.memory._operator` for the
rules). They are methods of the store, not of the :class:`~satchel.memory.MemoryStore`
protocol, and no built-in tool calls them: a model's writes go through
:mod:`satchel.memory._gated_writes`. :class:`OperatorWrites` is a part of
:class:`~satchel.memory.GatedStore` (its base), kept in its own module; it holds no
state of its own.
"""

from __future__ import annotations

import logging

from satchel._errors import NotFoundError, PermissionDeniedError
from satchel.memory._backend import MemoryBackend
from satchel.memory._merge import MergeReport, MergeSteps, plan_merge
from satchel.memory._models import UNSET, Block, BlockKind, Permission, Unset, validate_agent
from satchel.memory._operator import BlockChange, check_change, check_version_number
from satchel.memory._vector_upkeep import VectorUpkeep

__all__ = ["OperatorWrites"]

logger = logging.getLogger("satchel.memory")


class OperatorWrites:
    """The operator's writes of :class:`~satchel.memory.GatedStore` (see the module
    docstring).

    Args:
        backend: The store's database steps.
        vectors: The store's embedding upkeep.
    """

    def __init__(self, backend: MemoryBackend, vectors: VectorUpkeep) -> None:
        self.backend = backend
        self._vectors = vectors

    async def _owned(self, agent: str, label: str, operation: str) -> tuple[int, Block]:
        validate_agent(agent)
        [(pk, block)] = await self.backend.resolve(agent, [label])
        if block.agent != agent:
            raise PermissionDeniedError(
                f"only the owner {block.agent!r} may {operation} block {block.label!r}",
                details={"label": block.label, "owner": block.agent, "operation": operation},
            )
        return pk, block

    async def operator_edit(
        self,
        agent: str,
        label: str,
        *,
        expected_version: int,
        value: str | None = None,
        description: str | None = None,
        permission: Permission | None = None,
        char_limit: int | Unset | None = UNSET,
        kind: BlockKind | None = None,
    ) -> Block:
        """Change a block as its human operator: text, description, permission, limit
        and kind together, in one write at ``expected_version``.

        This is the person's edit, not a model's: it does **not** pass the permission
        gate or ask for consent (it can set the text of a ``read_only`` block and keep
        it read-only), and no built-in tool reaches it. It is still one version step:
        every given setting changes in one transaction, or nothing does, and the block
        history keeps the version it replaced. Shares above a new permission are
        lowered to it. The text and limit that result are checked together, always as
        a hard limit. An edit that changes nothing keeps the version. Only the owner's
        blocks can be edited.

        Args:
            agent: The owner.
            label: The block (the owner's bare label).
            expected_version: The version the operator saw; the edit happens only while
                the block is still at it.
            value: The new text, or ``None`` to keep it.
            description: The new description, or ``None`` to keep it.
            permission: The new permission, or ``None`` to keep it.
            char_limit: The new limit (``>= 0``), ``None`` for no limit, or
                :attr:`Unset.UNSET <satchel.memory.Unset.UNSET>` (the default) to keep it.
            kind: Move the block to this kind, or ``None`` to keep it.

        Returns:
            The block as the edit left it.

        Raises:
            VersionConflictError: The block is no longer at ``expected_version``
                (nothing changes).
            CharLimitError: The text would be longer than the limit (nothing changes).
            NotFoundError: No such block.
            PermissionDeniedError: ``agent`` is a recipient of the block, not its owner.
            InvalidInputError: An argument is invalid (the message says which).

        Example:
            >>> block = await store.get_block("ada", "rules")  # doctest: +SKIP
            >>> await store.operator_edit(  # doctest: +SKIP
            ...     "ada", "rules", expected_version=block.version,
            ...     value="Share nothing.", permission=Permission.READ_ONLY,
            ... )
        """
        version = check_version_number(expected_version)
        change = check_change(
            BlockChange(
                value=value,
                description=description,
                permission=permission,
                char_limit=char_limit,
                kind=kind,
            )
        )
        pk, block = await self._owned(agent, label, "edit")
        new_text = change.value is not None and change.value != block.value
        vector = await self._vectors.embed_one(change.value) if new_text and change.value else None
        after = await self.backend.operator_write(
            agent, pk, change, expected_version=version, vector=vector
        )
        if after.version != block.version:
            logger.info(
                "operator edit of block %r of %r: version %d", block.label, agent, after.version
            )
        return after

    async def operator_delete(self, agent: str, label: str, *, expected_version: int) -> Block:
        """Delete a block as its human operator, at ``expected_version``, whatever its
        permission (no gate, no consent; no built-in tool reaches it). Its history goes
        with it. Only the owner's blocks can be deleted this way.

        Returns:
            The block as it was.

        Raises:
            VersionConflictError: The block is no longer at ``expected_version``
                (nothing is deleted).
            NotFoundError: No such block.
            PermissionDeniedError: ``agent`` is a recipient of the block, not its owner.
            InvalidInputError: ``expected_version`` or ``agent`` is invalid.
        """
        version = check_version_number(expected_version)
        pk, block = await self._owned(agent, label, "delete")
        gone = await self.backend.operator_delete(agent, pk, expected_version=version)
        logger.info("operator delete of block %r of %r", block.label, agent)
        return gone

    async def _owned_blocks(self, agent: str) -> list[Block]:
        blocks: list[Block] = []
        key: object = None
        while True:
            page, key = await self.backend.block_page(agent, key, 500)
            blocks.extend(page)
            if key is None:
                return blocks

    async def merge_agents(self, source: str, target: str, *, dry_run: bool = False) -> MergeReport:
        """Bring ``source``'s memory into ``target``'s, losing nothing, in one
        transaction (see :mod:`satchel.memory._merge` for the rules): blocks whose
        label ``target`` lacks move as they are, same-label blocks are joined line by
        line into ``target``'s, conversations move, and blocks other agents shared
        with ``source`` are shared with ``target``. An operator's write: no gate, no
        consent; a joined block may end over its limit (kept whole, and reported).

        Args:
            source: The agent merged from; it is left with no blocks or messages.
            target: The agent merged into (set up if new).
            dry_run: Only report what would be done.

        Returns:
            What was (or would be) done.

        Raises:
            VersionConflictError: ``source``'s memory changed while the merge was being
                planned (nothing written; run it again).
            InvalidInputError: ``source`` is ``target``, or a name is invalid.
            NotFoundError: ``source`` owns nothing and nothing is shared with it.

        Example:
            >>> report = await store.merge_agents("default", "me")  # doctest: +SKIP
            >>> [j.label for j in report.joined]  # doctest: +SKIP
            ['human', 'persona']
        """
        steps, moved, joined = plan_merge(
            source, target, await self._owned_blocks(source), await self._owned_blocks(target)
        )
        messages = sum(s.messages for s in await self.backend.agent_summaries(source))
        visible = await self.backend.list_visible(source, None)
        reshared = sum(1 for b in visible if b.agent != source and source in b.shares)
        if not (steps.read or messages or reshared):
            raise NotFoundError(
                f"agent {source!r} has no memory to merge (no blocks, messages or shares); "
                "check the name (satchel memory agents lists them)",
                details={"agent": source},
            )
        if not dry_run:
            with_vectors = [
                (after, dropped, await self._vectors.embed_one(after.value))
                for after, dropped, _ in steps.joined
            ]
            steps = MergeSteps(source=source, target=target, read=steps.read, joined=with_vectors)
            messages = await self.backend.merge_agents(steps)
            logger.info(
                "merged agent %r into %r: %d blocks moved, %d joined, %d messages",
                source,
                target,
                len(moved),
                len(joined),
                messages,
            )
        return MergeReport(
            source=source,
            target=target,
            moved=moved,
            joined=joined,
            messages=messages,
            reshared=reshared,
            dry_run=dry_run,
        )
