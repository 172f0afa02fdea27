"""Several agents on one store: send_message to an agent or a group wakes the
recipients in the same runtime, bounded."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from pathlib import Path

import pytest

from satchel import SatchelUsageError
from satchel.agent import AgentTeam, TestModel, call
from satchel.builtin import OutgoingMessage
from satchel.memory import MemoryStore, SQLiteStore
from satchel.providers import ToolCall

pytestmark = pytest.mark.anyio


def to_agent(name: str, text: str) -> ToolCall:
    return call("send_message", {"target": {"type": "agent", "id": name}, "content": text})


def to_group(name: str, text: str) -> ToolCall:
    return call("send_message", {"target": {"type": "group", "name": name}, "content": text})


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[MemoryStore]:
    async with SQLiteStore(tmp_path / "m.db", embedder=None) as opened:
        yield opened


async def test_a_message_to_an_agent_wakes_it_and_its_answer_wakes_the_sender(
    store: MemoryStore,
) -> None:
    team = AgentTeam(store)
    ada_model = TestModel([to_agent("bob", "What is 2+2?"), "Bob says 4."])
    bob_model = TestModel([to_agent("ada", "4")])
    team.agent("ada", ada_model)
    team.agent("bob", bob_model)

    result = await team.run("ada", "Ask bob what 2+2 is")

    assert [r.agent for r in result.runs] == ["ada", "bob", "ada"]
    assert [r.stop for r in result.runs] == ["terminal", "terminal", "reply"]
    assert result.runs[-1].reply == "Bob says 4."
    assert bob_model.requests[0].messages[-1].content == "[message from agent:ada] What is 2+2?"
    assert ada_model.requests[-1].messages[-1].content == "[message from agent:bob] 4"
    bobs = await store.list_messages("bob")
    assert (bobs[0].role, bobs[0].content) == ("user", "What is 2+2?")


async def test_a_group_message_wakes_every_other_member_in_order(store: MemoryStore) -> None:
    team = AgentTeam(store, groups={"crew": ["ada", "bob", "cy"]})
    team.agent("ada", TestModel([to_group("crew", "Stand-up time."), "ok"]))
    team.agent("bob", TestModel(["bob here"]))
    team.agent("cy", TestModel(["cy here"]))

    result = await team.run("ada", "Start the stand-up")

    assert [r.agent for r in result.runs] == ["ada", "bob", "cy"]
    assert [r.reply for r in result.runs[1:]] == ["bob here", "cy here"]


async def test_a_supervisor_picks_who_answers_a_group_message(store: MemoryStore) -> None:
    asked: list[Sequence[str]] = []

    def pick(message: OutgoingMessage, members: Sequence[str]) -> str:
        asked.append(list(members))
        return "cy"

    team = AgentTeam(store, groups={"crew": ["ada", "bob", "cy"]}, supervisor=pick)
    team.agent("ada", TestModel([to_group("crew", "Who takes this bug?")]))
    team.agent("bob", TestModel(["bob here"]))
    team.agent("cy", TestModel(["mine"]))

    result = await team.run("ada", "Find someone for the bug")

    assert [r.agent for r in result.runs] == ["ada", "cy"]
    assert asked == [["bob", "cy"]]


async def test_two_agents_that_keep_messaging_each_other_stop_at_max_wakes(
    store: MemoryStore,
) -> None:
    team = AgentTeam(store, max_wakes=4)
    team.agent("ada", TestModel([to_agent("bob", "ping")] * 10))
    team.agent("bob", TestModel([to_agent("ada", "pong")] * 10))

    result = await team.run("ada", "start")

    assert len(result.runs) == 5
    assert result.stopped_early is True


async def test_team_misuse_is_a_usage_error(store: MemoryStore) -> None:
    team = AgentTeam(store)
    team.agent("ada", TestModel(["hi"]))
    with pytest.raises(SatchelUsageError, match="already"):
        team.agent("ada", TestModel())
    with pytest.raises(SatchelUsageError, match="No agent called 'zed'"):
        await team.run("zed", "hello")
    with pytest.raises(SatchelUsageError, match="max_wakes"):
        AgentTeam(store, max_wakes=-1)
