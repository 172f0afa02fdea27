"""``satchel serve --http`` refuses what would fail or expose it, before it starts: a
busy port, a host that does not resolve, an empty token, ``--token`` on stdio, and a
non-loopback address without a token unless ``--allow-unauthenticated`` says so. Each
is one ``Error: ...`` line on stderr and exit status 2."""

from __future__ import annotations

import os
import socket
import subprocess
from pathlib import Path

import anyio
import pytest
from anyio.streams.text import TextReceiveStream
from typer.testing import CliRunner, Result

from satchel.cli import app

from .conftest import STARTUP, satchel_args

runner = CliRunner()


def run(*args: str, env: dict[str, str] | None = None) -> Result:
    return runner.invoke(app, ["serve", *args], env=env, catch_exceptions=False)


def assert_one_line_error(result: Result, *words: str) -> None:
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("Error: ")
    assert "Traceback" not in result.output
    for word in words:
        assert word in lines[0]


def run_process(*args: str, env: dict[str, str] | None = None) -> str:
    """``satchel serve ARGS`` as a real process that must exit by itself with status 2
    (a server that starts instead fails the test by its timeout); its one stderr line."""
    done = subprocess.run(
        satchel_args(*args),
        capture_output=True,
        text=True,
        timeout=STARTUP,
        check=False,
        stdin=subprocess.DEVNULL,
        env={**os.environ, **(env or {})},
    )
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("Error: ")
    return lines[0]


def test_a_port_in_use_is_one_line_from_a_real_process(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        line = run_process("--http", f"127.0.0.1:{port}", "--db", str(tmp_path / "m.db"))
    assert f"port {port}" in line
    assert "in use" in line


def test_a_real_process_refuses_an_empty_token_and_an_empty_variable(tmp_path: Path) -> None:
    db = str(tmp_path / "m.db")

    typed = run_process("--http", "127.0.0.1:0", "--token", "", "--db", db)
    from_env = run_process("--http", "127.0.0.1:0", "--db", db, env={"SATCHEL_TOKEN": ""})

    assert "'--token'" in typed
    assert "empty" in typed
    assert "'SATCHEL_TOKEN'" in from_env
    assert "empty" in from_env


def test_a_real_process_refuses_0_0_0_0_without_a_token(tmp_path: Path) -> None:
    line = run_process("--http", "0.0.0.0:0", "--db", str(tmp_path / "m.db"))

    assert "--allow-unauthenticated" in line


def test_a_host_that_does_not_resolve_is_one_line(tmp_path: Path) -> None:
    result = run("--http", "no-such-host.invalid:8765", "--db", str(tmp_path / "m.db"))

    assert_one_line_error(result, "--http", "'no-such-host.invalid'")


@pytest.mark.parametrize("token", ["", "   "])
def test_an_empty_token_is_refused(tmp_path: Path, token: str) -> None:
    result = run("--http", "127.0.0.1:0", "--token", token, "--db", str(tmp_path / "m.db"))

    assert_one_line_error(result, "--token", "empty")


@pytest.mark.parametrize("token", ["", " "])
def test_an_empty_satchel_token_variable_is_refused(tmp_path: Path, token: str) -> None:
    env = {"SATCHEL_TOKEN": token}

    result = run("--http", "127.0.0.1:0", "--db", str(tmp_path / "m.db"), env=env)

    assert_one_line_error(result, "SATCHEL_TOKEN", "empty")


def test_token_without_http_is_an_error(tmp_path: Path) -> None:
    result = run("--token", "s3cret", "--db", str(tmp_path / "m.db"))

    assert_one_line_error(result, "--token", "--http")


def test_allow_unauthenticated_without_http_is_an_error(tmp_path: Path) -> None:
    result = run("--allow-unauthenticated", "--db", str(tmp_path / "m.db"))

    assert_one_line_error(result, "--allow-unauthenticated", "--http")


@pytest.mark.parametrize("host", ["0.0.0.0", "[::]"])
def test_a_non_loopback_address_without_a_token_needs_the_explicit_flag(
    tmp_path: Path, host: str
) -> None:
    result = run("--http", f"{host}:0", "--db", str(tmp_path / "m.db"))

    assert_one_line_error(result, "--token", "--allow-unauthenticated")


@pytest.mark.anyio
async def test_allow_unauthenticated_serves_a_non_loopback_address_with_a_warning(
    tmp_path: Path,
) -> None:
    args = ["--http", "0.0.0.0:0", "--allow-unauthenticated", "--db", str(tmp_path / "m.db")]
    process = await anyio.open_process(satchel_args(*args), env=dict(os.environ))
    assert process.stderr is not None
    seen = ""
    try:
        with anyio.fail_after(STARTUP):
            async for chunk in TextReceiveStream(process.stderr):
                seen += chunk
                if "serving MCP at" in seen:
                    break
    finally:
        process.terminate()
        with anyio.move_on_after(10, shield=True):
            await process.wait()
        if process.returncode is None:
            process.kill()
            await process.wait()
    assert "warning: serving on 0.0.0.0 without --token" in seen
    assert "Traceback" not in seen
