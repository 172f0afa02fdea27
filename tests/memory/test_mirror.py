"""A Markdown folder kept in step with memory both ways while a mirror runs: real files,
a real SQLite store and the OS's file notifications through watchfiles."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import pytest

from satchel._errors import InvalidInputError
from satchel.memory import (
    BlockKind,
    MarkdownMirror,
    MarkdownReport,
    MemoryStore,
    Permission,
    SQLiteStore,
    export_markdown,
    import_markdown,
)
from satchel.memory._markdown import file_name

pytestmark = pytest.mark.anyio

WAIT = 20.0  # the most a change may take to cross (a poll, or a file notification)


async def _eventually(check: Callable[[], object]) -> None:
    """Wait until ``check()`` is true (awaited when it returns an awaitable)."""
    with anyio.fail_after(WAIT):
        while True:
            got = check()
            if hasattr(got, "__await__"):
                got = await got  # type: ignore[misc]
            if got:
                return
            await anyio.sleep(0.05)


@asynccontextmanager
async def mirroring(
    store: MemoryStore, folder: Path, reports: list[MarkdownReport] | None = None
) -> AsyncGenerator[MarkdownMirror]:
    mirror = MarkdownMirror(
        store, "ada", folder, interval=0.2, on_report=None if reports is None else reports.append
    )
    async with anyio.create_task_group() as tg:
        await tg.start(mirror.run)
        yield mirror
        tg.cancel_scope.cancel()


async def _store(path: Path) -> MemoryStore:
    store = await SQLiteStore.open(path, embedder=None)
    await store.ensure_agent("ada")
    await store.update_block_text("ada", "human", "Likes green tea.\n")
    await store.create_block("ada", "trip", "Lisbon, 3 days", kind=BlockKind.ARCHIVAL)
    return store


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new), encoding="utf-8")


async def test_store_changes_are_written_out_and_file_edits_read_in(tmp_path: Path) -> None:
    store = await _store(tmp_path / "m.db")
    folder = tmp_path / "memory"
    human = folder / "blocks" / "human.md"
    try:
        async with mirroring(store, folder) as mirror:
            assert human.read_text().endswith("Likes green tea.\n")
            assert (folder / "archival" / "trip.md").is_file()
            await store.append_to_block("ada", "human", "Lives in Porto.")
            mirror.poke()
            await _eventually(lambda: "Lives in Porto." in human.read_text())
            _edit(human, "green tea", "black coffee")
            await _eventually(
                lambda: _value(store, "human", "Likes black coffee.\n\nLives in Porto.")
            )
            new = folder / "blocks" / "ideas.md"
            new.write_text("---\nlabel: ideas\nkind: working\n---\nA garden.", encoding="utf-8")
            await _eventually(lambda: _value(store, "ideas", "A garden."))
            await store.configure_block("ada", "ideas", permission=Permission.ADMIN)
            await store.delete_block("ada", "ideas")
            await _eventually(lambda: not new.exists())
            await _eventually(lambda: "version: 4" in human.read_text())
        final = await store.get_block("ada", "human")
    finally:
        await store.close()
    assert final.value == "Likes black coffee.\n\nLives in Porto."
    assert "human" in (folder / "index.md").read_text()
    assert not (folder / "conflicts").exists()


async def test_an_edit_against_a_changed_block_is_a_conflict_that_loses_nothing(
    tmp_path: Path,
) -> None:
    store = await _store(tmp_path / "m.db")
    folder = tmp_path / "memory"
    human = folder / "blocks" / "human.md"
    reports: list[MarkdownReport] = []
    try:
        async with mirroring(store, folder, reports):
            stale = human.read_text()
        await store.update_block_text("ada", "human", "Moved to Lisbon.\n")  # mirror stopped
        human.write_text(stale.replace("green tea", "mint tea"), encoding="utf-8")
        async with mirroring(store, folder, reports):
            kept = await store.get_block("ada", "human")
            theirs = folder / "conflicts" / "human.md"
            mine = human.read_text()
    finally:
        await store.close()
    assert kept.value == "Moved to Lisbon.\n"  # the store's newer text stays
    assert "mint tea" in mine  # the hand edit stays too
    assert theirs.read_text().endswith("Moved to Lisbon.\n")
    assert any("human" in r.conflicts for r in reports)


async def test_an_unedited_file_left_behind_is_brought_up_to_date(tmp_path: Path) -> None:
    store = await _store(tmp_path / "m.db")
    folder = tmp_path / "memory"
    human = folder / "blocks" / "human.md"
    try:
        async with mirroring(store, folder):
            pass
        await store.update_block_text("ada", "human", "Moved to Lisbon.\n")  # mirror stopped
        async with mirroring(store, folder):
            text = human.read_text()
        value = (await store.get_block("ada", "human")).value
    finally:
        await store.close()
    assert text.endswith("Moved to Lisbon.\n")
    assert value == "Moved to Lisbon.\n"
    assert not (folder / "conflicts").exists()


async def test_a_broken_file_is_reported_and_changes_nothing(tmp_path: Path) -> None:
    store = await _store(tmp_path / "m.db")
    folder = tmp_path / "memory"
    reports: list[MarkdownReport] = []
    try:
        async with mirroring(store, folder, reports):
            (folder / "blocks" / "bad.md").write_text("no front matter", encoding="utf-8")
            (folder / "blocks" / "human.md").write_text("---\n[oops\n---\nx", encoding="utf-8")
            await _eventually(lambda: len({k for r in reports for k in r.refused}) >= 2)
        human = await store.get_block("ada", "human")
        labels = {b.label for b in await store.list_blocks("ada")}
    finally:
        await store.close()
    assert human.value == "Likes green tea.\n"
    assert labels == {"persona", "human", "trip"}


def test_the_interval_must_be_positive(tmp_path: Path) -> None:
    from satchel import InvalidInputError

    with pytest.raises(InvalidInputError, match="interval"):
        MarkdownMirror(None, "ada", tmp_path, interval=0)  # type: ignore[arg-type]


async def _value(store: MemoryStore, label: str, value: str) -> bool:
    try:
        return (await store.get_block("ada", label)).value == value
    except Exception:  # not there yet
        return False


LONG_LABELS = ["notes-" + "x" * 122, "ノート" * 42 + "ab", "Ünïcødé label " * 8 + "end"]


@pytest.mark.parametrize("label", LONG_LABELS)
async def test_every_valid_label_gets_a_file_name_every_filesystem_takes(
    tmp_path: Path, label: str
) -> None:
    name = file_name(label)
    assert len(name.encode()) <= 143  # eCryptfs, the tightest common limit
    assert name.isascii()
    assert file_name(label + "!") != name  # a hash keeps cut names apart
    store = await _store(tmp_path / "m.db")
    folder = tmp_path / "memory"
    try:
        await store.create_block("ada", label, "kept", kind=BlockKind.ARCHIVAL)
        async with mirroring(store, folder):
            assert (folder / "archival" / name).read_text(encoding="utf-8").endswith("kept")
        report = await export_markdown(store, "ada", tmp_path / "export")
        assert f"archival/{name}" in report.written
    finally:
        await store.close()
    restored = await SQLiteStore.open(tmp_path / "restored.db", embedder=None)
    try:
        await import_markdown(restored, "ada", tmp_path / "export")
        assert (await restored.get_block("ada", label)).value == "kept"
    finally:
        await restored.close()


async def test_a_file_that_cannot_be_written_never_stops_the_mirror(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = await _store(tmp_path / "m.db")
    folder = tmp_path / "memory"
    (folder / "archival" / "trip.md").mkdir(parents=True)  # in the way of the entry's file
    human = folder / "blocks" / "human.md"
    try:
        async with mirroring(store, folder) as mirror:
            await store.append_to_block("ada", "human", "Lives in Porto.")
            mirror.poke()
            await _eventually(lambda: "Lives in Porto." in human.read_text())
        assert "could not write" in caplog.text
        assert (await store.get_block("ada", "trip")).value == "Lisbon, 3 days"
    finally:
        await store.close()


async def test_a_block_folder_linked_elsewhere_is_refused_and_nothing_lands_there(
    tmp_path: Path,
) -> None:
    store = await _store(tmp_path / "m.db")
    folder = tmp_path / "memory"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    folder.mkdir()
    (folder / "archival").symlink_to(elsewhere, target_is_directory=True)
    try:
        with pytest.raises(InvalidInputError, match="symbolic link"):
            await MarkdownMirror(store, "ada", folder).run()
    finally:
        await store.close()
    assert list(elsewhere.iterdir()) == []


async def test_a_linked_block_file_is_refused_with_a_reason_and_never_written_through(
    tmp_path: Path,
) -> None:
    store = await _store(tmp_path / "m.db")
    folder = tmp_path / "memory"
    outside = tmp_path / "outside.md"
    outside.write_text("---\nlabel: trip\nkind: archival\n---\nParis", encoding="utf-8")
    (folder / "archival").mkdir(parents=True)
    (folder / "archival" / "trip.md").symlink_to(outside)
    reports: list[MarkdownReport] = []
    try:
        async with mirroring(store, folder, reports) as mirror:
            await mirror.read_in([folder / "archival" / "trip.md"])
            await store.append_to_block("ada", "trip", " and Porto")
            await mirror.write_out()
        trip = await store.get_block("ada", "trip")
    finally:
        await store.close()
    assert trip.value == "Lisbon, 3 days\n and Porto"  # the linked file was not read in
    assert outside.read_text(encoding="utf-8").endswith("Paris")  # nor written through
    assert any("symbolic link" in why for r in reports for why in r.refused.values())
