"""Shared fixtures: the anyio backend for async tests."""

from __future__ import annotations

import pytest


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
