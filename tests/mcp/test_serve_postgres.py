"""Two ``satchel serve`` processes on one PostgreSQL database: each sees, appends to and
searches the other's writes, and every concurrent append lands."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client

from postgres_server import PostgresServer

from .conftest import FILE_TOOLS, STARTUP, satchel_stdio

pytestmark = [pytest.mark.anyio, pytest.mark.postgres]


async def _approve(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
    # The human behind both clients would approve any call they are asked about.
    return types.ElicitResult(action="accept", content={"approve": True})


def _ok(result: types.CallToolResult) -> dict[str, Any]:
    assert result.is_error is False, result.content
    assert result.structured_content is not None
    return result.structured_content


async def test_two_servers_on_one_postgres_database_share_memory(
    postgres_server: PostgresServer,
) -> None:
    url = postgres_server.create_database()
    params = satchel_stdio("--db", url, "--agent", "alice")
    with anyio.fail_after(STARTUP * 2 + 60):
        async with (
            Client(params, mode="legacy", elicitation_callback=_approve) as first,
            Client(params, mode="legacy", elicitation_callback=_approve) as second,
        ):
            _ok(
                await first.call_tool(
                    "context", {"operation": "set", "label": "log", "value": "start"}
                )
            )

            async def append_many(client: Client, who: str) -> None:
                for i in range(15):
                    _ok(
                        await client.call_tool(
                            "context",
                            {"operation": "append", "label": "log", "content": f"{who}-{i}"},
                        )
                    )

            async with anyio.create_task_group() as tg:
                tg.start_soon(append_many, first, "a")
                tg.start_soon(append_many, second, "b")

            _ok(
                await second.call_tool(
                    "recall",
                    {
                        "operation": "insert",
                        "content": "The launch is on a Tuesday.",
                        "label": "plan",
                    },
                )
            )
            found = _ok(
                await first.call_tool(
                    "search", {"domain": "archival_memory", "query": "when is the launch"}
                )
            )
            log = _ok(await second.call_tool("recall", {"operation": "read", "label": "log"}))

    assert any(hit["label"] == "plan" for hit in found["results"])
    lines = log["entry"]["value"].split("\n")
    assert lines[0] == "start"
    assert sorted(lines[1:]) == sorted(f"{who}-{i}" for who in "ab" for i in range(15))
    assert log["entry"]["version"] == 31


async def test_a_destructive_call_on_postgres_is_approved_from_another_terminal(
    postgres_server: PostgresServer, tmp_path: Path
) -> None:
    url = postgres_server.create_database()
    params = satchel_stdio("--db", url, "--agent", "alice", "--tools", FILE_TOOLS)
    doomed = tmp_path / "old-plan.txt"
    doomed.write_text("Old plan.")
    delete = {"path": str(doomed)}
    with anyio.fail_after(STARTUP + 90):
        async with Client(params, mode="legacy") as client:  # no elicitation support
            pending = await client.call_tool("delete_file", delete)
            assert pending.is_error is True
            assert pending.meta is not None
            details = pending.meta["satchel/error"]["details"]
            assert details["status"] == "pending_confirmation"
            approval_id = details["approval_id"]
            assert doomed.exists()

            cli = [sys.executable, "-m", "satchel", "approvals", "approve", approval_id]
            done = await anyio.run_process([*cli, "--db", url], check=False)
            assert done.returncode == 0, done.stderr

            ran = _ok(await client.call_tool("delete_file", {**delete, "approval_id": approval_id}))
            again = await client.call_tool("delete_file", {**delete, "approval_id": approval_id})

    assert ran["result"] == f"deleted {doomed}"
    assert not doomed.exists()
    assert again.is_error is True
