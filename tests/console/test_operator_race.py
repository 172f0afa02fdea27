"""The operator's loosen-write-restore steps when a model writes in between: the
console's edit fails on the version, and the block keeps the permission it had."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from satchel import VersionConflictError
from satchel.console._operator import BlockEdit, Operator, operator_view
from satchel.memory import Block, BlockKind, GatedStore, MemoryStore, Permission, SQLiteStore

pytestmark = pytest.mark.anyio


class RacedStore(GatedStore):
    """The operator's view of a real store, where another writer (the model, on its own
    store of the same file) appends to the block right after each permission change."""

    def __init__(self, inner: GatedStore, model: MemoryStore) -> None:
        super().__init__(inner.backend, embedder=None, consent=inner.consent)
        self.model = model
        self.raced = 0

    async def configure_block(self, agent: str, label: str, **changes: Any) -> Block:
        block = await super().configure_block(agent, label, **changes)
        if changes.get("permission") in (Permission.READ_WRITE, Permission.ADMIN):
            await self.model.append_to_block(agent, label, "(model)")  # allowed: loosened
            self.raced += 1
        return block


async def _stores(tmp_path: Path) -> tuple[SQLiteStore, SQLiteStore]:
    operator_store = SQLiteStore(tmp_path / "m.db", embedder=None)
    model_store = SQLiteStore(tmp_path / "m.db", embedder=None)
    await operator_store.create_block(
        "ada", "rules", "Never share the address.", permission=Permission.READ_ONLY
    )
    return operator_store, model_store


async def test_a_failed_overwrite_puts_the_permission_back(tmp_path: Path) -> None:
    operator_store, model_store = await _stores(tmp_path)
    view = operator_view(operator_store)
    assert isinstance(view, GatedStore)
    raced = RacedStore(view, model_store)
    block = await operator_store.get_block("ada", "rules")
    edit = BlockEdit(
        value="Share nothing.",
        description=block.description,
        permission=Permission.READ_ONLY,
        char_limit=block.char_limit,
        expected_version=block.version,
    )

    with pytest.raises(VersionConflictError):
        await Operator(raced).edit("ada", "rules", edit)

    after = await operator_store.get_block("ada", "rules")
    assert raced.raced == 1
    assert after.permission is Permission.READ_ONLY
    assert after.value.startswith("Never share the address.")
    assert after.value.endswith("(model)")  # the model's write stands; the edit did not
    await operator_store.close()
    await model_store.close()


async def test_a_failed_delete_or_move_puts_the_permission_back(tmp_path: Path) -> None:
    operator_store, model_store = await _stores(tmp_path)
    view = operator_view(operator_store)
    assert isinstance(view, GatedStore)
    raced = RacedStore(view, model_store)
    block = await operator_store.get_block("ada", "rules")

    with pytest.raises(VersionConflictError):
        await Operator(raced).delete("ada", "rules", expected_version=block.version)
    with pytest.raises(VersionConflictError):
        await Operator(raced).move("ada", "rules", BlockKind.ARCHIVAL)

    after = await operator_store.get_block("ada", "rules")
    assert raced.raced == 2
    assert after.permission is Permission.READ_ONLY
    assert after.kind is BlockKind.CORE
    await operator_store.close()
    await model_store.close()
