"""``satchel console`` refuses bad options in one line (exit 2), and ``satchel serve
--http`` serves the console at ``/console`` behind its token, beside ``/mcp``."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx
import pytest
from typer.testing import CliRunner, Result

from agent.fake_openai import serving as embeddings_server
from embed.fake_embeddings import FakeEmbeddings
from satchel.cli import app
from satchel.memory import SQLiteStore

from .conftest import seed
from .live import STARTUP

runner = CliRunner()


def run(*args: str, env: dict[str, str] | None = None) -> Result:
    return runner.invoke(app, list(args), env=env, catch_exceptions=False)


def one_line_error(result: Result) -> str:
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("Error: ")
    return lines[0]


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "memory.db"

    async def main() -> None:
        async with SQLiteStore(path, embedder=None) as store:
            await seed(store)

    anyio.run(main)
    return path


def test_a_console_on_a_public_address_needs_a_token(db: Path) -> None:
    line = one_line_error(run("console", "--db", str(db), "--host", "0.0.0.0"))
    assert "--token" in line
    assert "not a loopback address" in line


def test_console_refuses_a_missing_database_an_empty_token_and_a_busy_port(db: Path) -> None:
    assert "no memory database" in one_line_error(
        run("console", "--db", str(db.parent / "typo.db"))
    )
    assert "empty" in one_line_error(run("console", "--db", str(db), "--token", " "))
    assert "must not be empty" in one_line_error(run("console", "--db", str(db), "--agent", ""))
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = str(busy.getsockname()[1])
        line = one_line_error(run("console", "--db", str(db), "--port", port))
    assert "in use" in line
    assert "'--port'" in line
    assert "--http" not in line  # console has no --http option
    assert "satchel serve" not in line


def test_console_on_a_host_that_does_not_resolve_names_host(db: Path) -> None:
    line = one_line_error(run("console", "--db", str(db), "--host", "no-such-host.invalid"))
    assert "'--host'" in line
    assert "--http" not in line


@pytest.fixture
def served(db: Path) -> Iterator[str]:
    """``satchel serve --http 127.0.0.1:0 --token T``; yields its base URL."""
    command = [
        sys.executable, "-m", "satchel", "serve", "--db", str(db), "--agent", "ada",
        "--http", "127.0.0.1:0", "--token", "T0ken",
    ]  # fmt: skip
    process = subprocess.Popen(
        command, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True, env=dict(os.environ)
    )
    found: list[str] = []
    ready = threading.Event()

    def read() -> None:
        assert process.stderr is not None
        for line in process.stderr:
            match = re.search(r"serving MCP at (http://\S+)/mcp", line)
            if match:
                found.append(match.group(1))
                ready.set()
        ready.set()

    threading.Thread(target=read, daemon=True).start()
    try:
        ready.wait(STARTUP)
        assert found, "satchel serve --http did not start"
        yield found[0]
    finally:
        process.terminate()
        process.wait(20)


@pytest.mark.slow
def test_serve_http_serves_the_console_behind_the_same_token(served: str) -> None:
    with httpx.Client(base_url=served, follow_redirects=False, timeout=30) as client:
        assert client.get("/console").headers["location"] == "/console/"
        login = client.get("/console/agents/ada")
        assert login.status_code == 303
        assert login.headers["location"] == "/console/login?next=/agents/ada"
        assert client.get("/mcp").status_code == 401  # MCP keeps its bearer token
        wrong = client.post("/console/login", data={"token": "nope", "next": "/agents/ada"})
        assert wrong.status_code == 401
        right = client.post("/console/login", data={"token": "T0ken", "next": "/agents/ada"})
        assert right.status_code == 303
        assert "Path=/console" in right.headers["set-cookie"]
        page = client.get("/console/agents/ada")
        assert page.status_code == 200
        assert 'href="/console/agents/ada/blocks/human"' in page.text
    with httpx.Client(base_url=served, timeout=30) as bearer:
        agents = bearer.get("/console/agents", headers={"authorization": "Bearer T0ken"})
        assert agents.status_code == 200
        assert "ada" in agents.text


def test_the_first_console_on_the_default_database_creates_it_with_the_default_agent(
    tmp_path: Path,
) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SATCHEL_")}
    env["XDG_DATA_HOME"] = str(tmp_path / "data")  # platformdirs' data dir on Linux
    command = [sys.executable, "-m", "satchel", "console", "--port", "0"]
    process = subprocess.Popen(
        command, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True, env=env
    )
    found: list[str] = []
    ready = threading.Event()

    def read() -> None:
        assert process.stderr is not None
        for line in process.stderr:
            match = re.search(r"the memory console is at (http://\S+)", line)
            if match:
                found.append(match.group(1).rstrip("/"))
                ready.set()
        ready.set()

    threading.Thread(target=read, daemon=True).start()
    try:
        ready.wait(STARTUP)
        assert found, "satchel console did not start"
        page = httpx.get(f"{found[0]}/agents/default", timeout=30)
    finally:
        process.terminate()
        process.wait(timeout=30)
    assert page.status_code == 200
    assert "persona" in page.text
    assert "human" in page.text
    assert (tmp_path / "data" / "satchel" / "satchel.db").exists()


def test_console_searches_with_the_embedder_it_is_given_and_shows_a_failing_ones_warning(
    db: Path,
) -> None:
    fake = FakeEmbeddings(dim=16)
    with embeddings_server(fake) as url:
        command = [
            sys.executable, "-m", "satchel", "console", "--db", str(db), "--port", "0",
            "--embedder", "openai:fake-embed", "--embed-base-url", url,
        ]  # fmt: skip
        process = subprocess.Popen(
            command, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True,
            env=dict(os.environ),
        )  # fmt: skip
        found: list[str] = []
        ready = threading.Event()

        def read() -> None:
            assert process.stderr is not None
            for line in process.stderr:
                match = re.search(r"the memory console is at (http://\S+)", line)
                if match:
                    found.append(match.group(1).rstrip("/"))
                    ready.set()
            ready.set()

        threading.Thread(target=read, daemon=True).start()
        try:
            ready.wait(STARTUP)
            assert found, "satchel console did not start"
            assert [body["input"] for body in fake.requests] == [["satchel"]]  # the size
            healthy = httpx.get(f"{found[0]}/agents/ada/search?q=otters", timeout=30)
            fake.fail_after = 0
            degraded = httpx.get(f"{found[0]}/agents/ada/search?q=kiwis", timeout=60)
        finally:
            process.terminate()
            process.wait(timeout=30)
    assert healthy.status_code == 200
    assert "search-warning" not in healthy.text
    assert ["otters"] in [body["input"] for body in fake.requests]
    assert degraded.status_code == 200
    assert "searched by keywords only: the embedder failed" in degraded.text
