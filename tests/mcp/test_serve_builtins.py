"""``satchel serve`` with the built-ins chosen on purpose: a user's registry replaces
``search`` with ``--replace``, ``--no-memory`` serves the user's tools alone, and a
user's tool reads memory and asks for consent through its ``ToolContext`` (no global
state), all through a real server process and the official SDK client."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client
from typer.testing import CliRunner

from satchel.cli import app
from satchel.memory import BlockKind, SQLiteStore

from .conftest import HERE, STARTUP, satchel_stdio

pytestmark = pytest.mark.anyio

AGENT = "alice"
AUTHOR_TOOLS = f"{HERE / 'servers' / 'author_tools.py'}:registry"


async def _seed(db: Path) -> None:
    async with await SQLiteStore.open(db, embedder=None) as store:
        await store.create_block(AGENT, "notes", "Tea at five.")
        await store.create_block(AGENT, "trip", "Kyoto in April", kind=BlockKind.ARCHIVAL)
        await store.create_block("bob", "trip", "Bob's secret trip", kind=BlockKind.ARCHIVAL)


@asynccontextmanager
async def serving(db: Path, *extra: str) -> AsyncGenerator[Client]:
    params = satchel_stdio("--db", str(db), "--agent", AGENT, "--template", "none", *extra)
    async with Client(params, mode="legacy") as client:
        yield client


def _ok(result: types.CallToolResult) -> dict[str, Any]:
    assert result.is_error is not True, result.content
    assert result.structured_content is not None
    return result.structured_content


def _error(result: types.CallToolResult) -> dict[str, Any]:
    assert result.is_error is True
    assert result.meta is not None
    return result.meta["satchel/error"]


async def _approvals(db: Path, command: str, *args: str) -> str:
    done = await anyio.run_process(
        [sys.executable, "-m", "satchel", "approvals", command, "--db", str(db), *args],
        check=True,
    )
    return done.stdout.decode()


async def test_replace_search_serves_the_users_search_which_reads_memory_through_ctx(
    tmp_path: Path,
) -> None:
    db = tmp_path / "m.db"
    await _seed(db)
    with anyio.fail_after(STARTUP + 60):
        async with serving(db, "--tools", AUTHOR_TOOLS, "--replace", "search") as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            found = _ok(await client.call_tool("search", {"query": "Kyoto"}))
            note = _ok(await client.call_tool("read_note", {"label": "notes"}))
            listed = _ok(await client.call_tool("context", {"operation": "list"}))
            hidden = _error(await client.call_tool("read_note", {"label": "bob/trip"}))

    assert sorted(tools) == [
        "context",
        "read_note",
        "recall",
        "search",
        "send_message",
        "stamp_note",
    ]
    assert "the user's own search" in (tools["search"].description or "")
    assert set(tools["search"].input_schema["properties"]) == {"query"}
    assert found["by"] == "user"
    # alice's archival entry first (her core block's line may follow); bob's is not hers
    assert (found["labels"][0], found["texts"][0]) == ("trip", "Kyoto in April")
    assert "Bob's secret trip" not in found["texts"]
    assert note == {
        "agent": AGENT,
        "value": "Tea at five.",
        "origin": "mcp",
        "has_router": True,
        "has_broker": True,
    }
    assert [b["label"] for b in listed["blocks"]] == ["notes"]  # the other built-ins stay
    assert hidden["kind"] == "failed"  # bob's entry is not shared: not even visible
    assert "'bob/trip'" in hidden["message"]


async def test_a_users_tool_asks_consent_through_ctx_broker_and_the_approvals_cli_answers(
    tmp_path: Path,
) -> None:
    db = tmp_path / "m.db"
    await _seed(db)
    with anyio.fail_after(STARTUP + 60):
        async with serving(db, "--tools", AUTHOR_TOOLS, "--no-memory") as client:
            tools = sorted(t.name for t in (await client.list_tools()).tools)
            asked = _ok(await client.call_tool("stamp_note", {"label": "notes"}))
            pending = json.loads(await _approvals(db, "list", "--json"))
            early = _error(
                await client.call_tool("stamp_note", {"label": "notes", "ticket": asked["ticket"]})
            )
            await _approvals(db, "approve", "--", asked["ticket"])
            stamped = _ok(
                await client.call_tool("stamp_note", {"label": "notes", "ticket": asked["ticket"]})
            )
            again = _error(
                await client.call_tool("stamp_note", {"label": "notes", "ticket": asked["ticket"]})
            )
            capabilities = client.server_capabilities

    assert tools == ["read_note", "search", "stamp_note"]  # --no-memory: no built-in
    assert capabilities is not None
    assert capabilities.resources is None  # no memory resources either
    assert asked["status"] == "pending"
    assert [(p["id"], p["agent"], p["origin"]) for p in pending] == [
        (asked["ticket"], AGENT, "mcp")
    ]
    assert "stamp block 'notes'" in pending[0]["reason"]
    assert early["kind"] == "denied"  # not approved yet: nothing written
    assert early["details"]["reason"] == "pending"
    assert stamped == {"status": "approved", "ticket": None, "value": "Tea at five.\nstamped"}
    assert again["kind"] == "denied"  # a one-time approval is spent
    async with await SQLiteStore.open(db, embedder=None) as store:
        notes = await store.get_block(AGENT, "notes")
    assert notes.value == "Tea at five.\nstamped"


async def test_no_memory_with_lazy_serves_the_meta_tools_over_the_users_tools_only(
    tmp_path: Path,
) -> None:
    db = tmp_path / "m.db"
    await _seed(db)
    with anyio.fail_after(STARTUP + 60):
        async with serving(db, "--tools", AUTHOR_TOOLS, "--no-memory", "--lazy") as client:
            tools = sorted(t.name for t in (await client.list_tools()).tools)
            found = _ok(await client.call_tool("discover_tools", {"query": "note", "limit": 10}))
            missing = await client.call_tool("get_tool_schema", {"tool_name": "context"})
            note = _ok(
                await client.call_tool(
                    "invoke_tool", {"tool_name": "read_note", "parameters": {"label": "notes"}}
                )
            )

    assert tools == ["discover_tools", "get_tool_schema", "invoke_tool"]
    names = {row[found["columns"].index("name")] for row in found["tools"]}
    assert {"read_note", "stamp_note"} <= names
    assert not names & {"context", "recall", "send_message"}
    assert missing.is_error is True
    assert json.dumps(note).count("Tea at five.") == 1


async def test_context_load_under_a_new_label_keeps_the_archival_entry_over_mcp(
    tmp_path: Path,
) -> None:
    db = tmp_path / "m.db"
    await _seed(db)
    load = {"operation": "load", "label": "trip", "target_label": "trip_now"}
    with anyio.fail_after(STARTUP + 60):
        async with serving(db) as client:
            schema = next(t for t in (await client.list_tools()).tools if t.name == "context")
            loaded = _ok(await client.call_tool("context", load))
            again = _error(await client.call_tool("context", load))

    assert "target_label" in schema.input_schema["properties"]
    assert loaded["block"]["kind"] == "working"
    assert again["kind"] == "retry"
    async with await SQLiteStore.open(db, embedder=None) as store:
        trip = await store.get_block(AGENT, "trip")
        copy = await store.get_block(AGENT, "trip_now")
    assert (trip.kind, trip.value) == (BlockKind.ARCHIVAL, "Kyoto in April")
    assert (copy.kind, copy.value) == (BlockKind.WORKING, "Kyoto in April")


# -- usage errors: one line, exit code 2 -------------------------------------------------

runner = CliRunner()


def _usage_error(*args: str) -> str:
    result = runner.invoke(app, list(args), catch_exceptions=False)
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("Error: ")
    return lines[0]


@pytest.mark.parametrize("command", ["serve", "run"])
@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--replace", "nope", "--tools", AUTHOR_TOOLS], ["--replace", "'nope'", "built-in"]),
        (["--replace", "serch", "--tools", AUTHOR_TOOLS], ["Did you mean 'search'"]),
        (["--replace", "search"], ["--replace", "--tools"]),
        (["--replace", "search", "--tools", AUTHOR_TOOLS, "--no-memory"], ["--no-memory"]),
        (
            ["--replace", "context", "--tools", AUTHOR_TOOLS],
            ["--replace", "no --tools registry defines 'context'"],
        ),
    ],
)
def test_a_bad_replace_is_one_line_and_exit_code_2(
    tmp_path: Path, command: str, args: list[str], words: list[str]
) -> None:
    before = ["run", "hi", "--model", "openai:gpt-4o-mini"] if command == "run" else ["serve"]
    line = _usage_error(*before, "--db", str(tmp_path / "m.db"), *args)
    for word in words:
        assert word in line


def test_without_replace_a_users_search_clashes_with_the_builtin(tmp_path: Path) -> None:
    line = _usage_error("serve", "--db", str(tmp_path / "m.db"), "--tools", AUTHOR_TOOLS)
    assert "'search'" in line
    assert "defined by both" in line
