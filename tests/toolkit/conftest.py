"""Fixtures of the toolkit tests: a real Radicale server for the session, and the
calendar stores the contract tests run on."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from radicale_server import running_radicale
from satchel.toolkit import ToolkitConfig
from satchel.toolkit._calendar_model import open_calendar_store
from satchel.toolkit._ical_store import CalendarStore

from .agenda_kit import kit  # noqa: F401  (the agenda tests' fixture)


@pytest.fixture(scope="session")
def radicale_url() -> Iterator[str]:
    """The session's Radicale server (see ``tests/radicale_server.py``)."""
    with running_radicale() as url:
        yield url


@pytest.fixture(params=["local", "radicale"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    return str(request.param)


@pytest.fixture
def config(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> ToolkitConfig:
    """A config on local files or on a fresh calendar of the real Radicale server."""
    if backend == "local":
        return ToolkitConfig(data_dir=tmp_path, timezone="Europe/Paris")
    url: str = request.getfixturevalue("radicale_url")
    name = f"cal-{uuid.uuid4().hex[:8]}"  # and a user of its own: no test sees another's
    return ToolkitConfig(
        data_dir=tmp_path,
        timezone="Europe/Paris",
        calendar_url=url,
        calendar_username=f"user-{uuid.uuid4().hex[:8]}",
        calendar_password="secret",  # pyright: ignore[reportArgumentType]
        calendar_name=name,
    )


@pytest.fixture
def store(config: ToolkitConfig) -> Iterator[CalendarStore]:
    opened = open_calendar_store(config)
    yield opened
    opened.close()
