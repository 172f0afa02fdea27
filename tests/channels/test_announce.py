"""Consent where the human is: an approval request from a configured channel is
announced on that channel (real broker on a real SQLite file, real HTTP to a loopback
server answering as Discord and a webhook do); from anywhere else, nothing is sent."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import anyio
import anyio.to_thread
import pytest

from fake_services import DISCORD_TOKEN, FakeServices, running_services
from satchel.builtin import Delivery, DiscordEndpoint, MessageRouter, WebhookEndpoint
from satchel.channels import ConsentAnnouncer
from satchel.consent import ConsentScope, Decision, PermissionBroker, SQLiteApprovalStore
from satchel.memory import SQLiteStore

pytestmark = pytest.mark.anyio

POSTS = "/api/v10/channels/111/messages"


@pytest.fixture
def services() -> Iterator[FakeServices]:
    with running_services() as state:
        yield state


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[SQLiteStore]:
    opened = await SQLiteStore.open(tmp_path / "m.db", embedder=None)
    yield opened
    await opened.close()


def router(store: SQLiteStore, services: FakeServices, token: str = DISCORD_TOKEN) -> MessageRouter:
    once = Delivery(attempts=1)
    return MessageRouter(
        store,
        endpoints={
            "discord": DiscordEndpoint(
                token,
                base_url=f"{services.base_url}/api/v10",
                channels={"general": "111"},
                delivery=once,
            ),
            "webhook": WebhookEndpoint(
                allowed_urls=[f"{services.base_url}/hooks/"], delivery=Delivery(attempts=1)
            ),
        },
    )


def scope() -> ConsentScope:
    return ConsentScope.memory_edit("rules", owner="ada", agent="ada", operation="append")


async def test_a_request_from_a_discord_channel_is_announced_there(
    tmp_path: Path, store: SQLiteStore, services: FakeServices
) -> None:
    announcer = ConsentAnnouncer(
        router(store, services), approve_command="satchel approvals approve {id} --db m.db"
    )
    async with PermissionBroker(SQLiteApprovalStore(tmp_path / "m.db")) as broker:
        async with announcer.announcing(broker):
            request = await broker.request(
                scope(), "ada wants to append block 'rules'", "discord:111", wait=False
            )
            (post,) = await anyio.to_thread.run_sync(services.wait_for, 1, POSTS, 10.0)
        still = await broker.get(request.id)

    text = post.body["content"]
    assert post.headers["authorization"] == f"Bot {DISCORD_TOKEN}"
    assert post.body["allowed_mentions"] == {"parse": []}
    assert "agent 'ada' wants to append to memory block 'rules' of ada" in text
    assert request.id in text
    assert f"Approve: satchel approvals approve {request.id} --db m.db" in text
    assert f"Deny: satchel approvals deny {request.id}" in text
    assert still is not None
    assert still.status == "pending"  # announcing decides nothing


@pytest.mark.parametrize(
    "origin", ["mcp", "cli", "discord:999", "bluesky:alice.bsky.social", "discord:"]
)
async def test_a_request_from_elsewhere_is_not_announced(
    store: SQLiteStore, services: FakeServices, origin: str
) -> None:
    announcer = ConsentAnnouncer(router(store, services))
    async with PermissionBroker() as broker:
        request = await broker.request(scope(), "append", origin, wait=False)
        receipt = await announcer.announce(request)

    assert announcer.target_for(origin) is None
    assert receipt is None
    assert services.requests == []


async def test_a_request_from_a_webhook_is_announced_to_it(
    store: SQLiteStore, services: FakeServices
) -> None:
    url = f"{services.base_url}/hooks/ok"
    announcer = ConsentAnnouncer(router(store, services))
    async with PermissionBroker() as broker:
        request = await broker.request(scope(), "append", f"webhook:{url}", wait=False)
        receipt = await announcer.announce(request)

    assert receipt is not None
    assert receipt.channel == "webhook"
    (post,) = services.requests
    assert post.body["metadata"] == {"approval_id": request.id}
    assert request.id in post.body["content"]


async def test_a_failed_announcement_is_logged_and_the_request_stands(
    store: SQLiteStore, services: FakeServices, caplog: pytest.LogCaptureFixture
) -> None:
    announcer = ConsentAnnouncer(router(store, services, token="wrong-token"))
    async with PermissionBroker() as broker:
        request = await broker.request(scope(), "append", "discord:111", wait=False)
        with caplog.at_level(logging.WARNING, logger="satchel.channels"):
            receipt = await announcer.announce(request)
        still = await broker.get(request.id)

    assert receipt is None
    assert "could not announce" in caplog.text
    assert "401" in caplog.text
    assert "wrong-token" not in caplog.text
    assert still is not None
    assert still.status == "pending"


async def test_an_announced_request_nobody_answers_still_expires_as_a_refusal(
    store: SQLiteStore, services: FakeServices
) -> None:
    now = [datetime(2026, 11, 25, 12, 0, tzinfo=UTC)]
    announcer = ConsentAnnouncer(router(store, services))
    async with PermissionBroker(default_timeout=60, clock=lambda: now[0]) as broker:
        async with announcer.announcing(broker):
            request = await broker.request(scope(), "append", "discord:111", wait=False)
            (post,) = await anyio.to_thread.run_sync(services.wait_for, 1, POSTS, 10.0)
        now[0] += timedelta(seconds=61)  # nobody answered in time
        answer = await broker.wait(request.id)

    assert "expires 2026-11-25 12:01 UTC; no answer means no" in post.body["content"]
    assert answer.status == "expired"
    assert answer.decision is not None
    assert answer.decision.approved is False


async def test_a_request_already_decided_or_expired_is_not_announced(
    store: SQLiteStore, services: FakeServices
) -> None:
    announcer = ConsentAnnouncer(router(store, services))
    async with PermissionBroker() as broker:
        decided = await broker.request(scope(), "append", "discord:111", wait=False)
        await broker.resolve(decided.id, Decision.approve_once(), by="mcp elicitation")
        skipped = await announcer.announce(decided, broker)
        other = scope().model_copy(update={"label": "persona"})
        expired = await broker.request(other, "append", "discord:111", wait=False, timeout=0)
        lapsed = await announcer.announce(expired, broker)
        fresh = scope().model_copy(update={"label": "notes"})
        pending = await broker.request(fresh, "append", "discord:111", wait=False)
        announced = await announcer.announce(pending, broker)

    assert skipped is None
    assert lapsed is None
    assert announced is not None
    (post,) = services.requests
    assert pending.id in post.body["content"]
