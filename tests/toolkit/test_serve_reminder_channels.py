"""``satchel serve --toolkit productivity --channels FILE`` with the local inbox and a
``[notify]`` URL configured: a real server process delivers each due reminder to the
inbox's ``GET /notifications`` and, through apprise, to a loopback JSON webhook; one
missed while nothing ran arrives marked late."""

from __future__ import annotations

import json
import os
import sys
import threading
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import anyio
import httpx
import pytest
from mcp import Client, StdioServerParameters

from satchel.memory import open_store
from satchel.toolkit import MemoryAgenda

from .mail.conftest import free_port

pytestmark = pytest.mark.anyio

STARTUP = 90  # seconds for a server process to start on two busy cores
TOKEN = "serve-inbox-token-0123456789"


class _Hook:
    """A JSON webhook on loopback, keeping the ``message`` of each post."""

    def __init__(self) -> None:
        self.messages: list[str] = []
        self.two = threading.Event()
        hook = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", "0"))
                hook.messages.append(json.loads(self.rfile.read(length))["message"])
                if len(hook.messages) >= 2:
                    hook.two.set()
                self.send_response(200)
                self.send_header("content-length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


async def _notifications(url: str, want: int) -> list[dict[str, Any]]:
    """Long-poll the inbox until ``want`` notifications came (the server may not listen
    yet: a refused connection is tried again)."""
    seen: list[dict[str, Any]] = []
    async with httpx.AsyncClient(base_url=url, timeout=60) as http:
        while len(seen) < want:
            after = seen[-1]["seq"] if seen else 0
            try:
                answer = await http.get(
                    f"/notifications?after={after}&wait=30",
                    headers={"Authorization": f"Bearer {TOKEN}"},
                )
            except httpx.ConnectError:
                await anyio.sleep(0.2)
                continue
            assert answer.status_code == 200, answer.text
            seen += answer.json()["notifications"]
    return seen


async def test_serve_delivers_due_reminders_to_the_inbox_and_marks_a_missed_one_late(
    tmp_path: Path,
) -> None:
    db = tmp_path / "memory.db"
    store = await open_store(db)
    try:
        await store.ensure_agent("default")
        missed = datetime.now(UTC) - timedelta(minutes=10)
        await MemoryAgenda(store).schedule(
            "default", "Call the dentist", missed, ZoneInfo("Europe/Paris")
        )
    finally:
        await store.close()
    port = free_port()
    channels = tmp_path / "channels.toml"
    hook = _Hook()
    channels.write_text(
        f"[inbox]\nport = {port}\n\n[notify]\nurls = ['json://127.0.0.1:{hook.port}/hook']\n"
    )
    env = {
        **os.environ,
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "SATCHEL_DATA_DIR": str(tmp_path / "toolkit"),
        "SATCHEL_INBOX_TOKEN": TOKEN,
    }
    for name in ("SATCHEL_IMAP_HOST", "SATCHEL_TIMEZONE", "SATCHEL_TOOLKIT_CONFIG"):
        env.pop(name, None)
    args = ["-m", "satchel", "serve", "--db", str(db), "--channels", str(channels)]
    args += ["--toolkit", "productivity", "--timezone", "Europe/Paris"]
    params = StdioServerParameters(command=sys.executable, args=args, env=env)
    url = f"http://127.0.0.1:{port}"
    with anyio.fail_after(STARTUP + 120):
        async with Client(params, mode="legacy") as client:
            [late] = await _notifications(url, 1)
            made = await client.call_tool(
                "schedule_reminder",
                {"operation": "schedule", "message": "Water the plants", "when": "in 3 seconds"},
            )
            assert made.is_error is not True, made.content
            [*_, due] = await _notifications(url, 2)
            await anyio.to_thread.run_sync(hook.two.wait, 60)  # apprise sends in a thread
    hook.server.shutdown()
    assert late["text"].startswith("Late reminder (was due ")
    assert late["text"].endswith("): Call the dentist")
    assert due["text"] == "Reminder: Water the plants"
    assert due["chat"] is None
    assert hook.messages == [late["text"], due["text"]]
