"""``satchel serve --toolkit productivity`` end to end for mail and reminders: a real
server process, the MCP client SDK, a real SMTP server (aiosmtpd) and the approval CLI
in another process."""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import AsyncGenerator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from aiosmtpd.controller import Controller
from mcp import Client, StdioServerParameters

from .mail.conftest import Outbox, free_port

pytestmark = pytest.mark.anyio

STARTUP = 90  # seconds for a server process to start on two busy cores
CONTEXT = "memory://default/context"


@pytest.fixture
def outbox() -> Iterator[tuple[Outbox, int]]:
    box = Outbox()
    controller = Controller(box, hostname="127.0.0.1", port=free_port())
    controller.start()
    try:
        yield box, controller.port
    finally:
        controller.stop()


class _Updates:
    """The URIs of ``notifications/resources/updated`` the client received."""

    def __init__(self) -> None:
        self.uris: list[str] = []
        self._changed = anyio.Event()

    async def handler(self, message: object) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            self.uris.append(message.params.uri)
            self._changed.set()

    async def wait_for(self, uri: str) -> None:
        while uri not in self.uris:
            await self._changed.wait()
            self._changed = anyio.Event()


@asynccontextmanager
async def served(
    tmp_path: Path, smtp_port: int, updates: _Updates | None = None, *extra: str
) -> AsyncGenerator[Client]:
    env = {
        **os.environ,
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "SATCHEL_DATA_DIR": str(tmp_path / "toolkit"),
        "SATCHEL_SMTP_HOST": "127.0.0.1",
        "SATCHEL_SMTP_PORT": str(smtp_port),
        "SATCHEL_SMTP_STARTTLS": "false",
        "SATCHEL_MAIL_FROM": "me@example.org",
    }
    for name in ("SATCHEL_IMAP_HOST", "SATCHEL_TIMEZONE", "SATCHEL_TOOLKIT_CONFIG"):
        env.pop(name, None)
    args = ["-m", "satchel", "serve", "--db", str(tmp_path / "memory.db")]
    args += ["--toolkit", "productivity", "--timezone", "Europe/Paris", *extra]
    params = StdioServerParameters(command=sys.executable, args=args, env=env)
    handler = updates.handler if updates is not None else None
    async with Client(params, mode="legacy", message_handler=handler) as client:
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
    command = [sys.executable, "-m", "satchel", "approvals", "approve", "--db", str(db)]
    await anyio.run_process([*command, "--", approval_id], check=True)


async def test_a_send_waits_for_approval_and_nothing_is_sent_until_approved(
    tmp_path: Path, outbox: tuple[Outbox, int]
) -> None:
    box, port = outbox
    send = {
        "to": "ada@example.org",
        "subject": "Minutes",
        "body": "Attached below.",
        "cc": "bob@example.org",
    }
    with anyio.fail_after(STARTUP + 60):
        async with served(tmp_path, port) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            held = error(await client.call_tool("send_email", send))
            before = list(box.messages)
            sent_folder = output(await client.call_tool("read_emails", {"folder": "Sent"}))
            await approve(tmp_path / "memory.db", held["details"]["approval_id"])
            done = output(
                await client.call_tool(
                    "send_email", {**send, "approval_id": held["details"]["approval_id"]}
                )
            )
            again = error(
                await client.call_tool(
                    "send_email", {**send, "approval_id": held["details"]["approval_id"]}
                )
            )
    assert tools["send_email"].annotations is not None
    assert tools["send_email"].annotations.destructive_hint is True
    assert tools["list_unread_emails"].annotations is not None
    assert tools["list_unread_emails"].annotations.read_only_hint is True
    assert held["kind"] == "needs_approval"
    assert before == []
    assert sent_folder["count"] == 0
    assert done["to"] == ["ada@example.org"]
    [(sender, rcpts, raw)] = box.messages
    assert (sender, sorted(rcpts)) == ("me@example.org", ["ada@example.org", "bob@example.org"])
    assert b"Attached below." in raw
    assert again["kind"] == "denied"  # an approval is spent once
    assert len(box.messages) == 1


async def test_a_reminder_fires_into_the_context_and_notifies_a_subscribed_client(
    tmp_path: Path, outbox: tuple[Outbox, int]
) -> None:
    updates = _Updates()
    with anyio.fail_after(STARTUP + 60):
        async with served(tmp_path, outbox[1], updates) as client:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                await client.subscribe_resource(CONTEXT)  # pyright: ignore[reportDeprecated]
            made = output(
                await client.call_tool(
                    "schedule_reminder",
                    {"operation": "schedule", "message": "Water the plants", "when": "now"},
                )
            )
            await updates.wait_for(CONTEXT)
            context = await client.read_resource(CONTEXT)
            listed = output(await client.call_tool("schedule_reminder", {"operation": "list"}))
    [reminder] = made["reminders"]
    text = " ".join(getattr(c, "text", "") for c in context.contents)
    working = text.split("<working_memory>")[1].split("</working_memory>")[0]
    assert "Water the plants" in working
    assert [(r["reminder_id"], r["status"]) for r in listed["reminders"]] == [
        (reminder["reminder_id"], "due")
    ]


async def test_behind_the_meta_tools_a_send_is_pending_until_approved(
    tmp_path: Path, outbox: tuple[Outbox, int]
) -> None:
    box, port = outbox
    send = {"to": "ada@example.org", "subject": "Lazy", "body": "Sent through invoke_tool."}
    call = {"tool_name": "send_email", "parameters": send}
    with anyio.fail_after(STARTUP + 60):
        async with served(tmp_path, port, None, "--lazy") as client:
            names = {t.name for t in (await client.list_tools()).tools}
            found = output(
                await client.call_tool("discover_tools", {"query": "email Sam that I am late"})
            )
            held = error(await client.call_tool("invoke_tool", call))
            before = list(box.messages)
            approval_id = held["details"]["approval_id"]
            await approve(tmp_path / "memory.db", approval_id)
            done = output(
                await client.call_tool("invoke_tool", {**call, "approval_id": approval_id})
            )
    assert "send_email" not in names
    assert "send_email" in str(found)
    assert held["kind"] == "needs_approval"
    assert before == []
    assert "Lazy" in str(done)
    [(_, rcpts, raw)] = box.messages
    assert rcpts == ["ada@example.org"]
    assert b"Sent through invoke_tool." in raw
