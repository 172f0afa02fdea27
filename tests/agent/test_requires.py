"""A tool that requires another to have run earlier in the same turn: the agent
runtime refuses it until then, and versioned calls obey the rules by their name."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from satchel import Agent, ToolRegistry, tool
from satchel.agent import TestModel, call
from satchel.memory import MemoryStore, SQLiteStore

pytestmark = pytest.mark.anyio

opened: list[str] = []


@tool
def login(user: str) -> str:
    """Log in as a user."""
    opened.append(user)
    return f"logged in as {user}"


@tool(requires=["login"])
def read_inbox() -> str:
    """Read the inbox (after logging in)."""
    return "3 new messages"


@tool(name="greet", version="1", deprecated="use greet@2")
def greet_v1(name: str) -> str:
    """Greet."""
    return f"hi {name}"


@tool(name="greet", version="2")
def greet_v2(name: str) -> str:
    """Greet politely."""
    return f"Hello, {name}."


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[MemoryStore]:
    async with SQLiteStore(tmp_path / "m.db", embedder=None) as made:
        await made.ensure_agent("ada")
        yield made


async def test_a_tool_is_refused_until_the_tool_it_requires_succeeded_this_turn(
    store: MemoryStore,
) -> None:
    registry = ToolRegistry([login, read_inbox])
    model = TestModel(
        [call("read_inbox", {}), call("login", {"user": "ada"}), call("read_inbox", {}), "Done."]
    )
    result = await Agent("ada", model, tools=registry, memory=store).run("Check my mail")
    refused, logged_in, read = (r for _, r in result.tool_calls)
    assert refused.error is not None
    assert refused.error.kind == "denied"
    assert refused.error.details["requires"] == ["login"]
    assert logged_in.ok
    assert read.output == "3 new messages"


async def test_a_requirement_met_in_an_earlier_turn_does_not_count(store: MemoryStore) -> None:
    registry = ToolRegistry([login, read_inbox])
    agent = Agent(
        "ada", TestModel([call("login", {"user": "ada"}), "In."]), tools=registry, memory=store
    )
    await agent.run("Log in")
    later = Agent("ada", TestModel([call("read_inbox", {}), "Hm."]), tools=registry, memory=store)
    result = await later.run("Read my mail")
    [(_, refused)] = result.tool_calls
    assert refused.error is not None
    assert refused.error.kind == "denied"


async def test_an_older_version_is_called_by_name_at_version(store: MemoryStore) -> None:
    registry = ToolRegistry([greet_v1, greet_v2])
    model = TestModel([call("greet@1", {"name": "Ada"}), call("greet", {"name": "Ada"}), "ok"])
    result = await Agent("ada", model, tools=registry, memory=store).run("Greet Ada twice")
    older, newer = (r for _, r in result.tool_calls)
    assert older.output == "hi Ada"
    assert older.notice == "greet@1 is deprecated: use greet@2"
    assert newer.output == "Hello, Ada."
