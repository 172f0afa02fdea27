"""Two ``satchel serve`` processes on one PostgreSQL database: each sees, appends to and
searches the other's writes, and every concurrent append lands."""

from __future__ import annotations

from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client

from postgres_server import PostgresServer

from .conftest import STARTUP, satchel_stdio

pytestmark = [pytest.mark.anyio, pytest.mark.postgres]


async def _approve(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
    # The human behind both clients approves each destructive call they are asked about.
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
