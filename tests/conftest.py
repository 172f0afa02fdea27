"""Shared fixtures: the anyio backend for async tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from postgres_server import PostgresServer, running_server


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(autouse=True)
def _isolated_data_dir(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No test (nor a process a test starts) touches the user's real data directory:
    the default memory database lives in a fresh temporary folder."""
    home = tmp_path_factory.mktemp("data-home")
    monkeypatch.setenv("XDG_DATA_HOME", str(home))
    monkeypatch.delenv("SATCHEL_DB", raising=False)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """The session's one embedded PostgreSQL server (see ``tests/postgres_server.py``),
    started on first use by any suite."""
    with running_server() as server:
        yield server
