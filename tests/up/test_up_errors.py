"""``satchel up``'s mistakes a person can fix: one line, exit status 2, nothing runs."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fake_telegram import TOKEN, FakeTelegram, serving_telegram
from satchel.cli import app

pytestmark = pytest.mark.timeout(180)

runner = CliRunner()


def test_a_channels_file_without_an_inbound_section_names_the_sections_it_has(
    tmp_path: Path,
) -> None:
    channels = tmp_path / "channels.toml"
    channels.write_text('[webhook]\nallowed_urls = ["https://hooks.example.com/"]\n')
    result = runner.invoke(app, ["up", "--channels", str(channels), "--db", str(tmp_path / "m.db")])
    assert result.exit_code == 2
    assert "has no inbound channel" in result.output
    assert "[webhook]" in result.output
    assert "[telegram]" in result.output
    assert "Traceback" not in result.output
    assert not (tmp_path / "m.db").exists()


def test_up_needs_a_channels_file(tmp_path: Path) -> None:
    result = runner.invoke(
        app, ["up", "--db", str(tmp_path / "m.db")], env={"SATCHEL_CHANNELS": ""}
    )
    assert result.exit_code == 2
    assert "--channels" in result.output


def test_a_token_telegram_refuses_stops_the_start_in_one_line(tmp_path: Path) -> None:
    fake = FakeTelegram()
    with serving_telegram(fake) as url:
        channels = tmp_path / "channels.toml"
        channels.write_text(f'[telegram]\nbase_url = "{url}"\nallowed_users = [1]\n')
        env = {k: v for k, v in os.environ.items() if not k.startswith("SATCHEL_")}
        env.update(SATCHEL_TELEGRAM_TOKEN="999:not-the-token", OPENAI_API_KEY="test-key")
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "satchel",
                "up",
                "--channels",
                str(channels),
                "--db",
                str(tmp_path / "m.db"),
                "--model",
                "openai:fake",
            ],
            capture_output=True,
            text=True,
            env=env,
            timeout=150,
        )
    assert done.returncode == 2, done.stderr
    assert "refused the bot token" in done.stderr
    assert "SATCHEL_TELEGRAM_TOKEN" in done.stderr
    assert "999:not-the-token" not in done.stderr
    assert "Traceback" not in done.stderr


def test_ctrl_c_stops_up_with_status_130_and_one_line(tmp_path: Path) -> None:
    fake = FakeTelegram()
    with serving_telegram(fake) as url:
        channels = tmp_path / "channels.toml"
        channels.write_text(f'[telegram]\nbase_url = "{url}"\nallowed_users = [1]\n')
        env = {k: v for k, v in os.environ.items() if not k.startswith("SATCHEL_")}
        env.update(SATCHEL_TELEGRAM_TOKEN=TOKEN, OPENAI_API_KEY="test-key")
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "satchel",
                "up",
                "--channels",
                str(channels),
                "--db",
                str(tmp_path / "m.db"),
                "--model",
                "openai:fake",
            ],
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        assert process.stderr is not None
        try:
            for line in process.stderr:  # until it listens (a hang guard: the timeout mark)
                if "listening on telegram" in line:
                    break
            process.send_signal(signal.SIGINT)
            rest = process.stderr.read()
            code = process.wait(timeout=120)
        finally:
            if process.poll() is None:
                process.kill()
    assert code == 130, rest
    assert "satchel: interrupted." in rest
    assert "Traceback" not in rest
