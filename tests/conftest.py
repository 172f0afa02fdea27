"""Shared fixtures: the anyio backend for async tests; hypothesis without deadlines."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import settings

from postgres_server import PostgresServer, running_server

# Tests never assert a wall-clock time, and hypothesis's default 200 ms deadline per
# example is one: on a loaded machine it failed a property test that does file I/O.
settings.register_profile("satchel", deadline=None, print_blob=True)
settings.load_profile("satchel")


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
