"""``context load`` of the person's archival entries from a project (``serve --agent
auto``): a copy in the project's working memory, reaching exactly what ``recall read``
reads by label, with the person's entry unchanged."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from satchel.builtin import memory_toolset
from satchel.memory import Block, BlockKind, Permission, SQLiteStore
from satchel.registry import ToolRegistry
from satchel.tools import ToolContext

pytestmark = pytest.mark.anyio

PERSON, APP, OTHER = "default", "project:github.com:acme:app", "project:github.com:acme:x"


@dataclass
class Project:
    store: SQLiteStore
    tools: ToolRegistry
    ctx: ToolContext

    async def call(self, tool: str, args: dict[str, Any]) -> dict[str, Any] | tuple[str, str]:
        result = await self.tools.call(tool, args, self.ctx)
        if result.error is not None:
            return result.error.kind, result.error.message
        out = result.structured()
        assert out is not None
        return out

    async def load(self, label: str, **extra: str) -> dict[str, Any] | tuple[str, str]:
        return await self.call("context", {"operation": "load", "label": label, **extra})

    async def blocks(self) -> dict[str, Block]:
        return {b.address_for(APP): b for b in await self.store.list_blocks(APP)}


@pytest.fixture
async def project(tmp_path: Path) -> AsyncIterator[Project]:
    async with SQLiteStore(tmp_path / "m.db", embedder=None) as store:
        await store.create_block(
            PERSON,
            "dentist",
            "Dr Lee, Tuesdays.",
            kind=BlockKind.ARCHIVAL,
            permission=Permission.ADMIN,
            tags=["health"],
            description="Who and when.",
        )
        await store.create_block(PERSON, "diary", "Private core block.")
        await store.create_block(OTHER, "secret", "Other project.", kind=BlockKind.ARCHIVAL)
        await store.share_block(OTHER, "secret", PERSON, Permission.READ_ONLY)
        tools = memory_toolset(store, global_agent=PERSON)
        yield Project(store, tools, ToolContext(agent=APP))


async def test_loading_the_person_s_entry_copies_it_into_the_project(project: Project) -> None:
    before = await project.store.get_block(PERSON, "dentist")

    out = await project.load("default/dentist")

    assert isinstance(out, dict)
    assert out["block"]["label"] == "dentist"
    assert "copy" in out["message"]
    assert "default/dentist" in out["message"]
    copy = (await project.blocks())["dentist"]
    assert (copy.agent, copy.kind, copy.value) == (APP, BlockKind.WORKING, "Dr Lee, Tuesdays.")
    assert (copy.tags, copy.description) == (("health",), "Who and when.")
    assert copy.permission is Permission.ADMIN  # the entry's own: the copy can be archived
    assert copy.metadata["loaded_from_id"] == before.id
    assert await project.store.get_block(PERSON, "dentist") == before  # unchanged


async def test_the_search_hit_s_label_loads_and_the_copy_can_be_archived_again(
    project: Project,
) -> None:
    found = await project.call("search", {"query": "Lee", "domain": "archival_memory"})
    assert isinstance(found, dict)
    [hit] = found["results"]

    assert isinstance(await project.load(hit["label"], target_label="gp"), dict)
    archived = await project.call("context", {"operation": "archive", "label": "gp"})

    assert isinstance(archived, dict)
    assert (await project.blocks())["gp"].kind is BlockKind.ARCHIVAL
    assert (await project.store.get_block(PERSON, "dentist")).kind is BlockKind.ARCHIVAL


async def test_a_read_only_entry_of_the_person_loads_as_a_read_only_copy(
    project: Project,
) -> None:
    await project.store.create_block(
        PERSON,
        "rules",
        "No pushes on Friday.",
        kind=BlockKind.ARCHIVAL,
        permission=Permission.READ_ONLY,
    )

    assert isinstance(await project.load("default/rules"), dict)

    assert (await project.blocks())["rules"].permission is Permission.READ_ONLY


async def test_a_taken_label_is_a_retry_that_names_target_label_and_changes_nothing(
    project: Project,
) -> None:
    await project.store.create_block(APP, "dentist", "The app's module.")
    before = await project.blocks()

    kind, message = await project.load("default/dentist")  # type: ignore[misc]

    assert kind == "retry"
    assert "target_label" in message
    assert "'dentist'" in message
    assert await project.blocks() == before


@pytest.mark.parametrize(
    "label",
    ["default/diary", "diary", f"{OTHER}/secret", "secret", "default/secret", "default/ghost"],
)
async def test_what_recall_read_cannot_open_does_not_load(project: Project, label: str) -> None:
    before = await project.blocks()

    kind, message = await project.load(label)  # type: ignore[misc]
    read = await project.call("recall", {"operation": "read", "label": label})

    assert (kind, read[0]) == ("failed", "failed")
    assert "\n" not in message
    assert repr(label) in message
    assert "Private" not in message
    assert "Other project" not in message
    assert await project.blocks() == before


async def test_the_project_s_own_entry_wins_over_the_person_s(project: Project) -> None:
    await project.store.create_block(APP, "dentist", "The app's.", kind=BlockKind.ARCHIVAL)

    out = await project.load("dentist")

    assert isinstance(out, dict)
    block = (await project.blocks())["dentist"]
    assert (block.value, block.kind) == ("The app's.", BlockKind.WORKING)  # moved in place
    assert (await project.store.get_block(PERSON, "dentist")).kind is BlockKind.ARCHIVAL


async def test_without_a_person_the_entry_stays_out_of_reach(tmp_path: Path) -> None:
    async with SQLiteStore(tmp_path / "m.db", embedder=None) as store:
        await store.create_block(PERSON, "dentist", "Dr Lee.", kind=BlockKind.ARCHIVAL)
        result = await memory_toolset(store).call(
            "context", {"operation": "load", "label": "default/dentist"}, ToolContext(agent=APP)
        )
        assert result.error is not None
        assert result.error.kind == "failed"
        assert await store.list_blocks(APP) == []
