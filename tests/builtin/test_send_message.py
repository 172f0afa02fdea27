"""``send_message`` to every target type. Discord, Bluesky and webhooks go over real
HTTP to a loopback server that answers as those services do."""

from __future__ import annotations

from typing import Any

import pytest

from fake_services import (
    BSKY_DID,
    BSKY_IDENTIFIER,
    BSKY_PASSWORD,
    DISCORD_TOKEN,
    FakeServices,
)
from satchel.builtin import (
    BlueskyEndpoint,
    Delivery,
    DiscordEndpoint,
    SendMessageTool,
    WebhookEndpoint,
    grapheme_count,
)

from .conftest import Kit

pytestmark = pytest.mark.anyio


def discord(
    services: FakeServices,
    kit: Kit,
    token: str = DISCORD_TOKEN,
    *,
    delivery: Delivery | None = None,
    **options: Any,
) -> DiscordEndpoint:
    return DiscordEndpoint(
        token,
        base_url=f"{services.base_url}/api/v10",
        delivery=delivery or kit.time.delivery(),
        **options,
    )


def bluesky(services: FakeServices, kit: Kit, password: str = BSKY_PASSWORD) -> BlueskyEndpoint:
    return BlueskyEndpoint(
        BSKY_IDENTIFIER, password, service=services.base_url, delivery=kit.time.delivery()
    )


def webhook(kit: Kit, *allowed: str, **options: Any) -> WebhookEndpoint:
    options.setdefault("delivery", kit.time.delivery())
    return WebhookEndpoint(allowed_urls=allowed, **options)


# --- user, agents, groups ---------------------------------------------------------------


async def test_a_message_to_the_user_is_recorded_and_handed_to_the_user_callback(
    kit: Kit,
) -> None:
    out = await kit.ok(
        "send_message",
        {"target": {"type": "user"}, "content": "Hello Sam!", "metadata": {"mood": "warm"}},
    )

    assert "turn is over" in out["message"]
    (handed,) = kit.inbox.messages
    assert (handed.sender, handed.content, handed.origin) == ("ada", "Hello Sam!", "test")
    (recorded,) = await kit.store.list_messages("ada")
    assert (recorded.role, recorded.content) == ("assistant", "Hello Sam!")
    assert recorded.metadata == {"mood": "warm", "to": "user"}
    assert out["receipts"] == [{"to": "user", "id": recorded.id, "channel": "user", "attempts": 1}]


async def test_a_message_to_an_agent_lands_in_its_conversation(kit: Kit) -> None:
    await kit.ok("send_message", {"target": {"type": "agent", "id": "bob"}, "content": "Ping"})

    (landed,) = await kit.store.list_messages("bob")
    assert (landed.role, landed.content) == ("user", "Ping")
    assert landed.metadata["from"] == "agent:ada"
    (sent,) = await kit.store.list_messages("ada")
    assert (sent.role, sent.metadata["to"]) == ("assistant", "agent:bob")
    assert kit.inbox.messages == []


async def test_a_message_to_a_group_reaches_every_other_member(kit: Kit) -> None:
    out = await kit.ok(
        "send_message", {"target": {"type": "group", "name": "team"}, "content": "Standup!"}
    )

    assert [r["to"] for r in out["receipts"]] == ["agent:bob", "agent:cy"]
    for member in ("bob", "cy"):
        (landed,) = await kit.store.list_messages(member)
        assert landed.content == "Standup!"
        assert landed.metadata == {"from": "agent:ada", "group": "team"}
    assert [m.metadata["to"] for m in await kit.store.list_messages("ada")] == ["group:team"]


async def test_an_unknown_group_lists_the_known_ones(kit: Kit) -> None:
    error = await kit.error(
        "send_message", {"target": {"type": "group", "name": "teem"}, "content": "x"}
    )

    assert error.kind == "retry"
    assert "'team'" in error.message


async def test_an_invalid_agent_id_is_a_retry(kit: Kit) -> None:
    error = await kit.error(
        "send_message", {"target": {"type": "agent", "id": "a/b"}, "content": "x"}
    )

    assert error.kind == "retry"


async def test_a_channel_with_no_endpoint_is_not_offered_and_is_refused_as_invalid(
    kit: Kit,
) -> None:
    target = kit.tools.schemas("mcp")
    (send,) = [t for t in target if t["name"] == "send_message"]
    offered = [
        o["properties"]["type"]["const"]
        for o in send["inputSchema"]["properties"]["target"]["oneOf"]
    ]

    error = await kit.error(
        "send_message", {"target": {"type": "discord", "channel_id": "123"}, "content": "x"}
    )

    assert offered == ["user", "agent", "group"]
    assert "Discord" not in send["description"]
    assert error.kind == "invalid_arguments"
    assert error.details["errors"] == [
        {
            "field": "target.type",
            "problem": "must be one of 'user', 'agent', 'group', got \"discord\"",
        }
    ]
    assert await kit.store.list_messages("ada") == []


async def test_a_channel_offered_on_purpose_without_an_endpoint_fails_clearly(kit: Kit) -> None:
    everything = ["user", "agent", "group", "discord", "bluesky", "webhook"]
    kit.tools.register(SendMessageTool(kit.router, targets=everything), replace=True)

    error = await kit.error(
        "send_message", {"target": {"type": "discord", "channel_id": "123"}, "content": "x"}
    )

    assert error.kind == "failed"
    assert "No discord endpoint" in error.message
    assert await kit.store.list_messages("ada") == []


async def test_an_unknown_target_type_is_invalid_arguments_naming_target_type(kit: Kit) -> None:
    error = await kit.error(
        "send_message", {"target": {"type": "email", "number": "1"}, "content": "x"}
    )
    untyped = await kit.error("send_message", {"target": {"number": "1"}, "content": "x"})

    assert error.kind == "invalid_arguments"
    assert error.details["errors"][0]["field"] == "target.type"
    assert "`target.type` must be one of" in error.message
    assert "operation" not in error.message
    assert untyped.details["errors"][0]["field"] == "target.type"


# --- Discord ------------------------------------------------------------------------------


async def test_discord_posts_to_the_channel_as_the_bot(kit: Kit, services: FakeServices) -> None:
    kit.set_endpoint("discord", discord(services, kit))

    out = await kit.ok(
        "send_message",
        {"target": {"type": "discord", "channel_id": "8675309"}, "content": "Hi @everyone"},
    )

    (seen,) = services.requests
    assert (seen.method, seen.path) == ("POST", "/api/v10/channels/8675309/messages")
    assert seen.headers["authorization"] == f"Bot {DISCORD_TOKEN}"
    assert seen.headers["content-type"] == "application/json"
    assert seen.body == {"content": "Hi @everyone", "allowed_mentions": {"parse": []}}
    assert out["receipts"] == [
        {"to": "discord:8675309", "id": "1100000000000000001", "channel": "discord", "attempts": 1}
    ]
    (sent,) = await kit.store.list_messages("ada")
    assert sent.metadata["to"] == "discord:8675309"


async def test_discord_refusing_the_token_is_a_failed_result(
    kit: Kit, services: FakeServices
) -> None:
    kit.set_endpoint("discord", discord(services, kit, token="wrong"))

    error = await kit.error(
        "send_message", {"target": {"type": "discord", "channel_id": "1"}, "content": "x"}
    )

    assert error.kind == "failed"
    assert "401" in error.message
    assert "credentials" in error.message
    assert await kit.store.list_messages("ada") == []


async def test_discord_rate_limiting_is_waited_out_then_says_when_to_retry(
    kit: Kit, services: FakeServices
) -> None:
    kit.set_endpoint("discord", discord(services, kit))

    error = await kit.error(
        "send_message", {"target": {"type": "discord", "channel_id": "429"}, "content": "x"}
    )

    assert error.kind == "retry"
    assert "rate-limiting" in error.message
    assert "2.0 seconds" in error.message
    assert error.details["retry_after"] == 2.0
    assert error.details["attempts"] == 3
    assert kit.time.waits == [2.0, 2.0]  # Retry-After honoured, not the JSON's 1.5
    assert len(services.requests) == 3


async def test_discord_unknown_channel_is_a_retry_naming_it(
    kit: Kit, services: FakeServices
) -> None:
    kit.set_endpoint("discord", discord(services, kit))

    error = await kit.error(
        "send_message", {"target": {"type": "discord", "channel_id": "404"}, "content": "x"}
    )

    assert error.kind == "retry"
    assert "Unknown Channel" in error.message


async def test_discord_checks_length_and_channel_id_before_sending(
    kit: Kit, services: FakeServices
) -> None:
    kit.set_endpoint("discord", discord(services, kit))

    too_long = await kit.error(
        "send_message", {"target": {"type": "discord", "channel_id": "1"}, "content": "x" * 2001}
    )
    bad_id = await kit.error(
        "send_message", {"target": {"type": "discord", "channel_id": "../admin"}, "content": "x"}
    )

    assert too_long.kind == "retry"
    assert "2001" in too_long.message
    assert "2000" in too_long.message
    assert bad_id.kind == "retry"
    assert "numbers" in bad_id.message
    assert services.requests == []


# --- Bluesky ------------------------------------------------------------------------------


async def test_bluesky_logs_in_once_and_posts_a_mention(kit: Kit, services: FakeServices) -> None:
    kit.set_endpoint("bluesky", bluesky(services, kit))

    first = await kit.ok(
        "send_message",
        {"target": {"type": "bluesky", "handle": "@alice.bsky.social"}, "content": "Hi 👋🏽"},
    )
    await kit.ok(
        "send_message",
        {"target": {"type": "bluesky", "handle": "bob.example.com"}, "content": "Yo"},
    )

    assert services.sessions_created == 1
    assert services.paths().count("POST /xrpc/com.atproto.repo.createRecord") == 2
    post = services.posts[0]
    assert post["text"] == "@alice.bsky.social Hi 👋🏽"
    assert post["facets"][0]["features"] == [
        {"$type": "app.bsky.richtext.facet#mention", "did": "did:plc:alice"}
    ]
    assert first["receipts"][0]["id"].startswith(f"at://{BSKY_DID}/app.bsky.feed.post/")
    create = next(r for r in services.requests if r.path.endswith("createRecord"))
    assert create.headers["authorization"] == "Bearer access-1"


async def test_bluesky_logs_in_again_when_the_token_expired(
    kit: Kit, services: FakeServices
) -> None:
    kit.set_endpoint("bluesky", bluesky(services, kit))
    await kit.ok(
        "send_message",
        {"target": {"type": "bluesky", "handle": "alice.bsky.social"}, "content": "1"},
    )
    services.expire_next_post = True

    await kit.ok(
        "send_message",
        {"target": {"type": "bluesky", "handle": "alice.bsky.social"}, "content": "2"},
    )

    assert services.sessions_created == 2
    assert [p["text"] for p in services.posts] == ["@alice.bsky.social 1", "@alice.bsky.social 2"]


async def test_bluesky_refusing_the_login_is_a_failed_result(
    kit: Kit, services: FakeServices
) -> None:
    kit.set_endpoint("bluesky", bluesky(services, kit, password="nope"))

    error = await kit.error(
        "send_message",
        {"target": {"type": "bluesky", "handle": "alice.bsky.social"}, "content": "x"},
    )

    assert error.kind == "failed"
    assert "Invalid identifier or password" in error.message
    assert services.posts == []


async def test_bluesky_rate_limiting_says_when_to_retry(kit: Kit, services: FakeServices) -> None:
    kit.set_endpoint("bluesky", bluesky(services, kit))
    services.rate_limit_posts = True

    error = await kit.error(
        "send_message",
        {"target": {"type": "bluesky", "handle": "alice.bsky.social"}, "content": "x"},
    )

    assert error.kind == "retry"
    assert "RateLimitExceeded" in error.message
    assert 0 < error.details["retry_after"] <= 30


async def test_bluesky_unknown_handle_and_too_long_posts_are_retries(
    kit: Kit, services: FakeServices
) -> None:
    kit.set_endpoint("bluesky", bluesky(services, kit))

    unknown = await kit.error(
        "send_message",
        {"target": {"type": "bluesky", "handle": "nobody.bsky.social"}, "content": "x"},
    )
    malformed = await kit.error(
        "send_message", {"target": {"type": "bluesky", "handle": "not a handle"}, "content": "x"}
    )
    too_long = await kit.error(
        "send_message",
        {"target": {"type": "bluesky", "handle": "alice.bsky.social"}, "content": "👍🏽" * 290},
    )

    assert unknown.kind == "retry"
    assert "nobody.bsky.social" in unknown.message
    assert malformed.kind == "retry"
    assert "handle" in malformed.message
    assert too_long.kind == "retry"
    assert "300" in too_long.message
    assert services.posts == []


def test_graphemes_count_an_emoji_with_a_skin_tone_once() -> None:
    assert grapheme_count("👍🏽") == 1
    assert grapheme_count("e\u0301") == 1
    assert grapheme_count("abc") == 3


# --- webhooks -----------------------------------------------------------------------------


async def test_a_webhook_receives_the_message_as_json(kit: Kit, services: FakeServices) -> None:
    kit.set_endpoint("webhook", webhook(kit, f"{services.base_url}/hooks/"))

    out = await kit.ok(
        "send_message",
        {
            "target": {"type": "webhook", "url": f"{services.base_url}/hooks/ok"},
            "content": "Done",
            "metadata": {"job": 7},
        },
    )

    (seen,) = services.requests
    assert seen.body["sender"] == "ada"
    assert seen.body["content"] == "Done"
    assert seen.body["metadata"] == {"job": 7}
    assert out["receipts"][0]["id"] == "w-1"


async def test_a_webhook_url_outside_the_allowed_ones_is_refused_without_a_request(
    kit: Kit, services: FakeServices
) -> None:
    kit.set_endpoint("webhook", webhook(kit, f"{services.base_url}/hooks/"))

    for url in (
        f"{services.base_url}/admin",
        f"{services.base_url}/hooks-evil/x",
        "http://169.254.169.254/latest/meta-data",
        "file:///etc/passwd",
    ):
        error = await kit.error(
            "send_message", {"target": {"type": "webhook", "url": url}, "content": "x"}
        )
        assert error.kind == "failed", url
        assert "not an allowed" in error.message
    assert services.requests == []


async def test_webhook_errors_map_to_tool_errors(kit: Kit, services: FakeServices) -> None:
    base = f"{services.base_url}/hooks"
    kit.set_endpoint("webhook", webhook(kit, base, delivery=kit.time.delivery(max_wait=5)))

    limited = await kit.error(
        "send_message", {"target": {"type": "webhook", "url": f"{base}/limited"}, "content": "x"}
    )
    private = await kit.error(
        "send_message", {"target": {"type": "webhook", "url": f"{base}/private"}, "content": "x"}
    )
    broken = await kit.error(
        "send_message", {"target": {"type": "webhook", "url": f"{base}/broken"}, "content": "x"}
    )

    assert (limited.kind, limited.details["retry_after"]) == ("retry", 7.0)
    assert limited.details["attempts"] == 1  # 7 s is over max_wait: not waited out
    assert private.kind == "failed"
    assert "401" in private.message
    assert private.details["attempts"] == 1  # a 4xx is never retried
    assert broken.kind == "failed"
    assert "500" in broken.message
    assert "after 3 tries" in broken.message
    assert kit.time.waits == [0.5, 1.0]  # backoff between the tries of the 500


async def test_webhook_headers_carry_the_hooks_credentials(
    kit: Kit, services: FakeServices
) -> None:
    base = f"{services.base_url}/hooks"
    kit.set_endpoint("webhook", webhook(kit, base, headers={"Authorization": "Bearer hook-secret"}))

    out = await kit.ok(
        "send_message", {"target": {"type": "webhook", "url": f"{base}/private"}, "content": "x"}
    )

    assert out["receipts"][0]["id"] == "w-private"


async def test_an_unreachable_webhook_is_a_failed_result(kit: Kit, services: FakeServices) -> None:
    kit.set_endpoint("webhook", webhook(kit, allow_any=True))

    error = await kit.error(
        "send_message",
        {"target": {"type": "webhook", "url": "http://127.0.0.1:9/x"}, "content": "x"},
    )

    assert error.kind == "failed"
    assert "Could not reach" in error.message
    assert error.details["attempts"] == 3  # a refused connection sent nothing: retried


def _nested(depth: int) -> object:
    value: object = "deep"
    for _ in range(depth):
        value = {"k": value}
    return value


async def test_metadata_nested_thousands_deep_is_invalid_arguments_and_nothing_is_sent(
    kit: Kit,
) -> None:
    result = await kit.call(
        "send_message",
        {"target": {"type": "user"}, "content": "Hi", "metadata": {"m": _nested(5_000)}},
    )

    assert result.error is not None
    assert result.error.kind == "invalid_arguments"
    assert "nested too deeply" in result.error.message
    assert kit.inbox.messages == []
    assert await kit.store.list_messages("ada") == []
    result.to_json()


async def test_metadata_with_a_lone_surrogate_is_refused_before_any_request(
    kit: Kit, services: FakeServices
) -> None:
    kit.set_endpoint("webhook", webhook(kit, f"{services.base_url}/hooks/"))

    result = await kit.call(
        "send_message",
        {
            "target": {"type": "webhook", "url": f"{services.base_url}/hooks/ok"},
            "content": "Done",
            "metadata": {"note": [{"a\udfffb": "x"}]},
        },
    )

    assert result.error is not None
    assert result.error.kind == "invalid_arguments"
    assert "metadata" in result.error.message
    assert services.requests == []
    assert await kit.store.list_messages("ada") == []
    result.to_json()


async def test_credentials_in_a_webhook_url_reach_neither_the_result_nor_the_repr(
    kit: Kit, services: FakeServices
) -> None:
    host = services.base_url.removeprefix("http://")
    allowed = f"http://hook:S3CRET@{host}/hooks/"
    endpoint = webhook(kit, allowed, delivery=kit.time.delivery(max_wait=5))
    kit.set_endpoint("webhook", endpoint)

    sent = await kit.ok(
        "send_message", {"target": {"type": "webhook", "url": f"{allowed}ok"}, "content": "x"}
    )
    failed = await kit.error(
        "send_message",
        {"target": {"type": "webhook", "url": f"{allowed}private"}, "content": "x"},
    )
    refused = await kit.error(
        "send_message",
        {"target": {"type": "webhook", "url": f"http://u:S3CRET@{host}/admin"}, "content": "x"},
    )

    shown = " ".join([str(sent), failed.message, str(failed.details), refused.message])
    assert "S3CRET" not in shown + repr(endpoint)
    assert sent["receipts"][0]["to"] == f"webhook:http://{host}/hooks/ok"
    assert "not an allowed" in refused.message
