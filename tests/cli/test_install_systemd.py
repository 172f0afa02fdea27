"""``satchel install systemd``: the user unit that runs ``satchel up`` (its command line,
restart policy and environment file), the secrets kept in that file with mode 0600 and
never in the unit, ``--print``, ``--remove``, and the options that belong to one kind
of install refused on the other."""

from __future__ import annotations

import shutil
import stat
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from satchel.cli import app
from satchel.cli._install import satchel_command
from satchel.cli._install_systemd import systemd_quote

runner = CliRunner()

SECRET = 'tg-secret-123:ABC$x"y'


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    for name in ("SATCHEL_AGENT", "SATCHEL_DB"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    return home


def install(*args: str) -> Result:
    return runner.invoke(app, ["install", "systemd", *args], catch_exceptions=False)


def ok(*args: str) -> Result:
    result = install(*args)
    assert result.exit_code == 0, result.output
    return result


def _unit(home: Path) -> Path:
    return home / ".config/systemd/user/satchel-up.service"


def _env(home: Path) -> Path:
    return home / ".config/satchel/satchel-up.env"


def _lines(unit: Path, key: str) -> list[str]:
    return [
        line.split("=", 1)[1]
        for line in unit.read_text().splitlines()
        if line.startswith(f"{key}=")
    ]


def test_the_unit_runs_satchel_up_absolutely_with_a_restart_policy_and_an_env_file(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SATCHEL_TELEGRAM_TOKEN", SECRET)
    result = ok(
        "--model", "openai:gpt-4o-mini",
        "--channels", "channels.toml",
        "--db", "memory.db",
        "--agent", "ada",
        "--up-arg", "--base-url=http://127.0.0.1:11434/v1",
        "--secret", "SATCHEL_TELEGRAM_TOKEN",
    )  # fmt: skip
    unit = _unit(home)
    [exec_start] = _lines(unit, "ExecStart")
    command = satchel_command()
    assert exec_start.split() == [
        *command,
        "up",
        "--model",
        "openai:gpt-4o-mini",
        "--channels",
        str(tmp_path / "channels.toml"),
        "--db",
        str(tmp_path / "memory.db"),
        "--agent",
        "ada",
        "--base-url=http://127.0.0.1:11434/v1",
    ]
    assert Path(command[0]).is_absolute()
    assert _lines(unit, "Restart") == ["on-failure"]
    assert _lines(unit, "EnvironmentFile") == [str(_env(home))]
    assert _lines(unit, "WantedBy") == ["default.target"]
    assert SECRET not in unit.read_text()
    assert stat.S_IMODE(unit.stat().st_mode) == 0o644
    env = _env(home)
    assert stat.S_IMODE(env.stat().st_mode) == 0o600
    assert 'SATCHEL_TELEGRAM_TOKEN="tg-secret-123:ABC\\$x\\"y"' in env.read_text().splitlines()
    assert SECRET not in result.output
    assert "systemctl --user enable --now satchel-up.service" in result.output
    assert "loginctl enable-linger" in result.output


def test_running_it_again_keeps_other_secrets_and_tightens_a_loose_env_file(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = _env(home)
    env.parent.mkdir(parents=True)
    env.write_text('OPENAI_API_KEY="sk-kept"\nSATCHEL_INBOX_TOKEN="old"\n')
    env.chmod(0o644)
    monkeypatch.setenv("SATCHEL_INBOX_TOKEN", "new-inbox-token-0123456789")
    result = ok("--model", "openai:gpt-4o-mini", "--secret", "SATCHEL_INBOX_TOKEN")
    assert env.read_text().splitlines() == [
        'OPENAI_API_KEY="sk-kept"',
        'SATCHEL_INBOX_TOKEN="new-inbox-token-0123456789"',
    ]
    assert stat.S_IMODE(env.stat().st_mode) == 0o600
    assert "now yours alone" in result.output


def test_a_database_url_with_a_password_goes_to_the_env_file_not_the_unit(home: Path) -> None:
    url = "postgresql://sam:hunter2@db.example.org/satchel"
    ok("--model", "openai:gpt-4o-mini", "--db", url)
    assert "hunter2" not in _unit(home).read_text()
    assert "--db" not in _lines(_unit(home), "ExecStart")[0]
    assert f'SATCHEL_DB="{url}"' in _env(home).read_text().splitlines()


def test_print_shows_the_unit_and_writes_nothing(home: Path) -> None:
    result = ok("--model", "openai:gpt-4o-mini", "--print")
    assert "ExecStart=" in result.stdout
    assert "Restart=on-failure" in result.stdout
    assert not _unit(home).exists()
    assert not _env(home).exists()


def test_config_overrides_the_unit_path_and_remove_deletes_it(home: Path, tmp_path: Path) -> None:
    unit = tmp_path / "units" / "my.service"
    ok("--model", "openai:gpt-4o-mini", "--config", str(unit))
    assert unit.exists()
    assert not _unit(home).exists()
    result = ok("--config", str(unit), "--remove")
    assert not unit.exists()
    assert "systemctl --user disable --now my.service" in result.output


@pytest.mark.parametrize(
    ("args", "hint"),
    [
        (["--secret", "NOT_SET_ANYWHERE_42"], "--secret"),
        (["--secret", "bad name"], "--secret"),
        (["--tools", "x:y"], "systemd"),
        (["--lazy"], "systemd"),
    ],
)
def test_a_bad_option_for_systemd_is_one_error_line(home: Path, args: list[str], hint: str) -> None:
    result = install("--model", "openai:gpt-4o-mini", *args)
    assert result.exit_code == 2, result.output
    [line] = result.stderr.strip().splitlines()
    assert line.startswith("Error: ")
    assert hint in line
    assert not _unit(home).exists()


@pytest.mark.parametrize(
    ("args", "flag"),
    [
        (["--model", "openai:x"], "--model"),
        (["--print"], "--print"),
        (["--secret", "A"], "--secret"),
    ],
)
def test_systemd_options_are_refused_for_an_mcp_client(
    home: Path, args: list[str], flag: str
) -> None:
    result = runner.invoke(app, ["install", "cursor", *args], catch_exceptions=False)
    assert result.exit_code == 2, result.output
    assert flag in result.stderr
    assert "systemd only" in result.stderr


@pytest.mark.parametrize(
    ("word", "quoted"),
    [
        ("plain/path-1.toml", "plain/path-1.toml"),
        ("with space", '"with space"'),
        ("100%", '"100%%"'),
        ("$HOME", '"$$HOME"'),
        ('say "hi"\\', '"say \\"hi\\"\\\\"'),
    ],
)
def test_words_are_quoted_as_systemd_reads_them(word: str, quoted: str) -> None:
    assert systemd_quote(word) == quoted


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze not here")
def test_systemd_analyze_accepts_the_unit(home: Path) -> None:
    ok("--model", "openai:gpt-4o-mini", "--up-arg", "with space %")
    done = subprocess.run(
        ["systemd-analyze", "verify", "--man=no", str(_unit(home))],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
