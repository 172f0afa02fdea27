"""The block steps of :class:`~satchel.memory.sqlite._backend.SQLiteBackend`: reading
blocks, and every write to one (text, append, replace, delete, kind changes, swaps,
sharing, configuration, the operator's edits), each in one transaction.

A write an agent makes re-checks the level the permission gate allowed first thing in
its transaction (:meth:`BlockSteps._checked`). :class:`BlockSteps` is a part the
backend holds, with the backend's :class:`Runner`.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Collection, Sequence
from typing import TypeVar

import numpy as np
import numpy.typing as npt

from satchel.memory._backend import NewBlock
from satchel.memory._history import BlockVersion
from satchel.memory._merge import MergeSteps
from satchel.memory._models import Block, BlockKind, Permission, Unset
from satchel.memory._operator import BlockChange
from satchel.memory.sqlite import _blocks, _history, _merge, _operator
from satchel.memory.sqlite._messages import BLOCKS, store_vectors
from satchel.memory.sqlite._paging import visible_page
from satchel.memory.sqlite._runner import Runner

__all__ = ["BlockSteps"]

_T = TypeVar("_T")
F32 = npt.NDArray[np.float32]


class BlockSteps:
    """The block steps of :class:`~satchel.memory.sqlite._backend.SQLiteBackend` (see
    the module docstring).

    Args:
        runner: How each step runs on the backend's database.
    """

    def __init__(self, runner: Runner) -> None:
        self.runner = runner

    async def _checked(
        self,
        agent: str,
        pk: int,
        level: Permission,
        write: Callable[[sqlite3.Connection], _T],
    ) -> _T:
        """Run ``write`` in one transaction that first re-checks the level the gate
        allowed."""

        def run(conn: sqlite3.Connection) -> _T:
            _blocks.check_level(conn, pk, agent, level)
            return write(conn)

        return await self.runner.write(run)

    # --- reading ------------------------------------------------------------------

    async def resolve(self, agent: str, labels: Sequence[str]) -> list[tuple[int, Block]]:
        return await self.runner.read(
            lambda conn: [_blocks.resolve(conn, agent, label) for label in labels]
        )

    async def resolve_id(self, agent: str, block_id: str) -> Block:
        return await self.runner.read(lambda conn: _blocks.resolve_id(conn, agent, block_id))

    async def list_visible(self, agent: str, kinds: Collection[BlockKind] | None) -> list[Block]:
        return await self.runner.read(lambda conn: _blocks.list_visible(conn, agent, kinds))

    async def list_visible_page(
        self, agent: str, kinds: Collection[BlockKind] | None, offset: int, limit: int
    ) -> tuple[list[Block], int]:
        return await self.runner.read(lambda conn: visible_page(conn, agent, kinds, offset, limit))

    async def block_history(self, block_id: str) -> list[BlockVersion]:
        """The kept earlier versions of a block (see :mod:`satchel.memory._history`)."""
        return await self.runner.read(lambda conn: _history.block_history(conn, block_id))

    # --- writing ------------------------------------------------------------------

    async def insert_block(self, new: NewBlock, vector: F32 | None) -> Block:
        def run(conn: sqlite3.Connection) -> Block:
            pk, block = _blocks.insert(conn, **new)
            if vector is not None:
                store_vectors(conn, BLOCKS, [(pk, new["value"])], vector[None, :])
            return block

        return await self.runner.write(run)

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
        def write(conn: sqlite3.Connection) -> Block:
            _, after = _blocks.set_text(
                conn,
                pk,
                value,
                expected_version=expected_version,
                description=description,
                hard_limit=hard_limit,
            )
            if vector is not None:
                store_vectors(conn, BLOCKS, [(pk, value)], vector[None, :])
            return after

        return await self._checked(agent, pk, level, write)

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
        return await self._checked(
            agent,
            pk,
            level,
            lambda conn: _blocks.append(conn, pk, text, separator, hard_limit=hard_limit),
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
        return await self._checked(
            agent,
            pk,
            level,
            lambda conn: _blocks.replace(
                conn,
                pk,
                old,
                new,
                expected_version=expected_version,
                hard_limit=hard_limit,
            ),
        )

    async def delete(
        self, agent: str, pk: int, level: Permission, *, expected_version: int | None
    ) -> Block:
        return await self._checked(
            agent,
            pk,
            level,
            lambda conn: _blocks.delete(conn, pk, expected_version=expected_version),
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
        blocks = await self._checked(
            agent,
            pk,
            level,
            lambda conn: _blocks.set_kinds(conn, [(pk, kind, expected_version)]),
        )
        return blocks[0]

    async def swap(
        self,
        agent: str,
        archive: tuple[int, Permission],
        load: tuple[int, Permission],
    ) -> tuple[Block, Block]:
        (a, level_a), (b, level_b) = archive, load

        def run(conn: sqlite3.Connection) -> tuple[Block, Block]:
            _blocks.check_level(conn, a, agent, level_a)
            _blocks.check_level(conn, b, agent, level_b)
            archived, loaded = _blocks.set_kinds(
                conn, [(a, BlockKind.ARCHIVAL, None), (b, BlockKind.WORKING, None)]
            )
            return archived, loaded

        return await self.runner.write(run)

    async def set_share(
        self,
        agent: str,
        pk: int,
        level: Permission,
        recipient: str,
        permission: Permission | None,
    ) -> Block:
        return await self._checked(
            agent,
            pk,
            level,
            lambda conn: _blocks.set_share(conn, pk, recipient, permission),
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
        return await self.runner.write(
            lambda conn: _blocks.configure(
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
        return await self.runner.write(
            lambda conn: _operator.operator_write(
                conn, pk, agent, change, expected_version=expected_version, vector=vector
            )
        )

    async def operator_delete(self, agent: str, pk: int, *, expected_version: int) -> Block:
        return await self.runner.write(
            lambda conn: _operator.operator_delete(
                conn, pk, agent, expected_version=expected_version
            )
        )

    async def merge_agents(self, steps: MergeSteps) -> int:
        return await self.runner.write(lambda conn: _merge.merge_agents(conn, steps))
