"""From one channels file to messages that arrive: the library path
(``channel_router`` + ``memory_toolset``), against a loopback server answering as
Discord, a Bluesky PDS and a webhook do."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from fake_services import (
    BSKY_IDENTIFIER,
    BSKY_PASSWORD,
    DISCORD_TOKEN,
    FakeServices,
    running_services,
)
from satchel.builtin import memory_toolset
from satchel.channels import channel_router, parse_channels
from satchel.memory import SQLiteStore
from satchel.tools import ToolContext

pytestmark = pytest.mark.anyio


@pytest.fixture
def services() -> Iterator[FakeServices]:
    with running_services() as state:
        yield state


async def test_one_file_configures_every_channel_and_each_message_arrives_in_its_shape(
    tmp_path: Path, services: FakeServices
) -> None:
    config = parse_channels(
        f"""
[groups]
team = ["ada", "bob"]

[discord]
base_url = "{services.base_url}/api/v10"
channels = {{ general = "777" }}

[bluesky]
service = "{services.base_url}"

[webhook]
allowed_urls = ["{services.base_url}/hooks/"]
headers = {{ Authorization = "${{HOOK}}" }}
""",
        environ={
            "SATCHEL_DISCORD_TOKEN": DISCORD_TOKEN,
            "SATCHEL_BLUESKY_HANDLE": BSKY_IDENTIFIER,
            "SATCHEL_BLUESKY_APP_PASSWORD": BSKY_PASSWORD,
            "HOOK": "Bearer hook-secret",
        },
    )
    store = await SQLiteStore.open(tmp_path / "m.db", embedder=None)
    try:
        tools = memory_toolset(store, router=channel_router(config, store))
        ctx = ToolContext(agent="ada")
        sends = [
            {"type": "discord", "channel_id": "777"},
            {"type": "bluesky", "handle": "bob.example.com"},
            {"type": "webhook", "url": f"{services.base_url}/hooks/private"},
            {"type": "group", "name": "team"},
        ]
        results = [
            await tools.call("send_message", {"target": target, "content": "Hi"}, ctx)
            for target in sends
        ]
        landed = await store.list_messages("bob")
    finally:
        await store.close()

    assert all(r.ok for r in results), [r.to_text() for r in results]
    channels = [r.structured()["receipts"][0]["channel"] for r in results]  # type: ignore[index]
    assert channels == ["discord", "bluesky", "webhook", "agent"]
    discord = next(r for r in services.requests if r.path.startswith("/api/v10/"))
    assert discord.path == "/api/v10/channels/777/messages"
    assert discord.headers["authorization"] == f"Bot {DISCORD_TOKEN}"
    assert [p["text"] for p in services.posts] == ["@bob.example.com Hi"]
    hook = next(r for r in services.requests if r.path == "/hooks/private")
    assert hook.headers["authorization"] == "Bearer hook-secret"
    assert hook.body["content"] == "Hi"
    assert [m.content for m in landed] == ["Hi"]
