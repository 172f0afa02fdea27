"""Choosing the built-in tools: :class:`BuiltinTools` / :func:`builtin_tools` (which
ones, their options, replacements), :func:`memory_toolset` as a thin call of it, and
the memory, router and broker a tool reaches through ``ToolContext`` in the agent
runtime and in plain library calls."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel

from satchel import SatchelUsageError, ToolContext, ToolRegistry, tool
from satchel._errors import NotFoundError, PermissionDeniedError
from satchel.agent import Agent, TestModel, call
from satchel.builtin import BuiltinTools, MessageRouter, builtin_tools, memory_toolset
from satchel.consent import InMemoryApprovalStore, PermissionBroker
from satchel.memory import (
    AgentMemory,
    BlockKind,
    ConsentRequest,
    Permission,
    RequestOrigin,
    SQLiteStore,
)

pytestmark = pytest.mark.anyio

ALL = ["context", "recall", "search", "send_message"]


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[SQLiteStore]:
    async with SQLiteStore(tmp_path / "m.db", embedder=None) as opened:
        yield opened


class Found(BaseModel):
    by: str
    labels: list[str]


@tool(name="search")
async def my_search(query: str, ctx: ToolContext) -> Found:
    """Find notes my way.

    Args:
        query: What to look for.
    """
    hits = await ctx.search(query)
    return Found(by="mine", labels=[h.label or "" for h in hits])


@tool
def other_name(query: str) -> str:
    """Not called search.

    Args:
        query: Anything.
    """
    return query


async def test_by_default_all_four_builtins_are_built_in_order(store: SQLiteStore) -> None:
    assert builtin_tools(store).names() == ALL
    assert memory_toolset(store).names() == ALL
    assert tuple(ALL) == BuiltinTools.ALL_NAMES


async def test_include_and_exclude_choose_the_builtins(store: SQLiteStore) -> None:
    assert builtin_tools(store, include={"search", "context"}).names() == ["context", "search"]
    assert builtin_tools(store, exclude=["send_message"]).names() == ALL[:3]
    assert builtin_tools(store, include=()).names() == []


async def test_a_replacement_stands_in_under_the_builtins_name_and_sees_memory(
    store: SQLiteStore,
) -> None:
    await store.create_block("ada", "trip", "Kyoto in April", kind=BlockKind.ARCHIVAL)
    tools = builtin_tools(store, replace={"search": my_search})
    plain = await tools.call("search", {"query": "Kyoto"}, ToolContext(agent="ada"))
    scoped = await tools.call(
        "search",
        {"query": "Kyoto"},
        ToolContext(agent="ada", memory=AgentMemory(store, "ada")),
    )

    assert tools.names() == ALL
    assert tools.get("search") is not None
    assert "my way" in tools.specs()[2].description
    # a plain library call carries no memory: the developer's usage error, logged
    assert plain.error is not None
    assert (plain.error.kind, plain.error.details) == (
        "internal",
        {"exception": "SatchelUsageError"},
    )
    assert scoped.ok, scoped.to_text()
    assert scoped.structured() == {"by": "mine", "labels": ["trip"]}


async def test_options_reach_the_builtins(store: SQLiteStore) -> None:
    tools = BuiltinTools(
        new_block_kind=BlockKind.CORE, archival_permission=Permission.READ_WRITE
    ).build(store)
    ctx = ToolContext(agent="ada")
    await tools.call("context", {"operation": "set", "label": "goal", "value": "Ship."}, ctx)
    await tools.call("recall", {"operation": "insert", "content": "x", "label": "n"}, ctx)

    assert (await store.get_block("ada", "goal")).kind is BlockKind.CORE
    assert (await store.get_block("ada", "n")).permission is Permission.READ_WRITE


@pytest.mark.parametrize(
    ("options", "words"),
    [
        ({"include": ["serch"]}, ["'serch'", "Did you mean 'search'"]),
        ({"exclude": ["nope"]}, ["'nope'", "context, recall, search, send_message"]),
        ({"replace": {"memory": other_name}}, ["'memory'"]),
        ({"include": ["search"], "exclude": ["search"]}, ["both included and excluded"]),
        ({"exclude": ["search"], "replace": {"search": my_search}}, ["excluded and replaced"]),
        ({"include": "search"}, ["collection of tool names"]),
    ],
)
def test_contradictory_or_unknown_names_are_usage_errors(
    options: dict[str, object], words: list[str]
) -> None:
    with pytest.raises(SatchelUsageError) as raised:
        BuiltinTools(**options)  # type: ignore[arg-type]
    for word in words:
        assert word in raised.value.message


async def test_a_replacement_with_another_name_is_refused_and_nothing_is_registered(
    store: SQLiteStore,
) -> None:
    registry = ToolRegistry()
    with pytest.raises(SatchelUsageError, match="give it the name 'search'"):
        BuiltinTools(replace={"search": other_name}).build(store, registry=registry)
    assert registry.names() == []


async def test_building_into_a_registry_that_has_the_names_needs_replace_existing(
    store: SQLiteStore,
) -> None:
    registry = builtin_tools(store)
    with pytest.raises(SatchelUsageError, match="already registered"):
        BuiltinTools().build(store, registry=registry)
    assert BuiltinTools().build(store, registry=registry, replace_existing=True) is registry


@given(names=st.lists(st.text(max_size=20) | st.sampled_from(ALL), max_size=4))
def test_any_names_either_choose_builtins_or_raise_a_usage_error(names: list[str]) -> None:
    if set(names) <= set(ALL):
        assert set(BuiltinTools(exclude=names).names) == set(ALL) - set(names)
        return
    with pytest.raises(SatchelUsageError) as raised:
        BuiltinTools(exclude=names)
    assert raised.value.details["tool"] in set(names) - set(ALL)


class Seen(BaseModel):
    agent: str
    human: str
    origin: str | None
    same_router: bool
    same_broker: bool


async def test_the_agent_runtime_hands_tools_its_memory_router_and_broker(
    store: SQLiteStore,
) -> None:
    await store.ensure_agent("ada")
    await store.append_to_block("ada", "human", "Likes tea.")
    router = MessageRouter(store)
    broker = PermissionBroker(InMemoryApprovalStore())

    @tool
    async def peek(ctx: ToolContext) -> Seen:
        """Look at what the context carries."""
        assert ctx.memory is not None
        block = await ctx.memory.get_block("human")
        await ctx.memory.append_to_block("human", "Peeked.")
        return Seen(
            agent=ctx.memory.agent,
            human=block.value,
            origin=None if ctx.memory.origin is None else ctx.memory.origin.channel,
            same_router=ctx.router is router,
            same_broker=ctx.broker is broker,
        )

    agent = Agent(
        "ada",
        TestModel([call("peek", {}), "done"]),
        tools=ToolRegistry([peek]),
        memory=store,
        router=router,
        broker=broker,
        builtins=BuiltinTools(exclude={"send_message"}),
    )
    result = await agent.run("peek please")

    assert sorted(agent.tools.names()) == ["context", "peek", "recall", "search"]
    [(_, outcome)] = result.tool_calls
    assert outcome.ok, outcome.to_text()
    assert outcome.structured() == {
        "agent": "ada",
        "human": "Likes tea.",
        "origin": "agent:ada",
        "same_router": True,
        "same_broker": True,
    }
    assert (await store.get_block("ada", "human")).value == "Likes tea.\nPeeked."


async def test_an_agents_own_search_replaces_the_builtin_one(store: SQLiteStore) -> None:
    await store.create_block("ada", "trip", "Kyoto in April", kind=BlockKind.ARCHIVAL)
    agent = Agent(
        "ada",
        TestModel([call("search", {"query": "Kyoto"}), "done"]),
        tools=ToolRegistry([my_search]),
        memory=store,
        builtins=BuiltinTools(exclude={"search"}),
    )
    result = await agent.run("find it")

    [(_, outcome)] = result.tool_calls
    found = outcome.structured()
    assert found is not None
    assert found["by"] == "mine"
    assert found["labels"][0] == "trip"  # then the recorded call, a conversation hit


async def test_without_excluding_it_the_agents_own_search_clashes(store: SQLiteStore) -> None:
    with pytest.raises(SatchelUsageError, match="'search'"):
        Agent("ada", TestModel(["hi"]), tools=ToolRegistry([my_search]), memory=store)


async def test_agent_memory_writes_pass_the_gate_with_the_requests_origin(
    tmp_path: Path,
) -> None:
    asked: list[ConsentRequest] = []

    async def refuse(request: ConsentRequest) -> bool:
        asked.append(request)
        return False

    async with SQLiteStore(tmp_path / "m.db", embedder=None, consent=refuse) as store:
        await store.create_block("ada", "rules", "Be kind.", permission=Permission.HUMAN)
        await store.create_block("ada", "notes", "x")
        memory = AgentMemory(store, "ada", RequestOrigin(channel="discord:42"))
        with pytest.raises(PermissionDeniedError):
            await memory.append_to_block("rules", "Be brief.")
        with pytest.raises(PermissionDeniedError):
            await memory.delete_block("notes")  # read_write: only admin deletes
        with pytest.raises(NotFoundError):
            await AgentMemory(store, "bob").get_block("rules")  # scoped to its agent
        rules = await memory.get_block("rules")
        notes = await memory.get_block("notes")

    assert [(r.label, r.origin) for r in asked] == [("rules", "discord:42")]
    assert (rules.value, notes.value) == ("Be kind.", "x")


async def test_a_context_without_memory_says_so_when_searched() -> None:
    with pytest.raises(SatchelUsageError, match="carries no memory"):
        await ToolContext(agent="ada").search("anything")
