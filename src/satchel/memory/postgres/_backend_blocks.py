"""The block steps of :class:`~satchel.memory.postgres._backend.PostgresBackend`:
reading blocks, and every write to one (text, append, replace, delete, kind changes,
swaps, sharing, configuration, the operator's edits).

Each write is one statement that re-checks the level the permission gate allowed
(:mod:`._block_guard`; the reads are in :mod:`._blocks`, the writes in
:mod:`._block_writes` and :mod:`._block_settings`). :class:`BlockSteps` is a part the
backend holds, with the backend's :class:`Runner`.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

import numpy as np
import numpy.typing as npt

from satchel.memory._backend import NewBlock
from satchel.memory._history import BlockVersion
from satchel.memory._merge import MergeSteps
from satchel.memory._models import Block, BlockKind, Permission, Unset
from satchel.memory._operator import BlockChange
from satchel.memory.postgres import (
    _block_settings,
    _block_writes,
    _blocks,
    _history,
    _merge,
    _operator,
)
from satchel.memory.postgres._db import Conn
from satchel.memory.postgres._paging import visible_page
from satchel.memory.postgres._runner import Runner

__all__ = ["BlockSteps"]

F32 = npt.NDArray[np.float32]


class BlockSteps:
    """The block steps of :class:`~satchel.memory.postgres._backend.PostgresBackend`
    (see the module docstring).

    Args:
        runner: How each step runs on the backend's database.
    """

    def __init__(self, runner: Runner) -> None:
        self.runner = runner

    # --- reading ------------------------------------------------------------------

    async def resolve(self, agent: str, labels: Sequence[str]) -> list[tuple[int, Block]]:
        async def resolve_all(conn: Conn) -> list[tuple[int, Block]]:
            return [await _blocks.resolve(conn, agent, label) for label in labels]

        return await self.runner.run(resolve_all)

    async def resolve_id(self, agent: str, block_id: str) -> Block:
        return await self.runner.run(lambda conn: _blocks.resolve_id(conn, agent, block_id))

    async def list_visible(self, agent: str, kinds: Collection[BlockKind] | None) -> list[Block]:
        return await self.runner.run(lambda conn: _blocks.list_visible(conn, agent, kinds))

    async def list_visible_page(
        self, agent: str, kinds: Collection[BlockKind] | None, offset: int, limit: int
    ) -> tuple[list[Block], int]:
        return await self.runner.run(lambda conn: visible_page(conn, agent, kinds, offset, limit))

    async def block_history(self, block_id: str) -> list[BlockVersion]:
        """The kept earlier versions of a block (see :mod:`satchel.memory._history`)."""
        return await self.runner.run(lambda conn: _history.block_history(conn, block_id))

    # --- writing ------------------------------------------------------------------

    async def insert_block(self, new: NewBlock, vector: F32 | None) -> Block:
        model = self.runner.model
        _, block = await self.runner.run(
            lambda conn: _block_writes.insert(conn, **new, vector=vector, model=model)
        )
        return block

    async def set_text(
        self,
        agent: str,
        pk: int,
        level: Permission,
        value: str,
        *,
        expected_version: int | None,
        description: str | None,
        vector: F32 | None,
        hard_limit: bool,
    ) -> Block:
        model = self.runner.model
        return await self.runner.run(
            lambda conn: _block_writes.set_text(
                conn,
                pk,
                agent,
                level,
                value,
                expected_version=expected_version,
                description=description,
                hard_limit=hard_limit,
                vector=vector,
                model=model,
            )
        )

    async def append(
        self,
        agent: str,
        pk: int,
        level: Permission,
        text: str,
        separator: str,
        *,
        hard_limit: bool,
    ) -> Block:
        return await self.runner.run(
            lambda conn: _block_writes.append(
                conn, pk, agent, level, text, separator, hard_limit=hard_limit
            )
        )

    async def replace(
        self,
        agent: str,
        pk: int,
        level: Permission,
        old: str,
        new: str,
        *,
        expected_version: int | None,
        hard_limit: bool,
    ) -> Block:
        return await self.runner.run(
            lambda conn: _block_writes.replace(
                conn,
                pk,
                agent,
                level,
                old,
                new,
                expected_version=expected_version,
                hard_limit=hard_limit,
            )
        )

    async def delete(
        self, agent: str, pk: int, level: Permission, *, expected_version: int | None
    ) -> Block:
        return await self.runner.run(
            lambda conn: _block_writes.delete(
                conn, pk, agent, level, expected_version=expected_version
            )
        )

    async def set_kind(
        self,
        agent: str,
        pk: int,
        level: Permission,
        kind: BlockKind,
        *,
        expected_version: int | None,
    ) -> Block:
        return await self.runner.run(
            lambda conn: _block_settings.set_kind(
                conn, pk, agent, level, kind, expected_version=expected_version
            )
        )

    async def swap(
        self,
        agent: str,
        archive: tuple[int, Permission],
        load: tuple[int, Permission],
    ) -> tuple[Block, Block]:
        return await self.runner.run(lambda conn: _block_settings.swap(conn, agent, archive, load))

    async def set_share(
        self,
        agent: str,
        pk: int,
        level: Permission,
        recipient: str,
        permission: Permission | None,
    ) -> Block:
        return await self.runner.run(
            lambda conn: _block_settings.set_share(conn, pk, agent, level, recipient, permission)
        )

    async def configure(
        self,
        agent: str,
        pk: int,
        *,
        permission: Permission | None,
        char_limit: int | Unset | None,
        description: str | None,
    ) -> Block:
        return await self.runner.run(
            lambda conn: _block_settings.configure(
                conn,
                pk,
                agent,
                permission=permission,
                char_limit=char_limit,
                description=description,
            )
        )

    async def operator_write(
        self,
        agent: str,
        pk: int,
        change: BlockChange,
        *,
        expected_version: int,
        vector: F32 | None,
    ) -> Block:
        model = self.runner.model
        return await self.runner.run(
            lambda conn: _operator.operator_write(
                conn,
                pk,
                agent,
                change,
                expected_version=expected_version,
                vector=vector,
                model=model,
            )
        )

    async def operator_delete(self, agent: str, pk: int, *, expected_version: int) -> Block:
        return await self.runner.run(
            lambda conn: _operator.operator_delete(
                conn, pk, agent, expected_version=expected_version
            )
        )

    async def merge_agents(self, steps: MergeSteps) -> int:
        model = self.runner.model
        return await self.runner.run(lambda conn: _merge.merge_agents(conn, steps, model))
