"""The inbound Discord channel against a loopback server that holds channels and
messages as Discord's REST API v10 does: reading by ``after``, replies threaded with
``message_reference``, direct messages, restarts from the stored cursor, rate limits,
outages and refused credentials."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field

import anyio
import pytest

from fake_services import DISCORD_BOT_ID, DISCORD_TOKEN, FakeServices, running_services
from satchel._errors import SatchelUsageError
from satchel.channels import (
    Action,
    ChannelUnavailableError,
    DiscordChannel,
    InboundChannel,
    MemoryCursorStore,
    discord_channel,
    parse_channels,
)

pytestmark = pytest.mark.anyio

GENERAL = "777000000000000001"
OPS = "777000000000000002"
SAM = "420000000000000001"
KIM = "420000000000000002"
STRANGER = "990000000000000001"


@dataclass
class FakeClock:
    """A monotonic clock that moves only when the channel sleeps."""

    now: float = 1000.0
    slept: list[float] = field(default_factory=list[float])

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


@pytest.fixture
def services() -> Iterator[FakeServices]:
    with running_services() as state:
        state.discord.add_channel(GENERAL, "general")
        state.discord.add_channel(OPS, "ops")
        state.discord.add_user(SAM, "sam")
        state.discord.add_user(KIM, "kim")
        yield state


def make(
    services: FakeServices,
    store: MemoryCursorStore,
    clock: FakeClock | None = None,
    *,
    token: str = DISCORD_TOKEN,
    **options: object,
) -> DiscordChannel:
    clock = clock or FakeClock()
    settings: dict[str, object] = {
        "listen": {"general": GENERAL},
        "allowed_users": [SAM],
        "dm": False,
        **options,
    }
    return DiscordChannel(
        token,
        base_url=f"{services.base_url}/api/v10",
        cursor_store=store,
        clock=clock,
        sleep=clock.sleep,
        **settings,  # type: ignore[arg-type]
    )


@pytest.fixture
async def channel(services: FakeServices) -> AsyncIterator[DiscordChannel]:
    made = make(services, MemoryCursorStore())
    await made.start()
    yield made
    await made.aclose()


def reads(services: FakeServices, channel_id: str) -> list[str]:
    """The ``after`` of every read of ``channel_id``'s messages."""
    path = f"/api/v10/channels/{channel_id}/messages"
    return [r.query["after"][0] for r in services.requests if r.method == "GET" and r.path == path]


async def test_a_message_in_a_listened_channel_arrives_with_its_ids_and_history_is_left_alone(
    services: FakeServices,
) -> None:
    services.discord.say(GENERAL, SAM, "from before the bot started")
    channel = make(services, MemoryCursorStore())
    try:
        assert isinstance(channel, InboundChannel)
        assert await channel.fetch() == []
        said = services.discord.say(GENERAL, SAM, "  remind me at 5  ")
        (message,) = await channel.fetch()
    finally:
        await channel.aclose()

    assert (message.channel, message.chat) == ("discord", GENERAL)
    assert (message.sender, message.text, message.message_id) == (SAM, "remind me at 5", said["id"])
    assert (message.reply_to, message.action) == (None, None)
    assert message.origin == f"discord:{GENERAL}"
    assert message.meta["author"] == "sam"
    assert message.received_at.tzinfo is not None
    assert channel.allows(message)
    first = services.requests[0]
    assert (first.method, first.path) == ("GET", "/api/v10/users/@me")
    assert first.headers["authorization"] == f"Bot {DISCORD_TOKEN}"
    assert all(r.query.get("limit") == ["100"] for r in services.requests if "messages" in r.path)


async def test_a_stranger_is_fetched_for_the_host_to_refuse_but_not_allowed(
    channel: DiscordChannel, services: FakeServices
) -> None:
    services.discord.say(GENERAL, STRANGER, "let me in")
    (message,) = await channel.fetch()
    assert message.sender == STRANGER
    assert not channel.allows(message)


async def test_the_bots_own_messages_other_bots_webhooks_and_system_messages_are_passed_over(
    channel: DiscordChannel, services: FakeServices
) -> None:
    services.discord.say(GENERAL, DISCORD_BOT_ID, "my own words", bot=True)
    services.discord.say(GENERAL, "880000000000000001", "beep", bot=True)
    services.discord.say(GENERAL, "880000000000000002", "hooked", webhook_id="1")
    services.discord.say(GENERAL, SAM, "", type=7)  # joined the server
    last = services.discord.say(GENERAL, SAM, "", attachments=[])  # no text (no intent)
    assert await channel.fetch() == []
    await channel.fetch()
    assert reads(services, GENERAL)[-1] == last["id"]  # the cursor moved past them all


async def test_acknowledged_messages_are_not_fetched_again_and_unacknowledged_ones_are(
    channel: DiscordChannel, services: FakeServices
) -> None:
    one = services.discord.say(GENERAL, SAM, "one")
    two = services.discord.say(GENERAL, SAM, "two")
    first, second = await channel.fetch()
    assert [first.message_id, second.message_id] == [one["id"], two["id"]]
    await channel.acknowledge(first)
    again = await channel.fetch()
    assert [m.message_id for m in again] == [two["id"]]
    await channel.acknowledge(again[0])
    assert await channel.fetch() == []


async def test_a_restart_resumes_after_the_last_acknowledged_message(
    services: FakeServices,
) -> None:
    store = MemoryCursorStore()
    before = make(services, store)
    services.discord.say(GENERAL, SAM, "history")
    await before.start()
    handled = services.discord.say(GENERAL, SAM, "handled")
    unhandled = services.discord.say(GENERAL, SAM, "fetched, never acknowledged")
    first, _ = await before.fetch()
    await before.acknowledge(first)
    await before.aclose()
    while_down = services.discord.say(GENERAL, SAM, "sent while the bot was down")

    after = make(services, store)
    try:
        fetched = await after.fetch()
    finally:
        await after.aclose()
    assert [m.message_id for m in fetched] == [unhandled["id"], while_down["id"]]
    assert handled["id"] not in {m.message_id for m in fetched}
    assert store.values[f"after:{GENERAL}"] == handled["id"]


async def test_a_reply_is_threaded_to_the_message_and_pings_no_one(
    channel: DiscordChannel, services: FakeServices
) -> None:
    said = services.discord.say(GENERAL, SAM, "what's next?")
    (message,) = await channel.fetch()
    sent = await channel.reply(message, "Tea, then @everyone gets the report.")
    await channel.acknowledge(message)

    (posted,) = services.discord.sent_by_bot(GENERAL)
    assert (sent.channel, sent.chat, sent.message_id) == ("discord", GENERAL, posted["id"])
    assert posted["message_reference"]["message_id"] == said["id"]
    assert posted["type"] == 19
    body = services.requests[-1].body
    assert body["allowed_mentions"] == {"parse": []}
    assert body["message_reference"] == {"message_id": said["id"], "fail_if_not_exists": False}

    answer = services.discord.say(GENERAL, SAM, "thanks", reply_to=sent.message_id)
    (threaded,) = await channel.fetch()  # the bot's reply itself is passed over
    assert threaded.message_id == answer["id"]
    assert threaded.reply_to == sent.message_id


async def test_a_reply_of_ten_thousand_characters_is_cut_to_discords_limit(
    channel: DiscordChannel, services: FakeServices
) -> None:
    services.discord.say(GENERAL, SAM, "tell me everything")
    (message,) = await channel.fetch()
    await channel.reply(message, "All the words. " * 667)  # 10,005 characters

    (posted,) = services.discord.sent_by_bot(GENERAL)
    assert len(posted["content"]) <= 2000
    assert posted["content"].startswith("All the words. All the words.")
    assert posted["content"].endswith("(cut short: 10,005 characters in all)")


async def test_allowed_users_direct_messages_are_read_and_notify_user_writes_there(
    services: FakeServices,
) -> None:
    channel = make(services, MemoryCursorStore(), listen={}, allowed_users=[SAM, KIM], dm=True)
    try:
        await channel.start()
        dm = services.discord.dm_channel(SAM)
        services.discord.say(dm, SAM, "psst")
        (message,) = await channel.fetch()
        assert (message.chat, message.sender, message.text) == (dm, SAM, "psst")
        assert message.meta["dm"] == "true"
        opened = [r.body for r in services.requests if r.path == "/api/v10/users/@me/channels"]
        assert sorted(b["recipient_id"] for b in opened) == [SAM, KIM]
        assert await channel.notify("ping") is None  # neither notify_channel nor notify_user
    finally:
        await channel.aclose()

    notifier = make(services, MemoryCursorStore(), notify_user=KIM)
    try:
        sent = await notifier.notify("Time to stretch.")
    finally:
        await notifier.aclose()
    assert sent is not None
    assert sent.chat == services.discord.dm_channel(KIM)
    assert [m["content"] for m in services.discord.sent_by_bot(sent.chat)] == ["Time to stretch."]


async def test_buttons_are_words_to_reply_with_and_such_a_reply_carries_the_action(
    services: FakeServices,
) -> None:
    store = MemoryCursorStore()
    channel = make(services, store, notify_channel="general")
    actions = [Action("Approve", "consent:approve:ap_1"), Action("Deny", "consent:deny:ap_1")]
    try:
        sent = await channel.notify("Ada wants to append to 'rules'.", actions=actions)
        assert sent is not None
        services.discord.say(GENERAL, SAM, "Deny!", reply_to=sent.message_id)
        services.discord.say(GENERAL, SAM, "deny", reply_to=None)  # not a reply: just text
        answer, plain = await channel.fetch()
    finally:
        await channel.aclose()
    (posted,) = services.discord.sent_by_bot(GENERAL)
    assert posted["content"] == (
        "Ada wants to append to 'rules'.\n\nReply to this message with **Approve** or **Deny**."
    )
    assert answer.action == "consent:deny:ap_1"
    assert plain.action is None

    later = make(services, store)  # a restart still knows what the buttons were
    try:
        services.discord.say(GENERAL, SAM, "approve", reply_to=sent.message_id)
        *_, approved = await later.fetch()
    finally:
        await later.aclose()
    assert approved.action == "consent:approve:ap_1"


async def test_send_posts_only_in_the_bots_own_channels(
    channel: DiscordChannel, services: FakeServices
) -> None:
    sent = await channel.send(GENERAL, "Consent needed.", actions=[Action("Approve", "a")])
    assert sent.chat == GENERAL
    with pytest.raises(SatchelUsageError, match="not one this bot"):
        await channel.send("123", "elsewhere")


async def test_a_429_on_reading_waits_its_retry_after_and_loses_nothing(
    services: FakeServices,
) -> None:
    clock = FakeClock()
    channel = make(services, MemoryCursorStore(), clock, poll_seconds=2.0)
    try:
        await channel.start()
        said = services.discord.say(GENERAL, SAM, "are you there?")
        services.retry_after = "7.5"
        services.discord.fail_next_gets.append(429)
        assert await channel.fetch() == []
        clock.slept.clear()
        (message,) = await channel.fetch()
    finally:
        await channel.aclose()
    assert message.message_id == said["id"]
    assert sum(clock.slept) >= 7.5


async def test_an_empty_rate_limit_bucket_is_waited_out_before_the_next_read(
    services: FakeServices,
) -> None:
    clock = FakeClock()
    channel = make(services, MemoryCursorStore(), clock, poll_seconds=1.0)
    try:
        services.discord.bucket_empty[GENERAL] = 4.0
        await channel.fetch()
        clock.slept.clear()
        await channel.fetch()
    finally:
        await channel.aclose()
    assert sum(clock.slept) >= 4.0


async def test_reads_are_paced_by_poll_seconds(services: FakeServices) -> None:
    clock = FakeClock()
    channel = make(services, MemoryCursorStore(), clock, poll_seconds=3.0)
    try:
        for _ in range(3):
            await channel.fetch()
    finally:
        await channel.aclose()
    assert clock.slept == [3.0, 3.0]


async def test_an_outage_is_channel_unavailable_and_the_next_fetch_recovers(
    channel: DiscordChannel, services: FakeServices
) -> None:
    said = services.discord.say(GENERAL, SAM, "hello?")
    services.discord.fail_next_gets.append(502)
    with pytest.raises(ChannelUnavailableError, match="502"):
        await channel.fetch()
    (message,) = await channel.fetch()
    assert message.message_id == said["id"]

    services.fail_next_posts.extend([503, 503, 503])
    with pytest.raises(ChannelUnavailableError, match="503"):
        await channel.reply(message, "here")


async def test_an_unreachable_discord_is_channel_unavailable(services: FakeServices) -> None:
    with anyio.fail_after(30):
        listener = await anyio.create_tcp_listener(local_host="127.0.0.1")
        port = listener.extra(anyio.abc.SocketAttribute.local_port)
        await listener.aclose()  # nothing listens on that port now
    channel = DiscordChannel(
        DISCORD_TOKEN,
        listen={"general": GENERAL},
        base_url=f"http://127.0.0.1:{port}/api/v10",
        cursor_store=MemoryCursorStore(),
    )
    try:
        with pytest.raises(ChannelUnavailableError, match="could not be reached"):
            await channel.fetch()
    finally:
        await channel.aclose()


async def test_a_refused_token_is_a_startup_error_naming_the_token(
    services: FakeServices,
) -> None:
    channel = make(services, MemoryCursorStore(), token="not-the-token")
    try:
        with pytest.raises(SatchelUsageError, match=r"401.*SATCHEL_DISCORD_TOKEN"):
            await channel.fetch()
    finally:
        await channel.aclose()


async def test_a_channel_the_bot_cannot_see_is_a_startup_error_naming_the_permission(
    services: FakeServices,
) -> None:
    services.discord.forbidden.add(OPS)
    channel = make(services, MemoryCursorStore(), listen={"ops": OPS})
    try:
        with pytest.raises(SatchelUsageError, match=r"'ops'.*403.*Read Message History"):
            await channel.start()
    finally:
        await channel.aclose()


def test_the_channels_file_configures_the_inbound_bot(services: FakeServices) -> None:
    config = parse_channels(
        f"""
[discord]
base_url = "{services.base_url}/api/v10"
channels = {{ general = "{GENERAL}", ops = "{OPS}" }}
listen = ["general"]
allowed_users = [{SAM}, "{KIM}"]
notify_channel = "ops"
poll_seconds = 5
""",
        environ={"SATCHEL_DISCORD_TOKEN": DISCORD_TOKEN},
    )
    channel = discord_channel(config)
    assert channel.listen == {"general": GENERAL}
    assert channel.allowed_users == {SAM, KIM}
    assert channel.notify_channel == OPS
    assert channel.poll_seconds == 5
    assert channel.name == "discord"


@pytest.mark.parametrize(
    ("section", "expected"),
    [
        ('listen = ["nope"]', "'nope' is not one of the channels (general)"),
        ('notify_channel = "nope"', "'nope' is not one of the channels"),
        ('allowed_users = ["sam"]', "Discord user id"),
        ("poll_seconds = 0.1", "greater than or equal to 0.5"),
    ],
)
def test_bad_inbound_settings_are_refused_with_the_field(section: str, expected: str) -> None:
    with pytest.raises(SatchelUsageError, match="discord") as caught:
        parse_channels(
            f'[discord]\nchannels = {{ general = "{GENERAL}" }}\n{section}\n',
            environ={"SATCHEL_DISCORD_TOKEN": "t"},
        )
    assert expected in str(caught.value)


def test_a_discord_section_with_nothing_to_read_opens_no_channel() -> None:
    config = parse_channels(
        f'[discord]\nchannels = {{ general = "{GENERAL}" }}\n',
        environ={"SATCHEL_DISCORD_TOKEN": "t"},
    )
    with pytest.raises(SatchelUsageError, match="nothing to read"):
        discord_channel(config)
    with pytest.raises(SatchelUsageError, match=r"no \[discord\] section"):
        discord_channel(parse_channels("", environ={}))


async def test_a_429_on_posting_is_retried_after_its_retry_after_or_reported_with_it(
    channel: DiscordChannel, services: FakeServices
) -> None:
    services.discord.say(GENERAL, SAM, "hi")
    (message,) = await channel.fetch()
    services.retry_after = "0.05"
    services.fail_next_posts.append(429)
    sent = await channel.reply(message, "hello")  # waited 0.05 s, tried again
    assert sent.message_id == services.discord.sent_by_bot(GENERAL)[-1]["id"]

    services.retry_after = "60"  # longer than the delivery's max_wait: not waited out
    services.fail_next_posts.append(429)
    with pytest.raises(ChannelUnavailableError, match="429") as caught:
        await channel.reply(message, "hello again")
    assert caught.value.details["retry_after"] == 60
    assert len(services.discord.sent_by_bot(GENERAL)) == 1


async def test_an_outage_while_starting_is_retried_by_the_next_fetch(
    services: FakeServices,
) -> None:
    channel = make(services, MemoryCursorStore())
    try:
        services.discord.fail_next_gets.extend([503, 503, 503])  # every try of the start
        with pytest.raises(ChannelUnavailableError, match=r"503.*after 3 tries"):
            await channel.fetch()
        assert await channel.fetch() == []
        said = services.discord.say(GENERAL, SAM, "up again?")
        (message,) = await channel.fetch()
    finally:
        await channel.aclose()
    assert message.message_id == said["id"]


async def test_a_user_the_bot_cannot_message_is_a_startup_error_naming_them(
    services: FakeServices,
) -> None:
    channel = make(services, MemoryCursorStore(), allowed_users=[STRANGER], dm=True)
    try:
        with pytest.raises(SatchelUsageError, match=rf"user {STRANGER}.*Invalid Recipient"):
            await channel.start()
    finally:
        await channel.aclose()
