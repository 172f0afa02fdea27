"""The console's writes against a model writing the same block from its own store of
the same file (as a ``satchel serve`` process does): each of the console's writes is
one step, so between any two store calls the console makes, the model finds the block
with the permission it had before or the one the form asked for, never a raised one;
and a model write that lands first makes the console's write fail whole."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from satchel import NotFoundError, PermissionDeniedError, VersionConflictError
from satchel.console._operator import BlockEdit, Operator
from satchel.memory import Block, BlockKind, GatedStore, Permission, SQLiteStore

pytestmark = pytest.mark.anyio


class WatchedStore(SQLiteStore):
    """The console's store, where the model (on its own store of the same file) reads
    the block and tries to append to it right after every call the console makes."""

    def __init__(self, path: Path, model: GatedStore) -> None:
        super().__init__(path, embedder=None)
        self.model = model
        self.seen: list[Permission] = []
        self.landed = 0
        self.gone = 0

    async def _model_turn(self, label: str) -> None:
        try:
            self.seen.append((await self.model.get_block("ada", label)).permission)
            await self.model.append_to_block("ada", label, "(model)")
            self.landed += 1
        except PermissionDeniedError:
            pass
        except NotFoundError:  # deleted: nothing to see
            self.gone += 1

    async def get_block(self, agent: str, label: str) -> Block:
        block = await super().get_block(agent, label)
        await self._model_turn(label)
        return block

    async def operator_edit(self, agent: str, label: str, **changes: Any) -> Block:
        block = await super().operator_edit(agent, label, **changes)
        await self._model_turn(label)
        return block

    async def operator_delete(self, agent: str, label: str, *, expected_version: int) -> Block:
        block = await super().operator_delete(agent, label, expected_version=expected_version)
        await self._model_turn(label)
        return block

    async def configure_block(self, agent: str, label: str, **changes: Any) -> Block:
        block = await super().configure_block(agent, label, **changes)
        await self._model_turn(label)
        return block


async def _stores(tmp_path: Path) -> tuple[WatchedStore, SQLiteStore]:
    model = SQLiteStore(tmp_path / "m.db", embedder=None)
    await model.create_block(
        "ada", "rules", "Never share the address.", permission=Permission.READ_ONLY
    )
    return WatchedStore(tmp_path / "m.db", model), model


async def test_the_model_never_finds_a_read_only_block_loosened_by_an_edit(
    tmp_path: Path,
) -> None:
    console, model = await _stores(tmp_path)
    block = await console.get_block("ada", "rules")
    edit = BlockEdit(
        value="Share nothing.",
        description="House rules",
        permission=Permission.READ_ONLY,
        char_limit=200,
        expected_version=block.version,
    )

    after = await Operator(console).edit("ada", "rules", edit)

    assert console.landed == 0
    assert set(console.seen) == {Permission.READ_ONLY}
    assert len(console.seen) >= 2  # the model looked before and after the edit
    assert (after.value, after.permission, after.version) == (
        "Share nothing.",
        Permission.READ_ONLY,
        block.version + 1,
    )
    history = await console.block_history("ada", "rules")
    assert [(v.version, v.value) for v in history] == [(1, "Never share the address.")]
    await console.close()
    await model.close()


async def test_the_model_never_finds_a_block_loosened_by_a_move_or_a_delete(
    tmp_path: Path,
) -> None:
    console, model = await _stores(tmp_path)
    operator = Operator(console)

    archived = await operator.move("ada", "rules", BlockKind.ARCHIVAL)
    loaded = await operator.move("ada", "rules", BlockKind.WORKING)
    gone = await operator.delete("ada", "rules", expected_version=loaded.version)

    assert console.landed == 0
    assert set(console.seen) == {Permission.READ_ONLY}
    assert (archived.kind, archived.version, archived.permission) == (
        BlockKind.ARCHIVAL,
        2,
        Permission.READ_ONLY,
    )
    assert (loaded.kind, loaded.version) == (BlockKind.WORKING, 3)
    assert gone == loaded
    assert console.gone == 1  # after the delete, the model found nothing
    assert [b.label for b in await model.list_blocks("ada")] == []
    await console.close()
    await model.close()


async def test_a_model_write_after_the_page_was_shown_refuses_the_edit_whole(
    tmp_path: Path,
) -> None:
    model = SQLiteStore(tmp_path / "m.db", embedder=None)
    console = SQLiteStore(tmp_path / "m.db", embedder=None)
    shown = await model.create_block("ada", "notes", "start")
    await model.append_to_block("ada", "notes", "(model)")  # the model writes meanwhile
    edit = BlockEdit(
        value="operator",
        description="mine",
        permission=Permission.READ_ONLY,
        char_limit=None,
        expected_version=shown.version,
    )

    with pytest.raises(VersionConflictError, match="changed while you edited it"):
        await Operator(console).edit("ada", "notes", edit)
    with pytest.raises(VersionConflictError, match="changed since you asked to delete it"):
        await Operator(console).delete("ada", "notes", expected_version=shown.version)

    after = await console.get_block("ada", "notes")
    assert (after.value, after.description, after.permission, after.version) == (
        "start\n(model)",
        "",
        Permission.READ_WRITE,
        2,
    )
    await console.close()
    await model.close()
