"""An imported agent runs with its file's system prompt and the tool rules whose tools
it has (``satchel run``, a real process) (issue 31 item 1)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from satchel.agentfile import AgentProfile
from satchel.cli import app
from satchel.rules import MaxCalls, RequiredBeforeExit, Terminal

HERE = Path(__file__).parent

DOCUMENT = {
    "agents": [
        {
            "id": "agent-0",
            "name": "ada",
            "system": "You are Ada's tea sommelier.",
            "tool_rules": [
                {"tool_name": "search", "type": "max_count_per_step", "max_count_limit": 2},
                {"tool_name": "memory_finish_edits", "type": "required_before_exit"},
            ],
        }
    ]
}


def test_an_imported_agent_runs_with_its_system_prompt(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    path = tmp_path / "ada.af"
    path.write_text(json.dumps(DOCUMENT))
    imported = CliRunner().invoke(
        app, ["agent", "import", str(path), "--db", str(db)], catch_exceptions=False
    )
    assert imported.exit_code == 0, imported.output
    done = subprocess.run(
        [sys.executable, "-m", "satchel", "run", "--db", str(db), "--agent", "ada",
         "--model", f"{HERE / 'echo_model.py'}:echo", "--json", "hi"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    system = json.loads(done.stdout)["reply"]
    assert system.startswith("You are Ada's tea sommelier.")
    assert "Call search at most 2 times a turn." in system
    assert "memory_finish_edits" not in system  # the agent has no such tool


def test_rules_about_tools_the_agent_lacks_are_left_out() -> None:
    profile = AgentProfile(
        letta_id="agent-0",
        name="ada",
        tool_rules=[
            {"tool_name": "send_message", "type": "exit_loop"},
            {"tool_name": "search", "type": "max_count_per_step", "max_count_limit": 2},
            {"tool_name": "memory_finish_edits", "type": "required_before_exit"},
        ],
    )
    assert profile.rules == [
        Terminal("send_message"),
        MaxCalls(2, "search"),
        RequiredBeforeExit("memory_finish_edits"),
    ]
    assert profile.rules_for(["send_message", "search"]) == [
        Terminal("send_message"),
        MaxCalls(2, "search"),
    ]
