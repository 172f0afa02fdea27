"""Every call the seed documents show, with their arguments as written, run against
the real tools (issue 32): Pattern's memory tools (seeds 000 and 002) and AgenticPal's
meta-tools and productivity tools (seed 004), on a SQLite store, the local calendar
and Maildir, and real :class:`~satchel.meta.MetaTools`.

Each call succeeds without a profile (a destructive one is held for approval, as
satchel holds it); under the seed's profile it answers in the seed's shape. The last
tests run the same calls through real ``satchel serve --compat ...`` processes over
stdio with the official ``mcp`` client.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import jsonschema
import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters

from satchel import Agent
from satchel.agent import TestModel
from satchel.builtin import BuiltinTools
from satchel.compat import CompatProfile, with_compat
from satchel.consent import Decision
from satchel.memory import BlockKind, SQLiteStore
from satchel.meta import MetaTools
from satchel.registry import BaseRegistry, ToolRegistry, merged
from satchel.toolkit import ToolkitConfig, productivity_toolkit
from satchel.tools import ToolContext

pytestmark = pytest.mark.anyio

STARTUP = 90  # seconds for a server process to start (imports are slow on 2 cores)
CTX = ToolContext(agent="ada")

# -- the seeds' calls, as written ---------------------------------------------------

# seed 000: Pattern's ContextOperation, RecallOperation, SearchParams, SendMessageParams
PATTERN_000: list[tuple[str, dict[str, Any]]] = [
    ("context", {"operation": "append", "label": "human", "value": "User prefers dark mode"}),
    ("context", {"operation": "replace", "label": "human", "old": "dark", "new": "light"}),
    ("context", {"operation": "archive", "label": "notes"}),
    ("context", {"operation": "load_from_archival", "label": "notes"}),
    ("context", {"operation": "swap", "archive": "notes", "load": "old_project"}),
    ("recall", {"operation": "insert", "label": "trip", "value": "Flight to Lisbon on May 3"}),
    ("recall", {"operation": "append", "label": "trip", "value": "Hotel near the river"}),
    ("recall", {"operation": "read", "label": "trip"}),
    ("recall", {"operation": "delete", "label": "trip"}),
    ("search", {"domain": "archival_memory", "query": "project deadline", "limit": 10}),
    ("send_message", {"target": {"type": "User"}, "content": "Done."}),
]
"""The Rust enums' variants, with their fields, as a model trained on them sends them
(``Swap { archive, load }``, ``Insert { label, value }``, ``MessageTarget::User``)."""

# seed 002: the JSON examples of Pattern's built-in tools
PATTERN_002: list[tuple[str, dict[str, Any]]] = [
    ("context", {"operation": "append", "label": "human", "content": "Prefers morning meetings"}),
    (
        "context",
        {"operation": "swap", "archive_label": "old_project", "load_label": "new_project"},
    ),
    (
        "recall",
        {
            "operation": "insert",
            "label": "meeting_notes_2024_01",
            "content": "Discussed project timeline...",
        },
    ),
    ("search", {"domain": "archival_memory", "query": "project deadline", "limit": 10}),
    ("send_message", {"message": "I've updated your preferences. How else can I help?"}),
]

SEND_EMAIL = {
    "to": ["john@example.com", "mary@example.com"],
    "subject": "Project update",
    "body": "The timeline moved to May.",
    "cc": ["boss@example.com"],
}
"""AgenticPal's ``SendEmailParams``: ``to`` and ``cc`` as lists."""


@dataclass
class Setup:
    store: SQLiteStore
    memory: ToolRegistry
    catalog: ToolRegistry


@pytest.fixture
async def setup(tmp_path: Path) -> AsyncIterator[Setup]:
    store = await SQLiteStore.open(tmp_path / "memory.db", embedder=None)
    memory = BuiltinTools().build(store)
    toolkit = productivity_toolkit(ToolkitConfig(data_dir=tmp_path, timezone="UTC"), store=store)
    try:
        yield Setup(store, memory, merged(memory, toolkit))
    finally:
        await store.close()


async def _pattern_blocks(store: SQLiteStore) -> None:
    """The blocks Pattern's calls name: the core ``human`` block, a working ``notes``
    block and two archival entries."""
    await store.create_block("ada", "human", "Name: Ada.", kind=BlockKind.CORE)
    await store.create_block("ada", "notes", "Draft of the plan", kind=BlockKind.WORKING)
    for label in ("old_project", "new_project"):
        await store.create_block("ada", label, f"All about {label}", kind=BlockKind.ARCHIVAL)


# -- Pattern ------------------------------------------------------------------------


async def test_pattern_000_calls_succeed_with_the_seeds_arguments(setup: Setup) -> None:
    await _pattern_blocks(setup.store)
    for name, args in PATTERN_000:
        result = await setup.memory.call(name, args, CTX)
        assert result.ok, (name, args, result.error)
    human = await setup.store.get_block("ada", "human")
    assert human.value.endswith("User prefers light mode")
    notes = await setup.store.get_block("ada", "notes")
    assert notes.kind is BlockKind.ARCHIVAL  # archived, loaded back, swapped out again
    assert (await setup.store.get_block("ada", "old_project")).kind is BlockKind.WORKING


async def test_pattern_002_calls_succeed_with_the_seeds_arguments(setup: Setup) -> None:
    await _pattern_blocks(setup.store)
    await setup.store.set_kind("ada", "old_project", BlockKind.WORKING)
    for name, args in PATTERN_002:
        result = await setup.memory.call(name, args, CTX)
        assert result.ok, (name, args, result.error)
    entry = await setup.store.get_block("ada", "meeting_notes_2024_01")
    assert entry.value == "Discussed project timeline..."
    assert (await setup.store.get_block("ada", "new_project")).kind is BlockKind.WORKING


async def test_without_a_profile_send_message_keeps_satchels_shape(setup: Setup) -> None:
    result = await setup.memory.call("send_message", {"message": "Hello"}, CTX)
    assert result.ok
    assert set(result.to_dict()["output"]) == {"message", "receipts"}


async def test_under_the_pattern_profile_send_message_answers_success_and_message(
    setup: Setup,
) -> None:
    served = with_compat(setup.memory, "pattern")
    result = await served.call("send_message", dict(PATTERN_002[-1][1]), CTX)
    assert result.ok
    assert result.structured() == {"success": True, "message": result.output["message"]}
    assert result.output["message"].startswith("Sent to")
    # the other built-ins answer as satchel's do
    listed = await served.call("context", {"operation": "list"}, CTX)
    assert set(listed.to_dict()["output"]) >= {"message", "blocks"}


async def test_agent_execute_tool_runs_the_seeds_call_as_the_agent(setup: Setup) -> None:
    await _pattern_blocks(setup.store)
    agent = Agent("ada", TestModel(), memory=setup.store)
    result = await agent.execute_tool(
        "context", {"operation": "append", "label": "human", "value": "User prefers dark mode"}
    )
    assert result.ok, result.error
    assert (await setup.store.get_block("ada", "human")).value.endswith("User prefers dark mode")


async def test_a_tool_inside_an_agent_reaches_its_model_and_shared_blocks(
    setup: Setup,
) -> None:
    seen: dict[str, Any] = {}

    async def peek(ctx: ToolContext) -> str:
        """Report what the context carries."""
        seen["model"] = ctx.model
        assert ctx.shared_blocks is not None
        await ctx.shared_blocks.share_block("human", "bob", "read_only")
        seen["shared"] = [b.label for b in await ctx.shared_blocks.shared_blocks()]
        return "ok"

    await _pattern_blocks(setup.store)
    tools = ToolRegistry()
    tools.register(peek)
    model = TestModel()
    agent = Agent("ada", model, memory=setup.store, tools=tools)
    assert (await agent.execute_tool("peek", {})).ok
    assert seen == {"model": model, "shared": ["human"]}
    bobs = await setup.store.get_block("bob", "ada/human")
    assert bobs.agent == "ada"
    assert ToolContext().model is None
    assert ToolContext().shared_blocks is None


# -- AgenticPal -----------------------------------------------------------------------


def _meta(catalog: BaseRegistry, compat: CompatProfile | None = None) -> MetaTools:
    return MetaTools(catalog, embedder=None, learn=False, compat=compat)


async def test_agenticpal_calls_succeed_without_a_profile(setup: Setup) -> None:
    meta = _meta(setup.catalog)
    found = await meta.discover_tools(categories=["calendar"], actions=["create"])
    assert [row[0] for row in found["tools"]] == ["add_calendar_event"]
    schema = await meta.get_tool_schema("add_calendar_event")
    assert schema["name"] == "add_calendar_event"
    added = await meta.invoke_tool(
        tool_name="add_calendar_event",
        parameters={"title": "Meeting with John", "start_time": "tomorrow 2pm", "timezone": "UTC"},
    )
    assert added["title"] == "Meeting with John"
    held = await meta.invoke_tool(
        tool_name="delete_calendar_event", parameters={"event_id": added["event_id"]}
    )
    assert held["error"]["details"]["status"] == "pending_confirmation"
    listing = await meta.discover_tools(categories=["calendar"], actions=["list", "search"])
    assert {row[0] for row in listing["tools"]} == {
        "list_calendar_events",
        "search_calendar_events",
    }
    await meta.get_tool_schema("list_calendar_events")
    events = await meta.invoke_tool(
        "list_calendar_events", {"time_min": "tomorrow", "time_max": "tomorrow end of day"}
    )
    assert [e["title"] for e in events["events"]] == ["Meeting with John"]
    mail = await meta.discover_tools(categories=["gmail"], actions=["create"])
    assert [row[0] for row in mail["tools"]] == ["send_email"]
    sent = await meta.invoke_tool("send_email", SEND_EMAIL)
    assert sent["error"]["details"]["status"] == "pending_confirmation"


async def test_agenticpal_calls_answer_in_the_seeds_shapes_under_its_profile(
    setup: Setup,
) -> None:
    meta = _meta(setup.catalog, "agenticpal")
    found = await meta.discover_tools(categories=["calendar"], actions=["create"])
    assert found == {
        "tools": [
            {
                "name": "add_calendar_event",
                "summary": found["tools"][0]["summary"],
                "category": "calendar",
                "actions": ["create", "write"],
                "is_write": True,
            }
        ]
    }
    schema = await meta.get_tool_schema("add_calendar_event")
    assert set(schema) == {"name", "description", "parameters", "required", "is_write"}
    assert schema["required"] == ["title", "start_time"]
    assert schema["is_write"] is True
    assert {"title", "start_time", "end_time", "duration", "attendees"} <= set(schema["parameters"])
    added = await meta.invoke_tool(
        tool_name="add_calendar_event",
        parameters={"title": "Meeting with John", "start_time": "tomorrow 2pm", "timezone": "UTC"},
    )
    assert set(added) == {"success", "message", "data"}
    assert added["success"] is True
    assert added["data"]["title"] == "Meeting with John"
    held = await meta.invoke_tool(
        tool_name="delete_calendar_event", parameters={"event_id": added["data"]["event_id"]}
    )
    assert set(held) == {"status", "tool_name", "parameters", "message", "approval_id"}
    assert held["status"] == "pending_confirmation"
    assert held["tool_name"] == "delete_calendar_event"
    assert held["parameters"] == {"event_id": added["data"]["event_id"]}
    listing = await meta.discover_tools(categories=["calendar"], actions=["list", "search"])
    assert [row["name"] for row in listing["tools"]] == [
        "list_calendar_events",
        "search_calendar_events",
    ]
    assert "list" in listing["tools"][0]["actions"]
    events = await meta.invoke_tool(
        "list_calendar_events", {"time_min": "tomorrow", "time_max": "tomorrow end of day"}
    )
    assert events["success"] is True
    assert [e["title"] for e in events["data"]["events"]] == ["Meeting with John"]
    mail = await meta.discover_tools(categories=["gmail"], actions=["create"])
    assert [(r["name"], r["category"]) for r in mail["tools"]] == [("send_email", "gmail")]
    assert mail["tools"][0]["actions"] == ["send", "write", "create"]
    sent = await meta.invoke_tool("send_email", SEND_EMAIL)
    assert sent["status"] == "pending_confirmation"
    assert sent["parameters"] == SEND_EMAIL
    await meta.broker.resolve(sent["approval_id"], Decision.approve_once(), by="ada")
    done = await meta.invoke_tool("send_email", SEND_EMAIL, approval_id=sent["approval_id"])
    assert done["success"] is True
    assert done["data"]["to"] == ["john@example.com", "mary@example.com"]
    assert done["data"]["cc"] == ["boss@example.com"]


async def test_agenticpal_errors_are_success_false_with_message_and_error(
    setup: Setup,
) -> None:
    meta = _meta(setup.catalog, "agenticpal")
    unknown = await meta.invoke_tool("no_such_tool", {})
    assert set(unknown) == {"success", "message", "error"}
    assert unknown == {**unknown, "success": False, "error": "unknown_tool"}
    bad = await meta.invoke_tool("add_calendar_event", {"title": "No start"})
    assert bad["success"] is False
    assert bad["error"] == "invalid_arguments"
    assert "start_time" in bad["message"]
    result = await meta.registry.call("invoke_tool", {"tool_name": "no_such_tool"}, CTX)
    assert not result.ok  # still an error for satchel's callers and MCP's isError
    assert json.loads(result.to_text()) == unknown
    # without the profile, satchel's own envelope
    plain = await _meta(setup.catalog).invoke_tool("no_such_tool", {})
    assert plain["ok"] is False
    assert plain["error"]["kind"] == "unknown_tool"


# -- through real `satchel serve --compat` processes ------------------------------------


def _serve(tmp_path: Path, *args: str) -> StdioServerParameters:
    env = {**os.environ, "XDG_DATA_HOME": str(tmp_path / "data")}
    command = ["-m", "satchel", "serve", "--db", str(tmp_path / "m.db"), *args]
    return StdioServerParameters(command=sys.executable, args=command, env=env)


def _json(result: types.CallToolResult) -> dict[str, Any]:
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return json.loads(block.text)


@pytest.mark.slow
async def test_satchel_serve_compat_agenticpal_answers_the_seeds_calls_over_stdio(
    tmp_path: Path,
) -> None:
    params = _serve(
        tmp_path, "--compat", "agenticpal", "--lazy", "--toolkit", "productivity",
        "--timezone", "UTC", "--no-learn",
    )  # fmt: skip
    with anyio.fail_after(STARTUP + 120):
        async with Client(params, mode="legacy") as client:
            found = await client.call_tool(
                "discover_tools", {"categories": ["calendar"], "actions": ["create"]}
            )
            added = await client.call_tool(
                "invoke_tool",
                {
                    "tool_name": "add_calendar_event",
                    "parameters": {
                        "title": "Meeting with John",
                        "start_time": "tomorrow 2pm",
                        "timezone": "UTC",
                    },
                },
            )
            event_id = _json(added)["data"]["event_id"]
            held = await client.call_tool(
                "invoke_tool",
                {"tool_name": "delete_calendar_event", "parameters": {"event_id": event_id}},
            )
            mail = await client.call_tool(
                "discover_tools", {"categories": ["gmail"], "actions": ["create"]}
            )
            schema = await client.call_tool("get_tool_schema", {"tool_name": "send_email"})
    assert [row["name"] for row in _json(found)["tools"]] == ["add_calendar_event"]
    assert _json(found)["tools"][0]["actions"] == ["create", "write"]
    assert added.is_error is not True
    assert added.structured_content is not None
    assert added.structured_content["success"] is True
    assert held.is_error is True
    assert _json(held)["status"] == "pending_confirmation"
    assert _json(held)["tool_name"] == "delete_calendar_event"
    assert _json(held)["parameters"] == {"event_id": event_id}
    assert [row["category"] for row in _json(mail)["tools"]] == ["gmail"]
    assert set(_json(schema)) == {"name", "description", "parameters", "required", "is_write"}


@pytest.mark.slow
async def test_satchel_serve_compat_pattern_answers_send_message_over_stdio(
    tmp_path: Path,
) -> None:
    with anyio.fail_after(STARTUP + 60):
        async with Client(_serve(tmp_path, "--compat", "pattern"), mode="legacy") as client:
            appended = await client.call_tool("context", dict(PATTERN_000[0][1]))
            sent = await client.call_tool("send_message", dict(PATTERN_002[-1][1]))
    assert appended.is_error is not True, appended.content
    assert sent.is_error is not True, sent.content
    assert sent.structured_content is not None
    assert set(sent.structured_content) == {"success", "message"}
    assert sent.structured_content["success"] is True


async def test_a_profiles_results_fit_the_output_schemas_it_lists(setup: Setup) -> None:
    # an MCP client checks structuredContent against the listed outputSchema: the
    # envelope of a direct tool, or Pattern's send_message, must fit what is listed
    await _pattern_blocks(setup.store)
    cases: list[tuple[CompatProfile, str, dict[str, Any]]] = [
        ("agenticpal", "add_calendar_event", {"title": "Lunch", "start_time": "tomorrow 1pm"}),
        ("agenticpal", "context", {"operation": "list"}),
        ("pattern", "send_message", {"message": "Hello"}),
        ("pattern", "context", {"operation": "list"}),
    ]
    for profile, name, args in cases:
        served = with_compat(setup.catalog, profile)
        listed = next(s for s in served.schemas("mcp") if s["name"] == name)
        result = await served.call(name, args, CTX)
        assert result.ok, result.error
        if "outputSchema" in listed:
            jsonschema.validate(result.structured(), listed["outputSchema"])
        else:
            assert profile == "agenticpal"
        pinned = MetaTools(setup.catalog, embedder=None, learn=False, pinned=[name], compat=profile)
        assert pinned.registry.schemas("mcp")[-1] == listed
