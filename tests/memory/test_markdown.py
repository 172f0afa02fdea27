"""Memory as Markdown: an export a person can edit and keep in git, read back through
the gate with a version check."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from satchel import InvalidInputError
from satchel.memory import (
    BlockKind,
    MemoryStore,
    Permission,
    SQLiteStore,
    export_markdown,
    import_markdown,
)
from satchel.memory._markdown import file_name

pytestmark = pytest.mark.anyio


async def _filled(path: Path) -> MemoryStore:
    store = await SQLiteStore.open(path, embedder=None)
    await store.ensure_agent("ada")
    await store.update_block_text("ada", "human", "Likes green tea.\nLives in Porto.\n")
    await store.create_block(
        "ada", "Project: Äsop", "Ships in May.", description="the project",
        kind=BlockKind.WORKING, char_limit=500, tags=["work"], metadata={"source": "chat"},
    )  # fmt: skip
    await store.create_block("ada", "trip", "Lisbon, 3 days", kind=BlockKind.ARCHIVAL)
    await store.create_block("ada", "rules", "Be kind.", permission=Permission.READ_ONLY)
    await store.share_block("ada", "trip", "bob", Permission.READ_ONLY)
    return store


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*.md"))}


async def test_an_export_round_trips_to_an_identical_store(tmp_path: Path) -> None:
    source = await _filled(tmp_path / "a.db")
    try:
        await export_markdown(source, "ada", tmp_path / "one")
        before = await source.list_blocks("ada")
    finally:
        await source.close()
    async with SQLiteStore(tmp_path / "b.db", embedder=None) as copy:
        report = await import_markdown(copy, "ada", tmp_path / "one", exact=True)
        after = await copy.list_blocks("ada")
        await export_markdown(copy, "ada", tmp_path / "two")
    assert sorted(report.created) == sorted(b.label for b in before)
    assert [b.model_dump() for b in after] == [b.model_dump() for b in before]
    assert _tree(tmp_path / "one") == _tree(tmp_path / "two")  # a git diff shows nothing
    assert (tmp_path / "one" / "blocks" / "human.md").read_text().endswith("Lives in Porto.\n")
    assert (tmp_path / "one" / "archival" / "trip.md").is_file()
    assert "| trip | archival |" in (tmp_path / "one" / "index.md").read_text()


async def test_a_hand_edit_updates_its_block_and_a_new_file_makes_a_new_block(
    tmp_path: Path,
) -> None:
    store = await _filled(tmp_path / "a.db")
    try:
        await export_markdown(store, "ada", tmp_path / "x")
        human = tmp_path / "x" / "blocks" / "human.md"
        human.write_text(human.read_text().replace("Porto", "Lisbon"))
        fresh = (tmp_path / "x" / "blocks" / "human.md").read_text()
        fresh = fresh.replace("label: human", "label: plans").replace("version: 2", "version: 1")
        (tmp_path / "x" / "blocks" / "plans.md").write_text(fresh)
        (tmp_path / "x" / "archival" / "trip.md").unlink()  # nothing is deleted
        report = await import_markdown(store, "ada", tmp_path / "x")
        edited = await store.get_block("ada", "human")
        plans = await store.get_block("ada", "plans")
        trip = await store.get_block("ada", "trip")
    finally:
        await store.close()
    assert report.written == ["human"]
    assert report.created == ["plans"]
    assert edited.value == "Likes green tea.\nLives in Lisbon.\n"
    assert edited.version == 3
    assert plans.value == edited.value
    assert trip.value == "Lisbon, 3 days"


async def test_a_block_changed_since_the_export_is_a_conflict_and_keeps_its_value(
    tmp_path: Path,
) -> None:
    store = await _filled(tmp_path / "a.db")
    try:
        await export_markdown(store, "ada", tmp_path / "x")
        await store.append_to_block("ada", "human", "Has a cat.")
        human = tmp_path / "x" / "blocks" / "human.md"
        human.write_text(human.read_text().replace("Porto", "Lisbon"))
        rules = tmp_path / "x" / "blocks" / "rules.md"
        rules.write_text(rules.read_text().replace("Be kind.", "Be rude."))
        report = await import_markdown(store, "ada", tmp_path / "x")
        kept = await store.get_block("ada", "human")
        rules_now = await store.get_block("ada", "rules")
    finally:
        await store.close()
    assert "version 2 exported, 3 now" in report.conflicts["human"]
    assert kept.value.endswith("Has a cat.")
    assert "read_only" in report.refused["rules"]  # the gate decides, as for an agent
    assert rules_now.value == "Be kind."


async def test_a_file_without_front_matter_changes_nothing(tmp_path: Path) -> None:
    store = await _filled(tmp_path / "a.db")
    try:
        await export_markdown(store, "ada", tmp_path / "x")
        human = tmp_path / "x" / "blocks" / "human.md"
        human.write_text(human.read_text().replace("Porto", "Lisbon"))
        (tmp_path / "x" / "blocks" / "zz.md").write_text("just text")
        with pytest.raises(InvalidInputError, match=r"zz\.md: no front matter"):
            await import_markdown(store, "ada", tmp_path / "x")
        with pytest.raises(InvalidInputError, match="no Markdown export"):
            await import_markdown(store, "ada", tmp_path)
        value = (await store.get_block("ada", "human")).value
    finally:
        await store.close()
    assert "Porto" in value


@given(st.lists(st.text(min_size=1, max_size=40), min_size=2, max_size=6, unique=True))
def test_file_names_are_safe_everywhere_and_never_collide(labels: list[str]) -> None:
    names = [file_name(label) for label in labels]
    assert len({name.lower() for name in names}) == len(labels)  # case-insensitive OSes
    for name in names:
        assert re.fullmatch(r"[a-z0-9._%-]+(~[0-9a-f]{16})?\.md", name)
        assert len(name) <= 116
        assert not name.startswith(".")
        assert name.split(".")[0] not in {"con", "prn", "aux", "nul"}


async def test_a_front_matter_setting_change_is_reported_as_not_applied(tmp_path: Path) -> None:
    store = await _filled(tmp_path / "a.db")
    try:
        await export_markdown(store, "ada", tmp_path / "x")
        rules = tmp_path / "x" / "blocks" / "rules.md"
        rules.write_text(rules.read_text().replace("permission: read_only", "permission: admin"))
        report = await import_markdown(store, "ada", tmp_path / "x")
        stored = await store.get_block("ada", "rules")
    finally:
        await store.close()
    assert stored.permission is Permission.READ_ONLY  # an import never changes it
    assert "rules" in report.unchanged
    assert "permission" in report.ignored["rules"]
    assert "satchel memory configure" in report.ignored["rules"]
    assert list(report.ignored) == ["rules"]
