"""``satchel serve --toolkit productivity`` end to end: a real server process spoken to
by the MCP client SDK, in a zone other than the machine's (Pacific/Auckland)."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import anyio
import anyio.to_thread
import httpx
import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters

pytestmark = pytest.mark.anyio

ZONE = "Pacific/Auckland"
STARTUP = 90  # seconds for a server process to start on two busy cores


@asynccontextmanager
async def served(
    tmp_path: Path, *extra: str, env_extra: dict[str, str] | None = None
) -> AsyncGenerator[Client]:
    env = {
        **os.environ,
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "SATCHEL_DATA_DIR": str(tmp_path / "toolkit"),
    }
    for name in ("SATCHEL_CALENDAR_URL", "SATCHEL_TIMEZONE", "SATCHEL_TOOLKIT_CONFIG"):
        env.pop(name, None)
    env.update(env_extra or {})
    args = ["-m", "satchel", "serve", "--db", str(tmp_path / "memory.db")]
    args += ["--toolkit", "productivity", "--timezone", ZONE, *extra]
    params = StdioServerParameters(command=sys.executable, args=args, env=env)
    async with Client(params, mode="legacy") as client:
        yield client


def output(result: types.CallToolResult) -> dict[str, Any]:
    assert result.is_error is not True, result.content
    assert result.structured_content is not None
    return result.structured_content


def error(result: types.CallToolResult) -> dict[str, Any]:
    assert result.is_error is True, result.content
    assert result.meta is not None
    return result.meta["satchel/error"]


async def approve(db: Path, approval_id: str) -> None:
    """``satchel approvals approve -- ID`` in another process (the human)."""
    command = [sys.executable, "-m", "satchel", "approvals", "approve", "--db", str(db)]
    await anyio.run_process([*command, "--", approval_id], check=True)


def hrefs_under(base: str, path: str) -> list[str]:
    """Every item under ``path`` on a WebDAV server, two levels deep."""
    found: list[str] = []
    for href in re.findall(r"<href>([^<]+)</href>", _propfind(base, path)):
        found.append(href)
        if href.rstrip("/") != path.rstrip("/") and href.endswith("/"):
            found += re.findall(r"<href>([^<]+)</href>", _propfind(base, href))
    return found


def _propfind(base: str, path: str) -> str:
    url = base.rstrip("/") + path
    return httpx.request("PROPFIND", url, headers={"Depth": "1"}, timeout=30).text


def local_day(offset: int) -> str:
    return (datetime.now(ZoneInfo(ZONE)) + timedelta(days=offset)).date().isoformat()


async def test_the_toolkit_schedules_deletes_with_approval_and_tracks_tasks(
    tmp_path: Path,
) -> None:
    with anyio.fail_after(STARTUP + 120):
        async with served(tmp_path) as client:
            names = {t.name for t in (await client.list_tools()).tools}

            days = {local_day(1)}
            made = output(
                await client.call_tool(
                    "add_calendar_event", {"title": "Dentist", "start_time": "tomorrow at 3pm"}
                )
            )
            days.add(local_day(1))  # the day may turn between the two readings
            listed = output(
                await client.call_tool(
                    "list_calendar_events", {"time_min": "tomorrow", "time_max": "tomorrow"}
                )
            )

            before = datetime.now(ZoneInfo(ZONE))
            soon = output(
                await client.call_tool(
                    "add_calendar_event", {"title": "Call", "start_time": "in 2 hours"}
                )
            )
            after = datetime.now(ZoneInfo(ZONE))

            held = error(
                await client.call_tool("delete_calendar_event", {"event_id": made["event_id"]})
            )
            still = output(await client.call_tool("search_calendar_events", {"query": "dentist"}))
            await approve(tmp_path / "memory.db", held["details"]["approval_id"])
            deleted = output(
                await client.call_tool(
                    "delete_calendar_event",
                    {"event_id": made["event_id"], "approval_id": held["details"]["approval_id"]},
                )
            )
            gone = output(await client.call_tool("search_calendar_events", {"query": "dentist"}))

            task = output(
                await client.call_tool("create_task", {"title": "File taxes", "due": "friday"})
            )
            output(await client.call_tool("mark_task_complete", {"task_id": task["task_id"]}))
            tasks = output(await client.call_tool("list_tasks", {"show_completed": True}))

    assert {"add_calendar_event", "list_tasks", "context", "recall"} <= names
    assert [(e["title"], e["start"][11:]) for e in listed["events"]] == [
        ("Dentist", f"15:00:00{made['start'][19:]}")
    ]
    assert listed["events"][0]["start"][:10] in days
    assert made["timezone"] == ZONE

    start = datetime.fromisoformat(soon["start"])
    assert soon["all_day"] is False
    lowest = (before + timedelta(hours=2)).replace(second=0, microsecond=0)
    assert lowest <= start <= after + timedelta(hours=2)

    assert held["kind"] == "needs_approval"
    assert [e["event_id"] for e in still["events"]] == [made["event_id"]]
    assert deleted == {"deleted": made["event_id"], "title": "Dentist"}
    assert gone["events"] == []

    assert [(t["task_id"], t["status"]) for t in tasks["tasks"]] == [(task["task_id"], "completed")]


async def test_lazy_serves_the_toolkit_behind_the_meta_tools(tmp_path: Path) -> None:
    with anyio.fail_after(STARTUP + 60):
        async with served(tmp_path, "--lazy") as client:
            names = {t.name for t in (await client.list_tools()).tools}
            found = output(
                await client.call_tool(
                    "discover_tools", {"query": "put a meeting on my calendar", "limit": 3}
                )
            )
            made = output(
                await client.call_tool(
                    "invoke_tool",
                    {
                        "tool_name": "add_calendar_event",
                        "parameters": {"title": "Standup", "start_time": "every weekday at 9"},
                    },
                )
            )
            held = error(
                await client.call_tool(
                    "invoke_tool",
                    {"tool_name": "delete_calendar_event", "parameters": {"event_id": "x"}},
                )
            )

    assert "add_calendar_event" not in names
    assert {"discover_tools", "invoke_tool"} <= names
    assert "add_calendar_event" in str(found)
    assert "FREQ=WEEKLY" in str(made)
    assert held["kind"] == "needs_approval"


async def test_calendar_serves_a_caldav_server_with_credentials_from_the_environment(
    tmp_path: Path, radicale_url: str
) -> None:
    secrets = {"SATCHEL_CALENDAR_USERNAME": "grace", "SATCHEL_CALENDAR_PASSWORD": "s3cret"}
    with anyio.fail_after(STARTUP + 60):
        async with served(tmp_path, "--calendar", radicale_url, env_extra=secrets) as client:
            made = output(
                await client.call_tool(
                    "add_calendar_event", {"title": "Board", "start_time": "tomorrow at 10am"}
                )
            )
            listed = output(
                await client.call_tool(
                    "list_calendar_events", {"time_min": "tomorrow", "time_max": "tomorrow"}
                )
            )
    assert [e["event_id"] for e in listed["events"]] == [made["event_id"]]
    assert listed["events"][0]["start"][11:19] == "10:00:00"
    stored = await anyio.to_thread.run_sync(lambda: hrefs_under(radicale_url, "/grace/"))
    assert any(made["event_id"] in href for href in stored)  # on the server, as grace
    assert not (tmp_path / "toolkit" / "calendar").exists()  # and not in local files


async def test_a_toolkit_flag_without_the_toolkit_is_a_usage_error(tmp_path: Path) -> None:
    command = [sys.executable, "-m", "satchel", "serve", "--calendar", "http://x/"]
    with anyio.fail_after(STARTUP):
        done = await anyio.run_process(command, check=False)
    assert done.returncode == 2
    assert b"--toolkit" in done.stderr


async def test_a_bad_zone_is_a_usage_error_before_serving(tmp_path: Path) -> None:
    command = [sys.executable, "-m", "satchel", "serve", "--toolkit", "productivity"]
    with anyio.fail_after(STARTUP):
        done = await anyio.run_process([*command, "--timezone", "Mars/Base"], check=False)
    assert done.returncode == 2
    assert b"IANA" in done.stderr
