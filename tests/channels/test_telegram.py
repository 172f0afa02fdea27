"""TelegramChannel through python-telegram-bot's Bot against a fake Bot API server on
loopback: updates in, replies and buttons out, the offset, and the API's errors."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterator

import pytest

from fake_telegram import TOKEN, FakeTelegram, serving_telegram
from satchel import SatchelUsageError
from satchel.channels import (
    Action,
    ChannelUnavailableError,
    InboundChannel,
    TelegramChannel,
    parse_channels,
)

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]

SAM = 123456789
STRANGER = 555


@pytest.fixture
def fake() -> FakeTelegram:
    return FakeTelegram()


@pytest.fixture
def url(fake: FakeTelegram) -> Iterator[str]:
    with serving_telegram(fake) as base:
        yield base


@pytest.fixture
async def channel(url: str) -> AsyncIterator[TelegramChannel]:
    made = TelegramChannel(
        TOKEN, base_url=url, allowed_users=[SAM], notify_chat=SAM, poll_seconds=1
    )
    yield made
    await made.aclose()


async def _fetch_some(channel: TelegramChannel, count: int = 1) -> list[object]:
    got: list[object] = []
    for _ in range(20):
        got.extend(await channel.fetch())
        if len(got) >= count:
            return got
    raise AssertionError(f"fetched {got}")


async def test_a_persons_message_is_fetched_with_its_chat_sender_and_origin(
    fake: FakeTelegram, channel: TelegramChannel
) -> None:
    update = fake.message(SAM, "hello there")
    [message] = await channel.fetch()
    assert isinstance(channel, InboundChannel)
    assert (message.channel, message.chat, message.sender) == ("telegram", str(SAM), str(SAM))
    assert message.text == "hello there"
    assert message.message_id == str(update)
    assert message.origin == f"telegram:{SAM}"
    assert channel.allows(message)


async def test_a_stranger_is_fetched_but_not_allowed(
    fake: FakeTelegram, channel: TelegramChannel
) -> None:
    fake.message(STRANGER, "let me in")
    [message] = await channel.fetch()
    assert not channel.allows(message)


async def test_the_reply_goes_to_the_chat_as_a_reply_to_the_message(
    fake: FakeTelegram, channel: TelegramChannel
) -> None:
    fake.message(SAM, "hello")
    [message] = await channel.fetch()
    sent = await channel.reply(message, "Hi Sam!")
    [out] = fake.sent
    assert (out.chat_id, out.text, out.reply_to) == (str(SAM), "Hi Sam!", 1)
    assert sent.message_id == str(out.message_id)
    assert sent.chat == str(SAM)


async def test_a_long_reply_is_sent_in_pieces_telegram_accepts(
    fake: FakeTelegram, channel: TelegramChannel
) -> None:
    fake.message(SAM, "tell me everything")
    [message] = await channel.fetch()
    await channel.reply(message, "x" * 5000)
    assert [len(s.text) for s in fake.sent] == [4096, 904]


async def test_notify_sends_buttons_and_a_press_comes_back_as_an_action(
    fake: FakeTelegram, channel: TelegramChannel
) -> None:
    sent = await channel.notify(
        "Approve?", actions=[Action("Approve", "consent:approve:ap_1"), Action("Deny", "d")]
    )
    assert sent is not None
    [out] = fake.sent
    assert out.buttons == [("Approve", "consent:approve:ap_1"), ("Deny", "d")]
    fake.press(SAM, out, "consent:approve:ap_1")
    [pressed] = await channel.fetch()
    assert pressed.action == "consent:approve:ap_1"
    assert pressed.text == "Approve"
    assert pressed.reply_to == sent.message_id
    assert pressed.sender == str(SAM)
    assert len(fake.answered_queries) == 1


async def test_a_reply_to_the_bots_message_names_it(
    fake: FakeTelegram, channel: TelegramChannel
) -> None:
    sent = await channel.send(str(SAM), "Shall I?")
    fake.message(SAM, "yes", reply_to=int(sent.message_id))
    [message] = await channel.fetch()
    assert message.reply_to == sent.message_id


async def test_the_next_poll_confirms_what_was_fetched_and_a_new_client_gets_the_rest(
    fake: FakeTelegram, channel: TelegramChannel, url: str
) -> None:
    fake.message(SAM, "one")
    await channel.fetch()
    fake.message(SAM, "two")
    [two] = await channel.fetch()  # offset past "one": confirmed at the server
    assert two.text == "two"
    restarted = TelegramChannel(TOKEN, base_url=url, allowed_users=[SAM], poll_seconds=0)
    try:
        [again] = await restarted.fetch()  # "two" was never confirmed
    finally:
        await restarted.aclose()
    assert again.text == "two"
    assert fake.method_calls("getUpdates")[-1].get("allowed_updates") == [
        "message",
        "callback_query",
    ]


async def test_a_rate_limit_is_unavailable_with_the_servers_retry_after(
    fake: FakeTelegram, channel: TelegramChannel
) -> None:
    await channel.start()
    fake.fail("getUpdates", 429, retry_after=7)
    with pytest.raises(ChannelUnavailableError) as caught:
        await channel.fetch()
    assert caught.value.details["retry_after"] == 7.0


async def test_a_bad_gateway_is_unavailable_and_the_next_fetch_goes_on(
    fake: FakeTelegram, channel: TelegramChannel
) -> None:
    await channel.start()
    fake.fail("getUpdates", 502)
    with pytest.raises(ChannelUnavailableError):
        await channel.fetch()
    fake.message(SAM, "still there?")
    [message] = await channel.fetch()
    assert message.text == "still there?"


async def test_a_refused_token_is_a_usage_error_naming_the_variable(url: str) -> None:
    channel = TelegramChannel("123:wrong", base_url=url, poll_seconds=0)
    with pytest.raises(SatchelUsageError, match="SATCHEL_TELEGRAM_TOKEN"):
        await channel.fetch()
    await channel.aclose()


async def test_an_unreachable_server_is_unavailable() -> None:
    channel = TelegramChannel(TOKEN, base_url="http://127.0.0.1:9", poll_seconds=0)
    with pytest.raises(ChannelUnavailableError):
        await channel.fetch()
    await channel.aclose()


def test_the_telegram_section_reads_its_token_from_the_environment() -> None:
    config = parse_channels(
        '[telegram]\nbase_url = "http://127.0.0.1:8081"\nallowed_users = [123456789]\n'
        "notify_chat = 123456789\n",
        environ={"SATCHEL_TELEGRAM_TOKEN": TOKEN},
    )
    assert config.telegram is not None
    assert config.telegram.token.get_secret_value() == TOKEN
    channel = config.telegram.channel()
    assert (channel.allowed_users, channel.notify_chat) == (frozenset({SAM}), SAM)
    assert TOKEN not in repr(config) + repr(channel)


def test_a_telegram_section_without_a_token_names_the_variable() -> None:
    from satchel import SatchelUsageError as UsageError

    with pytest.raises(UsageError, match="SATCHEL_TELEGRAM_TOKEN"):
        parse_channels("[telegram]\nallowed_users = [1]\n", environ={})


async def test_the_token_never_reaches_the_logs_even_at_debug(
    fake: FakeTelegram, url: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    channel = TelegramChannel(TOKEN, base_url=url, allowed_users=[SAM], poll_seconds=0)
    try:
        fake.message(SAM, "hello")
        [message] = await channel.fetch()
        await channel.reply(message, "hi")
    finally:
        await channel.aclose()
    assert "/bot<token>/getUpdates" in caplog.text  # httpx's request line, redacted
    assert TOKEN not in caplog.text
