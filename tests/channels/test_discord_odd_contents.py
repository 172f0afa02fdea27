"""Odd contents never crash the inbound Discord channel: any message object Discord
could send (or garble) is read or passed over, and any text the agent writes is posted
within Discord's limits."""

from __future__ import annotations

import json
from typing import Any

from anyio.from_thread import start_blocking_portal
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from fake_services import DISCORD_TOKEN, running_services
from satchel.channels import Action, Delivery, DiscordChannel, InboundMessage, MemoryCursorStore
from satchel.channels._discord_text import (
    action_for,
    fit_content,
    inbound_message,
    render_actions,
)

BOT = "1000000000000000001"
GENERAL = "777000000000000001"
SAM = "420000000000000001"

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=30),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner),
    max_leaves=20,
)
message_objects = st.fixed_dictionaries(
    {},
    optional={
        "id": st.one_of(st.text(max_size=25), st.integers(), st.just("1100000000000000009")),
        "type": st.one_of(st.integers(-1, 30), json_values),
        "author": st.one_of(
            json_values,
            st.fixed_dictionaries(
                {"id": st.one_of(st.just(SAM), st.just(BOT), json_values)},
                optional={"bot": json_values, "username": json_values, "system": json_values},
            ),
        ),
        "content": st.one_of(st.text(), json_values),
        "timestamp": st.one_of(st.text(max_size=40), json_values),
        "message_reference": json_values,
        "attachments": json_values,
        "webhook_id": json_values,
    },
)


@settings(max_examples=300)
@given(raw=st.one_of(message_objects, json_values))
@example(raw={"id": 0, "type": [], "author": {"id": SAM}})  # an unhashable type crashed it
@example(raw={"id": "1", "type": False, "author": {"id": SAM}, "content": "hi"})
def test_any_message_object_is_read_or_passed_over(raw: Any) -> None:
    result = inbound_message(raw, channel_id=GENERAL, bot_id=BOT, dm=False)
    assert result is None or isinstance(result, InboundMessage | str)
    if isinstance(result, InboundMessage):
        assert result.text.strip()
        assert result.sender != BOT
        json.dumps(result.text).encode()  # no lone surrogate: it can be stored and sent
        result.text.encode("utf-8")


def test_a_reply_answers_its_message_and_a_forward_answers_none() -> None:
    def reference(**fields: Any) -> Any:
        raw = {"id": "1100000000000000009", "author": {"id": SAM}, "content": "this"}
        message = inbound_message(
            {**raw, "message_reference": fields}, channel_id=GENERAL, bot_id=BOT, dm=False
        )
        assert isinstance(message, InboundMessage)
        return message.reply_to

    replied = "1100000000000000001"
    assert reference(type=0, channel_id=GENERAL, message_id=replied) == replied
    assert reference(message_id=replied) == replied
    assert reference(type=1, channel_id=GENERAL, message_id=replied) is None  # a forward
    assert reference(type=0, channel_id="1", message_id=replied) is None  # from elsewhere


def _utf16(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


@settings(max_examples=300)
@given(
    text=st.text(max_size=3000) | st.text(alphabet="a `\n😀", min_size=1900, max_size=2600),
    labels=st.lists(st.text(max_size=100), max_size=4),
)
def test_any_text_fits_discords_limit_and_is_never_empty(text: str, labels: list[str]) -> None:
    for content in (
        fit_content(text),
        render_actions(text, [Action(label, f"d{i}") for i, label in enumerate(labels)]),
    ):
        assert 0 < _utf16(content) <= 2000
        assert content.strip()
        content.encode("utf-8")
    if _utf16(text) <= 2000 and text.strip():
        assert fit_content(text) == text


def test_a_reply_saying_a_label_gives_its_action_and_anything_else_none() -> None:
    actions = [Action("Approve", "yes"), Action("Deny", "no")]
    assert action_for("  APPROVE. ", actions) == "yes"
    assert action_for("**deny**", actions) == "no"
    assert action_for("approve, but later", actions) is None
    assert action_for("", actions) is None


def test_odd_contents_through_the_wire_never_crash_and_always_post() -> None:
    with running_services() as services:
        services.discord.add_channel(GENERAL, "general")
        services.discord.add_user(SAM, "sam")
        with start_blocking_portal() as portal:
            channel = DiscordChannel(
                DISCORD_TOKEN,
                listen={"general": GENERAL},
                allowed_users=[SAM],
                poll_seconds=0.5,
                base_url=f"{services.base_url}/api/v10",
                cursor_store=MemoryCursorStore(),
                sleep=_noop,  # never wait between reads
                delivery=Delivery(),  # nor for the posting rate limit
            )
            portal.call(channel.start)

            @settings(
                max_examples=150,
                database=None,
                suppress_health_check=[HealthCheck.too_slow],
            )
            @given(said=st.text(max_size=2000), answer=st.text(max_size=12_000))
            def exchange(said: str, answer: str) -> None:
                services.discord.say(GENERAL, SAM, said)
                fetched = portal.call(channel.fetch)
                for message in fetched:
                    portal.call(channel.acknowledge, message)
                if said.strip():
                    (message,) = fetched
                    assert message.text == said.encode("utf-8", "replace").decode().strip()
                    sent = portal.call(channel.reply, message, answer)
                    assert sent.message_id
                else:
                    assert fetched == []

            try:
                exchange()
            finally:
                portal.call(channel.aclose)


async def _noop(*_: Any) -> None:
    return None
