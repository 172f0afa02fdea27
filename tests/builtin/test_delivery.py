"""Delivery to channels: retries on 429 and 5xx that honour ``Retry-After``, a
per-endpoint rate limit, a receipt that says what was delivered, and a Discord
allow-list the schema shows. Real HTTP to the loopback fake services; waits run on a
virtual clock (:class:`VirtualTime`), so no test sleeps."""

from __future__ import annotations

import logging

import pytest

from fake_services import BSKY_IDENTIFIER, BSKY_PASSWORD, DISCORD_TOKEN, FakeServices
from satchel import SatchelUsageError, ToolFailed
from satchel.builtin import (
    BlueskyEndpoint,
    Delivery,
    DiscordEndpoint,
    DiscordTarget,
    OutgoingMessage,
    RateLimit,
)

from .conftest import Kit

pytestmark = pytest.mark.anyio


def to_channel(channel: str, content: str = "Hello") -> dict[str, object]:
    return {"target": {"type": "discord", "channel_id": channel}, "content": content}


def discord(
    services: FakeServices, delivery: Delivery, channels: dict[str, str] | None = None
) -> DiscordEndpoint:
    return DiscordEndpoint(
        DISCORD_TOKEN, base_url=f"{services.base_url}/api/v10", delivery=delivery, channels=channels
    )


async def test_a_429_is_waited_out_for_its_retry_after_and_the_message_arrives(
    kit: Kit, services: FakeServices
) -> None:
    kit.set_endpoint("discord", discord(services, kit.time.delivery()))
    services.fail_next_posts = [429]
    services.retry_after = "0.75"

    out = await kit.ok("send_message", to_channel("42"))

    assert out["receipts"] == [
        {"to": "discord:42", "id": "1100000000000000001", "channel": "discord", "attempts": 2}
    ]
    assert kit.time.waits == [0.75]
    assert [r.path for r in services.requests] == ["/api/v10/channels/42/messages"] * 2


async def test_5xx_answers_back_off_exponentially_until_the_message_arrives(
    kit: Kit, services: FakeServices
) -> None:
    kit.set_endpoint("discord", discord(services, kit.time.delivery(attempts=4, backoff=0.5)))
    services.fail_next_posts = [502, 503, 500]

    out = await kit.ok("send_message", to_channel("42"))

    assert out["receipts"][0]["attempts"] == 4
    assert kit.time.waits == [0.5, 1.0, 2.0]
    assert "Sent to discord:42" in out["message"]


async def test_a_retry_after_longer_than_max_wait_is_not_waited_out(
    kit: Kit, services: FakeServices
) -> None:
    kit.set_endpoint("discord", discord(services, kit.time.delivery(max_wait=1.0)))
    services.fail_next_posts = [429]
    services.retry_after = "30"

    error = await kit.error("send_message", to_channel("42"))

    assert error.kind == "retry"
    assert error.details["retry_after"] == 30.0
    assert error.details["attempts"] == 1
    assert kit.time.waits == []
    assert await kit.store.list_messages("ada") == []  # nothing recorded as sent


async def test_the_rate_limit_spaces_messages_on_one_endpoint(
    kit: Kit, services: FakeServices
) -> None:
    limited = kit.time.delivery(rate=RateLimit(requests=2, per=10.0), max_wait=60)
    kit.set_endpoint("discord", discord(services, limited))

    for n in range(3):
        await kit.ok("send_message", to_channel("42", f"message {n}"))

    assert kit.time.waits == [10.0]  # the third waited for the first to leave the window
    assert [r.body["content"] for r in services.requests] == [f"message {n}" for n in range(3)]


async def test_a_rate_limit_wait_over_max_wait_is_a_retry_and_nothing_is_sent(
    kit: Kit, services: FakeServices
) -> None:
    limited = kit.time.delivery(rate=RateLimit(requests=2, per=10.0), max_wait=5)
    kit.set_endpoint("discord", discord(services, limited))

    await kit.ok("send_message", to_channel("42"))
    await kit.ok("send_message", to_channel("42"))
    error = await kit.error("send_message", to_channel("42"))

    assert error.kind == "retry"
    assert "at most 2 messages every 10 seconds" in error.message
    assert error.details["retry_after"] == 10.0
    assert len(services.requests) == 2


async def test_discord_channels_outside_the_allow_list_are_not_offered_nor_posted_to(
    kit: Kit, services: FakeServices
) -> None:
    channels = {"general": "111", "ops": "222"}
    kit.set_endpoint("discord", discord(services, kit.time.delivery(), channels=channels))
    (send,) = [s for s in kit.tools.schemas("mcp") if s["name"] == "send_message"]
    options = send["inputSchema"]["properties"]["target"]["oneOf"]
    (discord_option,) = [o for o in options if o["properties"]["type"]["const"] == "discord"]

    outside = await kit.error("send_message", to_channel("333"))
    endpoint = kit.router.endpoints["discord"]
    assert isinstance(endpoint, DiscordEndpoint)
    by_name = await endpoint.deliver(_message("general"))

    assert discord_option["properties"]["channel_id"]["enum"] == ["111", "222"]
    assert "general" in discord_option["properties"]["channel_id"]["description"]
    assert outside.kind == "invalid_arguments"
    assert by_name.to == "discord:111"
    assert [r.path for r in services.requests] == ["/api/v10/channels/111/messages"]


async def test_an_endpoint_with_an_allow_list_refuses_other_channels_itself(
    kit: Kit, services: FakeServices
) -> None:
    endpoint = discord(services, kit.time.delivery(), channels={"general": "111"})

    with pytest.raises(ToolFailed) as raised:
        await endpoint.deliver(_message("999"))

    assert "not one of the configured channels" in str(raised.value)
    assert "general (111)" in str(raised.value)
    assert services.requests == []


def test_a_delivery_policy_that_cannot_work_is_a_usage_error() -> None:
    with pytest.raises(SatchelUsageError):
        Delivery(attempts=0)
    with pytest.raises(SatchelUsageError):
        RateLimit(requests=0, per=1.0)
    with pytest.raises(SatchelUsageError):
        RateLimit(requests=1, per=0.0)


def _message(channel: str) -> OutgoingMessage:
    return OutgoingMessage(
        sender="ada", target=DiscordTarget(type="discord", channel_id=channel), content="hi"
    )


async def test_no_token_reaches_the_logs_or_the_result_even_on_retries(
    kit: Kit, services: FakeServices, caplog: pytest.LogCaptureFixture
) -> None:
    kit.set_endpoint("discord", discord(services, kit.time.delivery()))
    services.fail_next_posts = [502, 429]

    with caplog.at_level(logging.DEBUG):
        result = await kit.call("send_message", to_channel("42"))

    assert result.ok
    assert "trying again" in caplog.text  # the retries were logged
    assert DISCORD_TOKEN not in caplog.text
    assert DISCORD_TOKEN not in result.to_json()
    assert DISCORD_TOKEN not in repr(kit.router.endpoints["discord"])


async def test_a_bluesky_post_the_pds_fails_is_retried_and_posted_once(
    kit: Kit, services: FakeServices
) -> None:
    endpoint = BlueskyEndpoint(
        BSKY_IDENTIFIER, BSKY_PASSWORD, service=services.base_url, delivery=kit.time.delivery()
    )
    kit.set_endpoint("bluesky", endpoint)
    services.fail_next_records = [502]

    out = await kit.ok(
        "send_message",
        {"target": {"type": "bluesky", "handle": "alice.bsky.social"}, "content": "Hi"},
    )

    (receipt,) = out["receipts"]
    assert (receipt["channel"], receipt["attempts"]) == ("bluesky", 2)
    assert receipt["id"].startswith("at://")
    assert kit.time.waits == [0.5]
    assert [p["text"] for p in services.posts] == ["@alice.bsky.social Hi"]
    assert services.sessions_created == 1
