"""Stop means stop: Ctrl-C ends ``satchel run`` and ``satchel chat`` at once, at the
prompt, while the model answers and while a tool runs (real processes on a
pseudo-terminal, the terminal driver delivering SIGINT), with status 130 and one line;
the turn is kept as interrupted, so the next run continues a valid conversation. And
a model server that never answers, or is not there, fails the run in seconds."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from agent.fake_openai import (
    HOLD,
    FakeOpenAI,
    completion,
    free_port,
    scripted,
    serving,
    silent_server,
)
from agent.terminal import CTRL_C, Terminal
from satchel.memory import Message, SQLiteStore

pytestmark = pytest.mark.anyio

HERE = Path(__file__).parent
NAPPER = f"{HERE / 'stop_tools.py'}:napper"
NAP_TOOLS = f"{HERE / 'stop_tools.py'}:registry"
STOPS_WITHIN = 10.0
"""Seconds from Ctrl-C to the end of the process that fail a test (it takes well under
one on an idle machine; before the fix, the prompt and a running tool never ended)."""


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "OPENAI_BASE_URL")}
    return {**env, "OPENAI_API_KEY": "test-key"}


def _satchel(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "satchel", *args],
        capture_output=True,
        text=True,
        env=_env(),
        timeout=timeout,
    )


def _stopped(terminal: Terminal) -> int:
    """Press Ctrl-C and return the exit status, which must come within the bound."""
    terminal.send(CTRL_C)
    status = terminal.wait(STOPS_WITHIN)
    assert terminal.output.count("satchel: interrupted.") == 1, terminal.output
    assert "Traceback" not in terminal.output, terminal.output
    return status


async def _messages(db: Path, agent: str = "ada") -> list[Message]:
    async with SQLiteStore(db, embedder=None) as store:
        return await store.list_messages(agent, conversation_id="default", limit=50)


def test_ctrl_c_at_the_chat_prompt_ends_the_session_with_status_130(tmp_path: Path) -> None:
    args = ["chat", "--db", str(tmp_path / "m.db"), "--model", NAPPER]
    with Terminal(args, _env()) as terminal:
        terminal.expect("you>")
        assert _stopped(terminal) == 130


async def test_ctrl_c_while_the_server_holds_the_answer_stops_run_and_keeps_the_turn(
    tmp_path: Path,
) -> None:
    db = tmp_path / "m.db"
    fake = FakeOpenAI(scripted([HOLD, completion("Welcome back.")]))
    model = ["--db", str(db), "--agent", "ada", "--model", "openai:fake-model"]
    with serving(fake) as url:
        with Terminal(["run", *model, "--base-url", url, "Hello?"], _env()) as terminal:
            assert await anyio.to_thread.run_sync(fake.holding.wait, 60)
            status = await anyio.to_thread.run_sync(_stopped, terminal)
        again = await anyio.to_thread.run_sync(
            lambda: _satchel("run", *model, "--base-url", url, "Are you there?")
        )

    assert status == 130
    assert (again.returncode, again.stdout.strip()) == (0, "Welcome back."), again.stderr
    said = [(m["role"], m["content"]) for m in fake.requests[1]["messages"][1:]]
    assert said[0] == ("user", "Hello?")
    assert said[1][0] == "user"
    assert "This turn was interrupted" in said[1][1]
    assert said[2] == ("user", "Are you there?")
    stored = await _messages(db)
    assert [(m.role, (m.metadata or {}).get("kind")) for m in stored] == [
        ("user", None),
        ("system", "interrupted"),
        ("user", None),
        ("assistant", None),
    ]


async def test_ctrl_c_while_chat_waits_on_the_model_ends_the_session(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    fake = FakeOpenAI(scripted([HOLD]))
    with serving(fake) as url:
        args = ["chat", "--db", str(db), "--agent", "ada", "--model", "openai:fake-model"]
        with Terminal([*args, "--base-url", url], _env()) as terminal:
            terminal.expect("you>")
            terminal.send(b"Tell me a long story\r")
            assert await anyio.to_thread.run_sync(fake.holding.wait, 60)
            status = await anyio.to_thread.run_sync(_stopped, terminal)

    assert status == 130
    stored = await _messages(db)
    assert [m.role for m in stored] == ["user", "system"]
    assert (stored[1].metadata or {}).get("kind") == "interrupted"


async def test_ctrl_c_while_a_tool_runs_stops_run_and_gives_the_call_a_result(
    tmp_path: Path,
) -> None:
    db = tmp_path / "m.db"
    args = ["run", "--db", str(db), "--agent", "ada", "--model", NAPPER, "--tools", NAP_TOOLS]
    with Terminal([*args, "Take a nap"], _env()) as terminal:
        terminal.expect("nap started")
        status = _stopped(terminal)
    fake = FakeOpenAI(scripted([completion("I was interrupted.")]))
    model = ["--model", "openai:fake-model", "--tools", NAP_TOOLS]
    with serving(fake) as url:
        again = await anyio.to_thread.run_sync(
            lambda: _satchel(*args[:5], *model, "--base-url", url, "Did you nap?")
        )

    assert status == 130
    assert again.returncode == 0, again.stderr
    wire: list[dict[str, Any]] = fake.requests[0]["messages"][1:]
    assert [m["role"] for m in wire] == ["user", "assistant", "tool", "user", "user"]
    assert wire[2]["tool_call_id"] == wire[1]["tool_calls"][0]["id"] == "call_nap"
    assert "Interrupted" in wire[2]["content"]
    stored = await _messages(db)
    kinds = [(m.role, (m.metadata or {}).get("kind")) for m in stored[:4]]
    assert kinds == [
        ("user", None),
        ("assistant", None),
        ("tool", "interrupted"),
        ("system", "interrupted"),
    ]


async def test_a_silent_server_fails_run_within_its_timeout_with_one_line(
    tmp_path: Path,
) -> None:
    with silent_server() as url:
        args = ["run", "--db", str(tmp_path / "m.db"), "--model", "openai:fake-model"]
        done = await anyio.to_thread.run_sync(
            lambda: _satchel(*args, "--base-url", url, "--timeout", "2", "Hello?", timeout=60)
        )

    assert done.returncode == 2
    assert done.stderr.count("\n") == 1, done.stderr
    assert url in done.stderr
    assert "did not answer within 2 s" in done.stderr
    assert "--timeout" in done.stderr


def test_a_refused_connection_fails_run_at_once_with_one_line(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}/v1"
    args = ["run", "--db", str(tmp_path / "m.db"), "--model", "openai:fake-model"]
    done = _satchel(*args, "--base-url", url, "Hello?", timeout=60)

    assert done.returncode == 2
    assert done.stderr.count("\n") == 1, done.stderr
    assert f"cannot reach {url}: connection refused" in done.stderr
    assert "--base-url" in done.stderr
