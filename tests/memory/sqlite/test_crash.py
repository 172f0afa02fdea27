"""A writer killed with SIGKILL mid-burst leaves a database that opens and holds every
write it acknowledged."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from satchel.memory import SQLiteStore

WRITER = Path(__file__).with_name("crash_writer.py")


@pytest.mark.parametrize("acks_before_kill", [150, 601])
def test_a_killed_writer_loses_no_acknowledged_write(tmp_path: Path, acks_before_kill: int) -> None:
    path = tmp_path / "crash.db"
    process = subprocess.Popen(
        [sys.executable, str(WRITER), str(path)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    acknowledged: list[str] = []
    try:
        assert process.stdout.readline().strip() == "ready"
        while len(acknowledged) < acks_before_kill:
            line = process.stdout.readline()
            assert line, "the writer stopped early"
            acknowledged.append(line.strip())
        os.kill(process.pid, signal.SIGKILL)  # mid-burst: it is writing the next one
        acknowledged.extend(line.strip() for line in process.stdout if line.strip())
    finally:
        process.kill()
        process.wait(timeout=30)
    assert process.returncode == -signal.SIGKILL

    with sqlite3.connect(path) as raw:
        assert raw.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    anyio.run(check_every_acknowledged_write_is_there, path, acknowledged)


async def check_every_acknowledged_write_is_there(path: Path, acknowledged: list[str]) -> None:
    async with await SQLiteStore.open(path, embedder=None) as store:
        labels = {b.label for b in await store.list_blocks("ada")}
        log_lines = (await store.get_block("ada", "log")).value.split("\n")
        messages = {m.content for m in await store.list_messages("ada", limit=1_000_000)}
        for ack in acknowledged:
            kind, _, name = ack.partition(" ")
            if kind == "block":
                assert name in labels
            elif kind == "append":
                assert log_lines.count(name) == 1
            else:
                assert name in messages
        assert len(log_lines) == len(set(log_lines))
        assert await store.search("ada", "archival entry 3", limit=3)
