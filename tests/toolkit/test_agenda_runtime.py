"""The agent runtime delivers due reminders before each model request, so the model
reads them in its rendered context."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from satchel.agent import Agent, FunctionModel, ModelRequest, ModelResponse
from satchel.memory import SQLiteStore
from satchel.registry import ToolRegistry
from satchel.toolkit import MemoryAgenda, ToolkitConfig, agenda_tools
from satchel.tools import ToolContext

pytestmark = pytest.mark.anyio


async def test_a_due_reminder_is_in_the_system_prompt_of_the_next_request(tmp_path: Path) -> None:
    store = await SQLiteStore.open(tmp_path / "memory.db", embedder=None)
    now = [datetime(2026, 10, 21, 10, 0, tzinfo=ZoneInfo("Europe/Paris"))]
    agenda = MemoryAgenda(store, clock=lambda: now[0])
    tools = ToolRegistry()
    for tool in agenda_tools(
        ToolkitConfig(data_dir=tmp_path, timezone="Europe/Paris"), store=agenda
    ):
        tools.register(tool)
    scheduled = await tools.call(
        "schedule_reminder",
        {"operation": "schedule", "message": "Ask about the invoice", "when": "in 10 minutes"},
        ToolContext(agent="ada"),
    )
    assert scheduled.ok, scheduled.error
    model = FunctionModel(lambda request: ModelResponse(text="noted"))
    agent = Agent("ada", model, tools=tools, memory=store)
    try:
        await agent.run("Hello")
        now[0] += timedelta(minutes=11)
        await agent.run("Anything I should know?")
    finally:
        await store.close()
    first, second = (r.system for r in model.requests if isinstance(r, ModelRequest))
    assert "Ask about the invoice" not in first
    working = second.split("<working_memory>")[1].split("</working_memory>")[0]
    assert "Ask about the invoice" in working
