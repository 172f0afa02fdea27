"""``satchel memory export --format markdown DIR``, ``satchel memory import DIR`` and
``satchel memory mirror DIR``."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from typer.testing import CliRunner, Result

from satchel.cli import app

runner = CliRunner()


def memory(db: Path, *args: str) -> Result:
    env = {
        "COLUMNS": "200",
        "SATCHEL_DB": str(db),
        "SATCHEL_AGENT": "ada",
        "SATCHEL_TEMPLATE": "none",
    }
    return runner.invoke(app, ["memory", *args], env=env, catch_exceptions=False)


def test_export_edit_and_import_a_folder_with_a_conflict_reported(tmp_path: Path) -> None:
    db, folder = tmp_path / "m.db", tmp_path / "md"
    assert memory(db, "set", "human", "Lives in Porto.").exit_code == 0
    assert memory(db, "set", "notes", "Buy milk.").exit_code == 0
    exported = memory(db, "export", "--format", "markdown", str(folder))
    assert exported.exit_code == 0, exported.output
    assert "Exported 2 blocks" in exported.stderr

    human = folder / "blocks" / "human.md"
    human.write_text(human.read_text().replace("Porto", "Lisbon"))
    imported = memory(db, "import", str(folder))
    assert imported.exit_code == 0, imported.output
    assert "Updated 1, created 0, unchanged 1." in imported.stderr
    assert "Lisbon" in memory(db, "show", "human").stdout

    notes = folder / "blocks" / "notes.md"
    assert memory(db, "append", "notes", "And eggs.").exit_code == 0
    notes.write_text(notes.read_text().replace("milk", "bread"))
    conflicted = memory(db, "import", str(folder), "--json")
    assert conflicted.exit_code == 1
    assert "changed in the store since the export" in conflicted.stdout
    assert "eggs" in memory(db, "show", "notes").stdout


def test_markdown_export_needs_a_folder_and_one_agent(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    assert memory(db, "set", "human", "x").exit_code == 0
    missing = memory(db, "export", "--format", "markdown")
    assert missing.exit_code == 2
    assert "give DIR" in missing.stderr
    folder = tmp_path / "d"
    folder.mkdir()
    jsonl = memory(db, "export", str(folder))
    assert jsonl.exit_code == 2
    assert "is a folder" in jsonl.stderr


def test_memory_mirror_runs_until_interrupted_and_reads_edits_in(tmp_path: Path) -> None:
    db, folder = tmp_path / "m.db", tmp_path / "md"
    assert memory(db, "set", "notes", "Buy milk.").exit_code == 0
    env = {**os.environ, "SATCHEL_DB": str(db), "SATCHEL_AGENT": "ada"}
    process = subprocess.Popen(
        [sys.executable, "-m", "satchel", "memory", "mirror", str(folder)],
        env=env,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stderr is not None
        banner = process.stderr.readline()  # printed once the folder is written and watched
        notes = next((folder / "blocks").glob("notes*.md"))
        notes.write_text(notes.read_text().replace("Buy milk.", "Buy oat milk."))
        for _ in range(400):
            shown = memory(db, "show", "notes").stdout
            if "oat milk" in shown:
                break
            time.sleep(0.05)
    finally:
        process.send_signal(signal.SIGINT)
        code = process.wait(timeout=30)
    assert "mirroring the memory of 'ada'" in banner
    assert "Buy oat milk." in shown
    assert code == 0
