"""The SQLite store's vector index, saved beside the database: it agrees with the rows
after a SIGKILL, after a reopen, and when its files are stale, foreign or damaged."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import anyio
import numpy as np
import pytest

from satchel.memory import BlockKind, Domain, Permission, SQLiteStore
from satchel.memory.sqlite._indexes import index_folder
from satchel.memory.sqlite._messages import BLOCKS, MESSAGES

sys.path.insert(0, str(Path(__file__).parent))
from index_crash_writer import SeededEmbedder

WRITER = Path(__file__).with_name("index_crash_writer.py")


def _stored(path: Path) -> dict[int, dict[int, bytes]]:
    """Every stored vector, by domain and row id, read with plain sqlite3."""
    with sqlite3.connect(path) as raw:
        rows = raw.execute("SELECT domain, item, vec FROM embeddings").fetchall()
    out: dict[int, dict[int, bytes]] = {BLOCKS: {}, MESSAGES: {}}
    for domain, item, vec in rows:
        out[int(domain)][int(item)] = bytes(vec)
    return out


async def _assert_index_agrees(store: SQLiteStore) -> None:
    """The index holds exactly the stored vectors, finds each by its own vector, and
    the store's vector search returns no deleted block."""
    await store.search("ada", "anything", mode="vector", limit=1)  # loads and syncs
    indexes = store.backend._indexes  # pyright: ignore[reportPrivateUsage]
    assert indexes is not None
    stored = _stored(store.path)
    for domain in (BLOCKS, MESSAGES):
        index = indexes.indexes[domain]
        assert sorted(index.ids().tolist()) == sorted(stored[domain])
        for item, vec in stored[domain].items():
            query = np.frombuffer(vec, dtype=np.float32)
            ids, scores = index.search(query, 1)
            assert ids.tolist() == [item]
            assert scores[0] == pytest.approx(1.0, abs=2e-3)
    live = {b.label for b in await store.list_blocks("ada", [BlockKind.ARCHIVAL])}
    for i in range(40):
        hits = await store.search(
            "ada", f"entry text {i}", domains=Domain.ARCHIVAL_MEMORY, mode="vector", limit=5
        )
        assert hits
        assert {hit.label for hit in hits} <= live


def _run_writer_until(path: Path, lines: int) -> None:
    process = subprocess.Popen(
        [sys.executable, str(WRITER), str(path)], stdout=subprocess.PIPE, text=True
    )
    assert process.stdout is not None
    try:
        assert process.stdout.readline().strip() == "ready"
        for _ in range(lines):
            assert process.stdout.readline(), "the writer stopped early"
        os.kill(process.pid, signal.SIGKILL)  # mid-loop: writing, searching or saving
    finally:
        process.kill()
        process.wait(timeout=30)
    assert process.returncode == -signal.SIGKILL


@pytest.mark.parametrize("lines", [37, 130])
def test_after_a_sigkill_the_reopened_index_agrees_with_the_rows(
    tmp_path: Path, lines: int
) -> None:
    path = tmp_path / "killed.db"
    _run_writer_until(path, lines)
    assert (index_folder(path) / "manifest.json").exists()  # it had saved at least once

    async def check() -> None:
        async with await SQLiteStore.open(path, embedder=SeededEmbedder()) as store:
            await _assert_index_agrees(store)
            await store.create_block("ada", "after", "entry text after", kind=BlockKind.ARCHIVAL)
            await _assert_index_agrees(store)
        # Killed again with no writes: the second reopen loads what the close saved.
        async with await SQLiteStore.open(path, embedder=SeededEmbedder()) as store:
            await _assert_index_agrees(store)

    anyio.run(check)
    leftovers = [p.name for p in index_folder(path).iterdir() if p.name.endswith(".tmp")]
    assert leftovers == []
    assert len(list(index_folder(path).glob("*.usearch"))) == 2


async def _fill(path: Path, count: int, start: int = 0) -> None:
    async with await SQLiteStore.open(path, embedder=SeededEmbedder()) as store:
        for i in range(start, start + count):
            await store.create_block(
                "ada",
                f"entry-{i}",
                f"entry text {i}",
                kind=BlockKind.ARCHIVAL,
                permission=Permission.ADMIN,
            )
            await store.add_message("ada", "user", f"message {i}")
        await store.search("ada", "entry", mode="vector")


def _manifest(path: Path) -> dict[str, object]:
    return json.loads((index_folder(path) / "manifest.json").read_text("utf-8"))


def test_the_index_is_saved_on_close_and_loaded_not_rebuilt(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    anyio.run(_fill, path, 30)
    manifest = _manifest(path)
    with sqlite3.connect(path) as raw:
        seq = raw.execute("SELECT seq FROM sqlite_sequence WHERE name = 'embeddings'").fetchone()
    assert manifest["added"] == seq[0]

    async def reopen() -> None:
        async with await SQLiteStore.open(path, embedder=SeededEmbedder()) as store:
            await _assert_index_agrees(store)
            indexes = store.backend._indexes  # pyright: ignore[reportPrivateUsage]
            assert indexes is not None
            assert indexes._unsaved == 0  # pyright: ignore[reportPrivateUsage]
            # Served from the mapped files; changes go to the overlay, nothing is copied.
            assert all(index.viewed for index in indexes.indexes.values())
            await store.create_block("ada", "late", "entry text late", kind=BlockKind.ARCHIVAL)
            hits = await store.search("ada", "entry text late", mode="vector", limit=1)
            assert [h.label for h in hits] == ["late"]
            assert indexes.indexes[BLOCKS].viewed
            assert indexes.indexes[BLOCKS].overlaid == 1
            await _assert_index_agrees(store)

    anyio.run(reopen)


def test_writes_by_another_process_after_the_save_are_replayed(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    anyio.run(_fill, path, 20)
    saved = _manifest(path)

    async def write_without_search() -> None:  # never loads the index, so never saves it
        async with await SQLiteStore.open(path, embedder=SeededEmbedder()) as store:
            await store.delete_block("ada", "entry-3")
            await store.update_block_text("ada", "entry-4", "entry text rewritten")
            await store.create_block("ada", "late", "entry text late", kind=BlockKind.ARCHIVAL)

    anyio.run(write_without_search)
    assert _manifest(path) == saved

    async def check() -> None:
        async with await SQLiteStore.open(path, embedder=SeededEmbedder()) as store:
            await _assert_index_agrees(store)
            hits = await store.search("ada", "entry text late", mode="vector", limit=1)
            assert [h.label for h in hits] == ["late"]

    anyio.run(check)


def test_a_few_changes_over_mapped_files_are_left_to_the_log_at_close(tmp_path: Path) -> None:
    """Closing after a few changes does not copy the mapped index to save it: the next
    process replays them from the log; many changes are saved."""
    path = tmp_path / "m.db"
    anyio.run(_fill, path, 20)
    saved = _manifest(path)

    async def change(count: int) -> None:
        async with await SQLiteStore.open(path, embedder=SeededEmbedder()) as store:
            await store.search("ada", "entry", mode="vector")  # maps the saved files
            await store.delete_block("ada", f"entry-{count % 10}")
            for i in range(count):
                await store.create_block(
                    "ada",
                    f"late-{count}-{i}",
                    f"entry text late {count} {i}",
                    kind=BlockKind.ARCHIVAL,
                )
            hits = await store.search("ada", f"entry text late {count} 0", mode="vector", limit=1)
            assert [h.label for h in hits] == [f"late-{count}-0"]
            indexes = store.backend._indexes  # pyright: ignore[reportPrivateUsage]
            assert indexes is not None
            assert indexes.indexes[BLOCKS].viewed == (count < 500)

    anyio.run(change, 3)
    assert _manifest(path) == saved  # not saved: 4 changes are cheap to replay

    async def check() -> None:
        async with await SQLiteStore.open(path, embedder=SeededEmbedder()) as store:
            await _assert_index_agrees(store)
            hits = await store.search("ada", "entry text late 3 2", mode="vector", limit=1)
            assert [h.label for h in hits] == ["late-3-2"]

    anyio.run(check)
    anyio.run(change, 1_200)  # past the overlay's limit and the replay threshold
    assert int(_manifest(path)["added"]) > int(saved["added"])  # pyright: ignore[reportArgumentType]
    anyio.run(check)


@pytest.mark.parametrize("damage", ["garbage", "missing_file", "bad_json", "ahead", "foreign"])
def test_damaged_or_foreign_index_files_are_rebuilt(tmp_path: Path, damage: str) -> None:
    path = tmp_path / "m.db"
    anyio.run(_fill, path, 25)
    folder = index_folder(path)
    manifest = _manifest(path)
    files = manifest["files"]
    assert isinstance(files, dict)
    if damage == "garbage":
        (folder / str(files[str(BLOCKS)])).write_bytes(b"\x00garbage" * 100)
    elif damage == "missing_file":
        (folder / str(files[str(MESSAGES)])).unlink()
    elif damage == "bad_json":
        (folder / "manifest.json").write_text("{not json", "utf-8")
    elif damage == "ahead":  # e.g. the database was restored from an older copy
        manifest["added"] = 10_000
        (folder / "manifest.json").write_text(json.dumps(manifest), "utf-8")
    else:  # another database's index copied beside this one
        other = tmp_path / "other.db"
        anyio.run(_fill, other, 5, 500)
        shutil.rmtree(folder)
        shutil.copytree(index_folder(other), folder)

    async def check() -> None:
        async with await SQLiteStore.open(path, embedder=SeededEmbedder()) as store:
            await _assert_index_agrees(store)

    anyio.run(check)
    assert _manifest(path)["database_id"] == manifest["database_id"]


def test_rows_changed_behind_the_log_are_repaired_on_open(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    anyio.run(_fill, path, 25)
    with sqlite3.connect(path) as raw:  # vectors dropped and their log entries lost
        raw.execute("DELETE FROM embeddings WHERE domain = 0 AND item IN (3, 4, 5)")
        raw.execute("DELETE FROM embedding_deletes")

    async def check() -> None:
        async with await SQLiteStore.open(path, embedder=SeededEmbedder()) as store:
            await _assert_index_agrees(store)

    anyio.run(check)


def test_an_unwritable_index_folder_only_costs_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "m.db"
    index_folder(path).write_text("a file where the folder should be", "utf-8")

    async def run() -> None:
        async with await SQLiteStore.open(path, embedder=SeededEmbedder()) as store:
            await store.create_block("ada", "one", "entry text 1", kind=BlockKind.ARCHIVAL)
            hits = await store.search("ada", "entry text 1", mode="vector", limit=1)
            assert [h.label for h in hits] == ["one"]

    anyio.run(run)
    assert "cannot save the vector index" in caplog.text
