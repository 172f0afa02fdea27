"""A turn cut short (cancelled, as Ctrl-C does) is kept as interrupted on a real SQLite
store: a pending call gets a result, a note says the turn stopped, and the next turn's
history pairs every call with its result; so does a call a killed process left."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import pytest

from satchel import ToolRegistry, tool
from satchel.agent import Agent, FunctionModel, ModelRequest, ModelResponse, TestModel, call
from satchel.memory import MemoryStore, SQLiteStore

pytestmark = pytest.mark.anyio


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[MemoryStore]:
    async with SQLiteStore(tmp_path / "m.db", embedder=None) as opened:
        await opened.ensure_agent("ada")
        yield opened


async def test_a_cancelled_turn_answers_its_pending_call_and_notes_the_interruption(
    store: MemoryStore,
) -> None:
    started = anyio.Event()

    @tool
    async def dig(depth: int) -> str:
        """Dig until stopped.

        Args:
            depth: How deep.
        """
        started.set()
        await anyio.sleep_forever()
        return "never"

    tools = ToolRegistry([dig])
    first = Agent("ada", TestModel([call("dig", {"depth": 3}, id="c1")]), tools=tools, memory=store)
    with anyio.fail_after(30):
        async with anyio.create_task_group() as group:
            group.start_soon(first.run, "Dig a hole")
            await started.wait()
            group.cancel_scope.cancel()
    model = TestModel(["I stopped digging."])
    second = await Agent("ada", model, tools=tools, memory=store).run("Did you finish?")
    stored = await store.list_messages("ada", conversation_id="default", limit=20)

    kinds = [(m.role, (m.metadata or {}).get("kind")) for m in stored[:4]]
    assert kinds == [
        ("user", None),
        ("assistant", None),
        ("tool", "interrupted"),
        ("system", "interrupted"),
    ]
    assert second.reply == "I stopped digging."
    seen = model.requests[0].messages
    assert [m.role for m in seen] == ["user", "assistant", "tool", "user", "user"]
    assert seen[2].tool_call_id == seen[1].tool_calls[0].id == "c1"
    assert seen[2].content.startswith("Error (failed): Interrupted")
    assert "This turn was interrupted" in seen[3].content


async def test_a_turn_cancelled_while_the_model_answers_is_noted_without_memory() -> None:
    started = anyio.Event()

    async def forever(request: ModelRequest) -> ModelResponse:
        started.set()
        await anyio.sleep_forever()
        raise AssertionError("unreachable")

    agent = Agent("ada", FunctionModel(forever))
    with anyio.fail_after(30):
        async with anyio.create_task_group() as group:
            group.start_soon(agent.run, "Hello?")
            await started.wait()
            group.cancel_scope.cancel()

    history = await agent._log.load("default")  # pyright: ignore[reportPrivateUsage]
    assert [m.role for m in history] == ["user", "user"]
    assert "This turn was interrupted" in history[1].content


async def test_a_call_a_killed_process_left_without_a_result_is_given_one(
    store: MemoryStore,
) -> None:
    await store.add_message("ada", "user", "Dig a hole")
    calls = [{"id": "c9", "name": "context", "arguments": {"operation": "list"}}]
    await store.add_message("ada", "assistant", "context(...)", metadata={"tool_calls": calls})
    model = TestModel(["Where was I?"])
    await Agent("ada", model, memory=store).run("Hello again")

    seen = model.requests[0].messages
    assert [m.role for m in seen] == ["user", "assistant", "tool", "user"]
    assert seen[2].tool_call_id == "c9"
    assert "no result was recorded" in seen[2].content
