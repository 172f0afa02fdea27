"""``satchel serve --channels FILE`` end to end (issue 18): a real server process, the
official SDK client, and a loopback server answering as Discord's REST API does.

* a ``send_message`` to the configured Discord channel arrives in Discord's shape;
* targets that are not configured are not offered in ``tools/list``;
* a memory write needing consent that came from that channel (``_meta``
  ``satchel/origin``) is announced there, and answered with ``satchel approvals
  approve`` in another process.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters

from fake_services import DISCORD_TOKEN, FakeServices, running_services
from satchel.memory import Permission, SQLiteStore

from .conftest import STARTUP, satchel_stdio

pytestmark = pytest.mark.anyio

AGENT = "alice"
CHANNEL = "111222333444555666"
POSTS = f"/api/v10/channels/{CHANNEL}/messages"


@pytest.fixture
def services() -> Iterator[FakeServices]:
    with running_services() as state:
        yield state


def channels_file(tmp_path: Path, services: FakeServices) -> Path:
    path = tmp_path / "channels.toml"
    path.write_text(
        f"""
[discord]
base_url = "{services.base_url}/api/v10"
channels = {{ general = "{CHANNEL}" }}

[discord.delivery]
attempts = 2
""",
        encoding="utf-8",
    )
    return path


def serving(db: Path, *args: str, token: str | None = DISCORD_TOKEN) -> StdioServerParameters:
    params = satchel_stdio("--db", str(db), "--agent", AGENT, "--template", "none", *args)
    env = dict(os.environ)
    env.pop("SATCHEL_CHANNELS", None)
    if token is not None:
        env["SATCHEL_DISCORD_TOKEN"] = token
    return params.model_copy(update={"env": env})


def offered(tools: types.ListToolsResult) -> dict[str, Any]:
    (send,) = [t for t in tools.tools if t.name == "send_message"]
    options = send.input_schema["properties"]["target"]["oneOf"]
    return {o["properties"]["type"]["const"]: o for o in options}


async def approvals(db: Path, *args: str) -> str:
    """``satchel approvals ARGS --db DB`` in another process (the human); its stdout."""
    done = await anyio.run_process(
        [sys.executable, "-m", "satchel", "approvals", *args, "--db", str(db)],
        check=True,
        env={**os.environ, "COLUMNS": "250"},
    )
    return done.stdout.decode()


async def test_send_message_to_a_configured_discord_channel_arrives_in_discords_shape(
    tmp_path: Path, services: FakeServices
) -> None:
    db = tmp_path / "m.db"
    params = serving(db, "--channels", str(channels_file(tmp_path, services)))
    with anyio.fail_after(STARTUP + 60):
        async with Client(params, mode="legacy") as client:
            targets = offered(await client.list_tools())
            sent = await client.call_tool(
                "send_message",
                {"target": {"type": "discord", "channel_id": CHANNEL}, "content": "Hi @everyone"},
            )
            unlisted = await client.call_tool(
                "send_message",
                {"target": {"type": "discord", "channel_id": "999"}, "content": "x"},
            )

    assert list(targets) == ["user", "agent", "group", "discord"]
    channel_id = targets["discord"]["properties"]["channel_id"]
    assert channel_id.get("enum", [channel_id.get("const")]) == [CHANNEL]
    assert sent.is_error is not True, sent.content
    assert sent.structured_content is not None
    assert sent.structured_content["receipts"] == [
        {
            "to": f"discord:{CHANNEL}",
            "id": "1100000000000000001",
            "channel": "discord",
            "attempts": 1,
        }
    ]
    assert unlisted.is_error is True
    (post,) = services.requests  # the unlisted channel never left the server
    assert (post.method, post.path) == ("POST", POSTS)
    assert post.headers["authorization"] == f"Bot {DISCORD_TOKEN}"
    assert post.headers["content-type"] == "application/json"
    assert post.body == {"content": "Hi @everyone", "allowed_mentions": {"parse": []}}
    assert DISCORD_TOKEN not in json.dumps(sent.model_dump(mode="json"))


async def test_a_fresh_serve_offers_only_the_user_agents_and_groups(tmp_path: Path) -> None:
    params = serving(tmp_path / "m.db", token=None)
    with anyio.fail_after(STARTUP + 30):
        async with Client(params, mode="legacy") as client:
            targets = offered(await client.list_tools())

    assert list(targets) == ["user", "agent", "group"]


async def test_consent_asked_from_discord_is_announced_there_and_answered_from_the_cli(
    tmp_path: Path, services: FakeServices
) -> None:
    db = tmp_path / "m.db"
    store = await SQLiteStore.open(db)
    try:
        await store.create_block(AGENT, "rules", "Be kind.", permission=Permission.HUMAN)
    finally:
        await store.close()
    params = serving(
        db, "--channels", str(channels_file(tmp_path, services)), "--consent-wait", "0"
    )
    append = {"operation": "append", "label": "rules", "content": "Be brief."}
    from_discord = {"satchel/origin": f"discord:{CHANNEL}"}
    with anyio.fail_after(STARTUP + 90):
        async with Client(params, mode="legacy") as client:
            refused = await client.call_tool("context", append, meta=from_discord)
            (announced,) = await anyio.to_thread.run_sync(services.wait_for, 1, POSTS, 30.0)
            listed = json.loads(await approvals(db, "list", "--json"))
            table = await approvals(db, "list")
            text = announced.body["content"]
            approval_id = re.search(r"\bap_[A-Za-z0-9_-]{24}\b", text)
            assert approval_id is not None, text
            await approvals(db, "approve", approval_id.group(0))
            ran = await client.call_tool("context", append, meta=from_discord)

    assert refused.is_error is True
    assert announced.headers["authorization"] == f"Bot {DISCORD_TOKEN}"
    assert "alice" in text
    assert "'rules'" in text
    assert f"satchel approvals approve {approval_id.group(0)} --db {db}" in text
    assert "no answer means no" in text
    assert len(text) <= 2000
    assert [(r["id"], r["origin"]) for r in listed] == [
        (approval_id.group(0), f"discord:{CHANNEL}")
    ]
    (row,) = [line for line in table.splitlines() if approval_id.group(0) in line]
    assert f"discord:{CHANNEL}" in row  # the "From" column
    assert ran.is_error is not True, ran.content
    store = await SQLiteStore.open(db)
    try:
        rules = await store.get_block(AGENT, "rules")
    finally:
        await store.close()
    assert rules.value == "Be kind.\nBe brief."
    assert len(services.requests) == 1  # one announcement, nothing else posted


async def test_a_bad_channels_file_is_one_clear_line_and_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "channels.toml"
    bad.write_text('[discord]\nchannels = { general = "not-a-number" }\n', encoding="utf-8")
    env = {**os.environ, "SATCHEL_DISCORD_TOKEN": "tok-SECRET-123"}
    done = await anyio.run_process(
        [
            sys.executable,
            "-m",
            "satchel",
            "serve",
            "--db",
            str(tmp_path / "m.db"),
            "--channels",
            str(bad),
        ],
        check=False,
        env=env,
    )
    err = done.stderr.decode()

    assert done.returncode == 2
    assert "Traceback" not in err
    assert str(bad) in " ".join(err.split())
    assert "discord.channels.general (line 2)" in " ".join(err.split())
    assert "tok-SECRET-123" not in err
