"""``satchel chat`` as a real process, driven through its standard input with a
scripted model: streamed replies, visible tool calls, approvals asked inline, and the
memory commands."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from satchel.memory import SQLiteStore

pytestmark = pytest.mark.anyio

HERE = Path(__file__).parent
MODEL = f"{HERE / 'chat_tools.py'}:chatty"
TOOLS = f"{HERE / 'chat_tools.py'}:registry"


def chat(db: Path, doomed: Path, lines: list[str]) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "SATCHEL_TEST_DOOMED": str(doomed), "COLUMNS": "200"}
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "satchel",
            "chat",
            "--db",
            str(db),
            "--agent",
            "ada",
            "--model",
            MODEL,
            "--tools",
            TOOLS,
        ],
        input="\n".join(lines) + "\n",
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


@pytest.mark.parametrize("answer", ["y", "n"])
async def test_a_chat_session_edits_memory_and_asks_before_a_destructive_call(
    tmp_path: Path, answer: str
) -> None:
    db, doomed = tmp_path / "m.db", tmp_path / "doomed.txt"
    doomed.write_text("x")
    done = chat(
        db, doomed, ["/help", "I like tea", "/blocks", "/search tea", "delete that file", answer]
    )

    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "-> context(" in out
    assert "Noted: you like tea." in out
    assert "human" in out  # the /blocks table
    assert "I like tea" in out  # /search finds the user's message
    assert "Approve Run wipe(" in out
    assert doomed.exists() is (answer == "n")
    if answer == "y":
        assert "The file is gone." in out
    else:
        assert "denied" in out
    async with SQLiteStore(db, embedder=None) as store:
        human = await store.get_block("ada", "human")
    assert human.value.endswith("Likes tea.")


def test_end_of_input_ends_the_session_quietly(tmp_path: Path) -> None:
    done = chat(tmp_path / "m.db", tmp_path / "none.txt", ["/quit"])
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
