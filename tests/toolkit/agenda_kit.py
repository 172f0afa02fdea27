"""The agenda tools on a real memory store (SQLite, or PostgreSQL) with a clock the test
moves: shared by the reminder and tracked-task tests."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from postgres_server import PostgresServer
from satchel.memory import MemoryStore, SQLiteStore
from satchel.memory.postgres import PostgresStore
from satchel.registry import ToolRegistry
from satchel.toolkit import ToolkitConfig
from satchel.toolkit._agenda import agenda_tools
from satchel.toolkit._agenda_store import MemoryAgenda
from satchel.tools import ErrorInfo, ToolContext

PARIS = ZoneInfo("Europe/Paris")
START = datetime(2026, 10, 21, 10, 0, tzinfo=PARIS)  # a Wednesday, before the DST change


@dataclass
class Clock:
    now: datetime

    def __call__(self) -> datetime:
        return self.now


@dataclass
class Setup:
    store: MemoryStore
    agenda: MemoryAgenda
    tools: ToolRegistry
    clock: Clock

    async def ok(self, tool: str, args: dict[str, Any]) -> Any:
        result = await self.tools.call(tool, args, ToolContext(agent="ada"))
        assert result.ok, result.error
        return result.output

    async def error(self, tool: str, args: dict[str, Any]) -> ErrorInfo:
        result = await self.tools.call(tool, args, ToolContext(agent="ada"))
        assert result.error is not None
        return result.error


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
async def kit(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Setup]:
    store: MemoryStore
    url = None
    if request.param == "postgres":
        server: PostgresServer = request.getfixturevalue("postgres_server")
        url = server.create_database()
        store = await PostgresStore.open(url, embedder=None)
    else:
        store = await SQLiteStore.open(tmp_path / "memory.db", embedder=None)
    clock = Clock(START)
    agenda = MemoryAgenda(store, clock=clock)
    registry = ToolRegistry()
    for tool in agenda_tools(
        ToolkitConfig(data_dir=tmp_path, timezone="Europe/Paris"), store=agenda
    ):
        registry.register(tool)
    yield Setup(store, agenda, registry, clock)
    await store.close()
    if url is not None:
        server.drop_database(url)
