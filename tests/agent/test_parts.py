"""The hooks the agent's parts expose (issue 29, items 1 and 9): a rule states its own
per-batch limit, and a tool brings memory up to date before the context is rendered,
without the agent knowing either rule or tool."""

from __future__ import annotations

from collections.abc import AsyncIterator, Collection
from dataclasses import dataclass
from pathlib import Path

import pytest
from pydantic import BaseModel

from satchel import Tool, ToolContext, ToolRegistry, tool
from satchel.agent import Agent, FunctionModel, ModelRequest, ModelResponse
from satchel.memory import BlockKind, MemoryStore, SQLiteStore
from satchel.providers import ToolCall
from satchel.registry import prefixed
from satchel.rules import ToolRule, TurnState

pytestmark = pytest.mark.anyio


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[MemoryStore]:
    async with SQLiteStore(tmp_path / "m.db", embedder=None) as opened:
        await opened.ensure_agent("ada")
        yield opened


@dataclass(frozen=True)
class OncePerTurn(ToolRule):
    """Each tool runs at most once a turn, stated only as a per-batch limit: a rule the
    dispatch knows nothing about."""

    def render(self) -> str:
        return "Call each tool once a turn."

    def allowed(self, state: TurnState, tools: Collection[str]) -> Collection[str]:
        return tools

    def batch_limit(self, state: TurnState, tool: str) -> str | None:
        return "each tool once a turn" if state.count(tool) else None


async def test_a_rule_of_its_own_limits_calls_within_one_batch() -> None:
    ran: list[int] = []

    @tool
    def bump(n: int) -> int:
        """Count a call."""
        ran.append(n)
        return n

    replies = iter(
        [ModelResponse(tool_calls=tuple(ToolCall(f"c{n}", "bump", {"n": n}) for n in range(4)))]
    )
    model = FunctionModel(lambda request: next(replies, ModelResponse(text="done")))
    agent = Agent("ada", model, tools=ToolRegistry([bump]), rules=[OncePerTurn()])

    result = await agent.run("go")

    assert ran == [0]
    refused = [r for _, r in result.tool_calls if not r.ok]
    assert [r.error.kind for r in refused if r.error] == ["denied"] * 3
    assert all("each tool once a turn" in r.error.message for r in refused if r.error)


class NoteIn(BaseModel):
    text: str


class Stamp(Tool[NoteIn, str]):
    """A tool that writes the time into working memory before every context."""

    name = "stamp"
    description = "Does nothing when called; keeps the 'clock' block current."

    def __init__(self, store: MemoryStore) -> None:
        self.store = store
        self.ticks = 0

    async def before_context(self, agent: str) -> None:
        self.ticks += 1
        await self.store.update_block_text(agent, "clock", f"tick {self.ticks}")

    async def execute(self, params: NoteIn, ctx: ToolContext) -> str:
        return params.text


async def test_a_tools_context_hook_runs_before_each_request_even_behind_a_wrapper(
    store: MemoryStore,
) -> None:
    await store.create_block("ada", "clock", "never", kind=BlockKind.WORKING)
    stamp = Stamp(store)
    seen: list[str] = []

    def answer(request: ModelRequest) -> ModelResponse:
        seen.append(request.system)
        return ModelResponse(text="ok")

    agent = Agent(
        "ada", FunctionModel(answer), tools=prefixed(ToolRegistry([stamp]), "x"), memory=store
    )
    await agent.run("one")
    await agent.run("two")

    assert stamp.ticks == 2
    assert "tick 1" in seen[0]
    assert "tick 2" in seen[1]
