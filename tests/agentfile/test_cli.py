"""``satchel agent import|export`` through typer's CliRunner on a real SQLite file
(issue 31 item 1)."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from satchel.cli import app

from .conftest import shared_file

runner = CliRunner()


def run(*args: str) -> Result:
    return runner.invoke(app, ["agent", *args], env={"COLUMNS": "200"}, catch_exceptions=False)


def test_import_prints_a_summary_and_export_writes_the_file(tmp_path: Path) -> None:
    db = str(tmp_path / "m.db")
    result = run("import", str(shared_file("customer_service.af")), "--as", "cs", "--db", db)
    assert result.exit_code == 0, result.output
    assert "Imported cs: 2 blocks, 0 passages, 0 messages, 0 tool rules." in result.stdout
    assert "cancel_order" in result.stdout
    assert "--tools" in result.stdout
    out = tmp_path / "cs.af"
    exported = run("export", "cs", str(out), "--db", db)
    assert exported.exit_code == 0, exported.output
    assert "Exported 1 agent (2 blocks" in exported.stderr
    assert json.loads(out.read_text())["agents"][0]["name"] == "customer_service"


def test_import_json_reports_tools_and_server_mounts(tmp_path: Path) -> None:
    document = {
        "agents": [{"id": "agent-0", "name": "ada", "tool_ids": []}],
        "mcp_servers": [
            {
                "id": "s0",
                "server_type": "stdio",
                "server_name": "git tools",
                "stdio_config": {"command": "uvx", "args": ["mcp-server-git", "--repo", "a b"]},
            },
            {
                "id": "s1",
                "server_type": "streamable_http",
                "server_name": "docs",
                "server_url": "http://127.0.0.1:9000/mcp",
            },
        ],
    }
    path = tmp_path / "ada.af"
    path.write_text(json.dumps(document))
    result = run("import", str(path), "--db", str(tmp_path / "m.db"), "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert [s["mount"] for s in report["servers"]] == [
        "git_tools=uvx mcp-server-git --repo 'a b'",
        "docs=http://127.0.0.1:9000/mcp",
    ]


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("{nope", "not valid JSON"),
        ('{"agents": [{"id": "a", "name": "../up"}]}', "reads as a path"),
        (
            '{"agents": [{"id": "a", "name": "x", "tool_rules": '
            '[{"tool_name": "t", "type": "explode"}]}]}',
            "unknown type 'explode'",
        ),
    ],
    ids=["bad json", "traversal", "unknown rule"],
)
def test_a_bad_file_is_one_error_line_and_no_database(
    tmp_path: Path, text: str, words: str
) -> None:
    path = tmp_path / "bad.af"
    path.write_text(text)
    db = tmp_path / "m.db"
    result = run("import", str(path), "--db", str(db))
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("Error: ")
    assert words in lines[0]
    assert not db.exists()


def test_importing_an_existing_agent_again_is_one_error_line(tmp_path: Path) -> None:
    db = str(tmp_path / "m.db")
    path = str(shared_file("memgpt_agent.af"))
    assert run("import", path, "--db", db).exit_code == 0
    again = run("import", path, "--db", db)
    assert again.exit_code == 2
    assert again.stderr.strip().splitlines() == [
        "Error: agent 'memgpt_agent' exists already in this store; import under another "
        "name (--as NAME). Nothing was imported."
    ]


def test_exporting_an_unknown_agent_is_one_error_line(tmp_path: Path) -> None:
    db = str(tmp_path / "m.db")
    assert run("import", str(shared_file("memgpt_agent.af")), "--db", db).exit_code == 0
    result = run("export", "nobody", str(tmp_path / "x.af"), "--db", db)
    assert result.exit_code == 2
    assert result.stderr.strip() == "Error: no agent 'nobody' in this store"
    assert not (tmp_path / "x.af").exists()


@pytest.mark.slow
def test_a_large_import_shows_a_progress_bar_on_a_terminal(tmp_path: Path) -> None:
    messages = [{"id": f"m{i}", "role": "user", "content": f"note {i}"} for i in range(600)]
    path = tmp_path / "big.af"
    path.write_text(json.dumps({"agents": [{"id": "a", "name": "big", "messages": messages}]}))
    env = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "TTY_COMPATIBLE")}
    env |= {"COLUMNS": "100"}
    controller, terminal = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "satchel", "agent", "import", str(path),
         "--db", str(tmp_path / "m.db")],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=terminal, env=env,
    )  # fmt: skip
    os.close(terminal)
    shown = b""
    while True:
        try:
            chunk = os.read(controller, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        shown += chunk
    os.close(controller)
    assert process.wait(timeout=200) == 0
    assert process.stdout is not None
    assert "600 messages" in process.stdout.read().decode()
    assert "Importing" in shown.decode()
