"""Learning from use across processes: ``satchel serve --lazy`` learns that a tool
served a ``discover_tools`` query, keeps it in ``--db``, and a new server process on the
same database ranks that tool first for the query."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import psycopg
import pytest
from mcp import Client

from postgres_server import PostgresServer

from .conftest import HERE, STARTUP, satchel_stdio

pytestmark = pytest.mark.anyio

TOOLS = f"{HERE / 'servers' / 'example_tools.py'}:registry"
QUERY = "quokka parade itinerary"


def _ok(result: types.CallToolResult) -> dict[str, Any]:
    assert result.is_error is not True, result.content
    assert result.structured_content is not None
    return result.structured_content


async def _first(client: Client, query: str) -> list[str]:
    found = _ok(await client.call_tool("discover_tools", {"query": query, "limit": 5}))
    return [row[0] for row in found["tools"]]


async def test_a_learned_query_ranks_its_tool_first_in_a_new_server_process(
    tmp_path: Path,
) -> None:
    db = tmp_path / "satchel.db"
    params = satchel_stdio("--db", str(db), "--lazy", "--tools", TOOLS, "--agent", "alice")
    with anyio.fail_after(STARTUP * 2):
        async with Client(params) as client:
            before = await _first(client, QUERY)
            done = await client.call_tool(
                "invoke_tool", {"tool_name": "recite", "parameters": {"text": "hi"}}
            )
            _ok(done)
        async with Client(params) as client:
            after = await _first(client, QUERY)
            schema = _ok(await client.call_tool("get_tool_schema", {"tool_name": "forecast"}))
    assert before[0] != "recite"
    assert after[0] == "recite"
    assert schema["examples"] == ["will I need an umbrella tomorrow"]
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT query, tool FROM meta_learned").fetchall()
    assert rows == [(QUERY, "recite")]


async def test_no_learn_records_nothing(tmp_path: Path) -> None:
    db = tmp_path / "satchel.db"
    params = satchel_stdio("--db", str(db), "--lazy", "--no-learn", "--tools", TOOLS)
    with anyio.fail_after(STARTUP):
        async with Client(params) as client:
            await _first(client, QUERY)
            _ok(
                await client.call_tool(
                    "invoke_tool", {"tool_name": "jot", "parameters": {"text": "x"}}
                )
            )
    with sqlite3.connect(db) as conn:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
        rows = (
            conn.execute("SELECT count(*) FROM meta_learned").fetchone()
            if "meta_learned" in tables
            else (0,)
        )
    assert rows == (0,)


async def test_served_tools_carry_their_examples_to_a_mount(tmp_path: Path) -> None:
    from satchel import ToolRegistry
    from satchel.mcp import mount_mcp

    params = satchel_stdio("--db", str(tmp_path / "satchel.db"), "--tools", TOOLS)
    registry = ToolRegistry()
    with anyio.fail_after(STARTUP):
        async with mount_mcp(
            registry, prefix="inner", command=params.command, args=params.args, env=params.env
        ):
            spec = registry.get("inner_forecast")
            assert spec is not None
            assert spec.spec.examples == ("will I need an umbrella tomorrow",)
            assert registry.get("inner_jot").spec.examples == ()  # type: ignore[union-attr]


@pytest.mark.postgres
async def test_servers_on_postgresql_learn_in_the_database(
    postgres_server: PostgresServer,
) -> None:
    url = postgres_server.create_database()
    params = satchel_stdio("--db", url, "--lazy", "--tools", TOOLS, "--agent", "alice")
    with anyio.fail_after(STARTUP * 2 + 60):
        async with Client(params) as client:
            before = await _first(client, QUERY)
            _ok(
                await client.call_tool(
                    "invoke_tool", {"tool_name": "recite", "parameters": {"text": "hi"}}
                )
            )
        async with Client(params) as client:
            after = await _first(client, QUERY)
    assert before[0] != "recite"
    assert after[0] == "recite"
    with psycopg.connect(url) as conn:
        rows = conn.execute(b"SELECT query, tool FROM satchel_meta_learned").fetchall()
    assert rows == [(QUERY, "recite")]
