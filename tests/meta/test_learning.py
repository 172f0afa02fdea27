"""Tool search that learns from use: examples on tools, learned (query, tool) pairs in
real stores, and the ranking that follows them."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from satchel import InvalidInputError, SatchelUsageError, ToolFailed, ToolRegistry, tool
from satchel.meta import (
    MemoryUsageStore,
    MetaTools,
    SQLiteUsageStore,
    UsageStore,
    catalog_id,
)
from satchel.schema import EXAMPLES_META_KEY
from satchel.tools import FunctionTool, RawTool, Tool, ToolContext, check_examples

pytestmark = pytest.mark.anyio

QUERY = "quokka parade itinerary"


class NoIn(BaseModel):
    text: str = ""


class Shout(Tool[NoIn, str]):
    name = "shout"
    description = "Say the text loudly."
    examples = ("yell hello", "say it louder")

    async def execute(self, params: NoIn, ctx: ToolContext) -> str:
        return params.text.upper()


def _catalog() -> ToolRegistry:
    registry = ToolRegistry()
    for i, (name, text) in enumerate(
        [
            ("send_email", "Send an email message to a recipient."),
            ("create_event", "Create a calendar event at a date and time."),
            ("list_files", "List the files in a folder."),
            ("get_weather", "Get the weather forecast for a city."),
            ("translate_text", "Translate text from one language to another."),
            ("fail_always", "A tool that always fails."),
        ]
    ):

        def run(args: dict[str, Any], name: str = name) -> str:
            if name == "fail_always":
                return ToolFailed("it fails")  # type: ignore[return-value]
            return f"{name} ok"

        registry.register_raw(
            name=name,
            description=text,
            parameters={"type": "object", "properties": {}},
            run=run,
            category="even" if i % 2 == 0 else "odd",
            actions=["read"] if i < 3 else ["create"],
        )
    return registry


async def _names(meta: MetaTools, query: str, **extra: Any) -> list[str]:
    result = await meta.registry.call("discover_tools", {"query": query, **extra})
    assert result.ok, result.to_text()
    return [row[0] for row in result.output["tools"]]


# -- examples on every way to define a tool ---------------------------------------------


def test_every_way_to_define_a_tool_carries_examples() -> None:
    @tool(examples=["add 2 and 3", "  add 2   and 3 "])
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    def mul(a: int, b: int) -> int:
        """Multiply two integers."""
        return a * b

    raw = RawTool(
        name="echo",
        description="Echo.",
        parameters={"type": "object", "properties": {}},
        run=lambda args: "x",
        examples=["repeat after me"],
    )
    registry = ToolRegistry()
    registered = registry.register_raw(
        name="ping",
        description="Ping.",
        parameters={"type": "object", "properties": {}},
        run=lambda args: "pong",
        examples=["are you there"],
    )
    assert add.spec.examples == ("add 2 and 3",)
    assert FunctionTool(mul, examples=["times"]).spec.examples == ("times",)
    assert raw.spec.examples == ("repeat after me",)
    assert registered.spec.examples == ("are you there",)
    assert Shout().spec.examples == ("yell hello", "say it louder")


@pytest.mark.parametrize(
    "bad", ["one string", [1, 2], ["x" * 501], [f"e{i}" for i in range(51)], None]
)
def test_bad_examples_are_refused_at_definition(bad: Any) -> None:
    def f() -> str:
        """F."""
        return ""

    with pytest.raises(SatchelUsageError):
        check_examples(bad, tool="t")
    with pytest.raises(SatchelUsageError):
        FunctionTool(f, examples=bad)


async def test_examples_reach_mcp_meta_and_get_tool_schema_and_rank() -> None:
    registry = _catalog()
    registry.register(Shout())
    definition = next(d for d in registry.schemas("mcp") if d["name"] == "shout")
    assert definition["_meta"] == {EXAMPLES_META_KEY: ["yell hello", "say it louder"]}
    assert "_meta" not in next(d for d in registry.schemas("mcp") if d["name"] == "send_email")
    meta = MetaTools(registry, embedder=None)
    schema = await meta.registry.call("get_tool_schema", {"tool_name": "shout"})
    assert schema.output["examples"] == ["yell hello", "say it louder"]
    assert (await _names(meta, "yell"))[0] == "shout"


async def test_a_catalog_without_examples_ranks_as_before() -> None:
    meta = MetaTools(_catalog())
    scores = meta.index.score("send a message")
    assert scores.example is None
    assert (await _names(meta, "send a message"))[0] == "send_email"


# -- learning from use --------------------------------------------------------------


async def test_discover_then_a_successful_invoke_teaches_the_ranking() -> None:
    meta = MetaTools(_catalog())
    before = await _names(meta, QUERY)
    assert before[0] != "translate_text"
    done = await meta.registry.call("invoke_tool", {"tool_name": "translate_text"})
    assert done.ok
    pairs = await meta.learned()
    assert [(p.query, p.tool, p.uses) for p in pairs] == [(QUERY, "translate_text", 1)]
    assert (await _names(meta, QUERY))[0] == "translate_text"
    assert (await _names(meta, "quokka parade itinerary please"))[0] == "translate_text"


async def test_a_failed_call_or_no_query_teaches_nothing() -> None:
    meta = MetaTools(_catalog(), embedder=None)
    failed = await meta.registry.call("invoke_tool", {"tool_name": "get_weather"})
    assert failed.ok
    assert await meta.learned() == []  # no discover_tools query before it
    await _names(meta, QUERY)
    broken = await meta.registry.call("invoke_tool", {"tool_name": "fail_always"})
    assert not broken.ok
    assert await meta.learned() == []


async def test_learning_can_be_turned_off() -> None:
    meta = MetaTools(_catalog(), embedder=None, learn=False)
    await _names(meta, QUERY)
    assert (await meta.registry.call("invoke_tool", {"tool_name": "list_files"})).ok
    assert await meta.learned() == []


async def test_sessions_do_not_teach_each_other() -> None:
    meta = MetaTools(_catalog(), embedder=None)
    alice, bob = ToolContext(agent="alice"), ToolContext(agent="bob")
    await meta.registry.call("discover_tools", {"query": QUERY}, ctx=alice)
    assert (await meta.registry.call("invoke_tool", {"tool_name": "list_files"}, ctx=bob)).ok
    assert await meta.learned() == []
    assert (await meta.registry.call("invoke_tool", {"tool_name": "list_files"}, ctx=alice)).ok
    assert [p.tool for p in await meta.learned()] == ["list_files"]


async def test_a_pinned_call_teaches_too() -> None:
    meta = MetaTools(_catalog(), embedder=None, pinned=["get_weather"])
    await _names(meta, QUERY)
    assert (await meta.registry.call("get_weather", {})).ok
    assert [p.tool for p in await meta.learned()] == ["get_weather"]


async def test_add_list_and_forget_learned_pairs() -> None:
    meta = MetaTools(_catalog(), embedder=None)
    await meta.add_learned("book a table", "create_event")
    await meta.add_learned("table for two", "create_event")
    await meta.add_learned("book a table", "send_email")
    assert [p.query for p in await meta.learned("create_event")] == [
        "table for two",
        "book a table",
    ]
    assert (await _names(meta, "table for two"))[0] == "create_event"
    assert await meta.forget_learned(tool="create_event") == 2
    assert "create_event" not in await _names(meta, "table for two")
    assert await meta.forget_learned() == 1
    assert await meta.learned() == []


async def test_learned_pairs_are_kept_per_catalog() -> None:
    store = MemoryUsageStore()
    one = MetaTools(_catalog(), embedder=None, usage=store)
    other = ToolRegistry()
    other.register_raw(
        name="send_email",
        description="Send mail.",
        parameters={"type": "object", "properties": {}},
        run=lambda args: "ok",
    )
    two = MetaTools(other, embedder=None, usage=store)
    assert one.catalog_id != two.catalog_id
    assert one.catalog_id == catalog_id(reversed(_catalog().names()))
    await one.add_learned("write to mom", "send_email")
    assert await two.learned() == []


async def test_paging_goes_beyond_25_and_indexes_are_public() -> None:
    registry = ToolRegistry()
    for i in range(40):
        registry.register_raw(
            name=f"tool_{i:02d}",
            description=f"Tool number {i} for searching things.",
            parameters={"type": "object", "properties": {}},
            run=lambda args: "ok",
            category="big" if i < 30 else "small",
            actions=["read"],
        )
    meta = MetaTools(registry, embedder=None)
    seen: list[str] = []
    offset = 0
    while True:
        result = await meta.registry.call(
            "discover_tools", {"query": "searching things", "limit": 25, "offset": offset}
        )
        seen += [row[0] for row in result.output["tools"]]
        if "next_offset" not in result.output:
            break
        offset = result.output["next_offset"]
    assert sorted(seen) == sorted(registry.names())
    assert meta.by_category() == {
        "big": [f"tool_{i:02d}" for i in range(30)],
        "small": [f"tool_{i:02d}" for i in range(30, 40)],
    }
    assert meta.by_action() == {"read": registry.names()}


# -- the stores ----------------------------------------------------------------------


@pytest.fixture(params=["memory", "sqlite"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> UsageStore:
    if request.param == "memory":
        return MemoryUsageStore(max_pairs=3)
    return SQLiteUsageStore(tmp_path / "satchel.db", max_pairs=3)


async def test_a_store_is_bounded_and_evicts_the_least_recently_used(store: UsageStore) -> None:
    for query in ("a", "b", "c"):
        await store.learn("cat", query, "t")
    await store.learn("cat", "a", "t")  # a is used again: b is now the oldest
    await store.learn("cat", "d", "t")
    pairs = await store.pairs("cat")
    assert [p.query for p in pairs] == ["d", "a", "c"]
    assert pairs[1].uses == 2
    assert await store.pairs("other") == []


async def test_the_sqlite_store_keeps_pairs_across_opens_with_its_migration(
    tmp_path: Path,
) -> None:
    db = tmp_path / "satchel.db"
    first = SQLiteUsageStore(db)
    await first.learn("cat", "find my flights", "search_flights")
    first.close()
    second = SQLiteUsageStore(db)
    assert [(p.query, p.tool) for p in await second.pairs("cat")] == [
        ("find my flights", "search_flights")
    ]
    second.close()
    with sqlite3.connect(db) as conn:
        rows = conn.execute(
            "SELECT name FROM _satchel_migrations WHERE component = 'meta'"
        ).fetchall()
    assert rows == [("0001_meta_learned",)]


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    query=st.one_of(
        st.text(max_size=40),
        st.text(min_size=501, max_size=600),
        st.integers(),
        st.none(),
        st.lists(st.text(max_size=3), max_size=2),
    ),
    tool=st.one_of(st.text(max_size=12), st.integers(), st.none(), st.just("send_email")),
)
async def test_bad_learned_pairs_get_a_clear_error_and_lose_nothing(
    tmp_path_factory: pytest.TempPathFactory, query: Any, tool: Any
) -> None:
    db = tmp_path_factory.mktemp("usage") / "satchel.db"
    meta = MetaTools(_catalog(), embedder=None, usage=SQLiteUsageStore(db))
    await meta.add_learned("keep this one", "get_weather")
    valid = (
        tool == "send_email"
        and isinstance(query, str)
        and 0 < len(" ".join(query.split())) <= 500
        and "\x00" not in query
    )
    if valid:
        pair = await meta.add_learned(query, tool)
        assert (pair.query, pair.tool) == (" ".join(query.split()), tool)
    else:
        with pytest.raises(InvalidInputError, match=r"."):
            await meta.add_learned(query, tool)
    kept = [(p.query, p.tool) for p in await meta.learned("get_weather")]
    assert kept == [("keep this one", "get_weather")]


@pytest.mark.parametrize(
    ("cut", "expected"),
    [
        ("Create a new issue in the", "Create a new issue…"),
        ("Send the report to", "Send the report…"),
        ("Do not", "Do not…"),
        ("Delete the file unless", "Delete the file unless…"),
        ("List files,", "List files…"),
    ],
)
def test_a_cut_summary_ends_on_a_word_that_keeps_its_meaning(cut: str, expected: str) -> None:
    from satchel.meta._summary import clean_cut

    assert clean_cut(cut) == expected


def test_long_summaries_in_rows_never_end_on_a_dangling_word() -> None:
    from satchel.meta import CatalogEntry

    registry = ToolRegistry()
    registry.register_raw(
        name="create_issue",
        description=(
            "Create a new issue in a GitHub repository with a title and an optional body "
            "that describes the problem in the words of the reporter."
        ),
        parameters={"type": "object", "properties": {}},
        run=lambda args: "ok",
    )
    spec = registry.get("create_issue").spec  # type: ignore[union-attr]
    summary = CatalogEntry.from_spec(spec).summary
    assert summary.endswith("…")
    last = summary.rstrip("…").split(" ")[-1]
    assert last.lower() not in {"a", "an", "the", "and", "or", "of", "to", "in", "with"}


async def test_a_failing_store_never_fails_the_call_that_teaches(tmp_path: Path) -> None:
    from satchel import StorageError

    store = SQLiteUsageStore(tmp_path / "satchel.db")
    meta = MetaTools(_catalog(), embedder=None, usage=store)
    await meta.prepare()
    store.close()
    await _names(meta, QUERY)
    done = await meta.registry.call("invoke_tool", {"tool_name": "list_files"})
    assert done.ok
    with pytest.raises(StorageError):
        await meta.learned()
