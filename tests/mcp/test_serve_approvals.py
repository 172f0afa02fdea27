"""Approvals bind to the agent that asked (issue 11, security 1): two real ``satchel
serve`` processes on one database, agents ``bob`` and ``default``; neither bob's
approval id nor bob's ``--for`` grant lets ``default`` run the same call."""

from __future__ import annotations

import sys
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client

from .conftest import FILE_TOOLS, STARTUP, satchel_stdio

pytestmark = pytest.mark.anyio


@asynccontextmanager
async def agent(db: Path, name: str) -> AsyncGenerator[Client]:
    params = satchel_stdio("--db", str(db), "--agent", name, "--tools", FILE_TOOLS)
    async with Client(params, mode="legacy") as client:
        yield client


def error(result: types.CallToolResult) -> dict[str, Any]:
    assert result.is_error is True, result.content
    assert result.meta is not None
    return result.meta["satchel/error"]


async def approve(db: Path, approval_id: str, *args: str) -> None:
    """``satchel approvals approve ARGS -- ID`` in another process (the human)."""
    command = [sys.executable, "-m", "satchel", "approvals", "approve", "--db", str(db)]
    await anyio.run_process([*command, *args, "--", approval_id], check=True)


async def test_bobs_approval_and_bobs_grant_are_refused_for_another_agent(
    tmp_path: Path,
) -> None:
    db = tmp_path / "shared.db"
    once, granted = tmp_path / "once.txt", tmp_path / "granted.txt"
    for path in (once, granted):
        path.write_text("x")
    with anyio.fail_after(STARTUP * 2 + 60):
        async with agent(db, "bob") as bob, agent(db, "default") as default:
            # an approve-once approval, given to bob
            call = {"path": str(once)}
            approval_id = error(await bob.call_tool("delete_file", call))["details"]["approval_id"]
            await approve(db, approval_id)
            stolen = error(
                await default.call_tool("delete_file", {**call, "approval_id": approval_id})
            )
            once_survived = once.exists()
            own = await bob.call_tool("delete_file", {**call, "approval_id": approval_id})

            # a ten-minute grant, given to bob
            call = {"path": str(granted)}
            grant_id = error(await bob.call_tool("delete_file", call))["details"]["approval_id"]
            await approve(db, grant_id, "--for", "10m")
            asked = error(await default.call_tool("delete_file", call))
            granted_survived = granted.exists()
            covered = await bob.call_tool("delete_file", call)

    assert stolen["kind"] == "denied"
    assert "another agent" in stolen["message"]
    assert once_survived
    assert own.is_error is not True  # the approval was bob's, and still good for bob
    assert not once.exists()
    assert asked["kind"] == "needs_approval"  # default has to ask a human itself
    assert asked["details"]["approval_id"] != grant_id
    assert granted_survived
    assert covered.is_error is not True  # bob's grant covers bob
    assert not granted.exists()
