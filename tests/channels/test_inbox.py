"""The local HTTP inbox over real HTTP: httpx against the running uvicorn app, the
channel's side driven as ``satchel up`` drives any channel (fetch, reply, notify)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import anyio
import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from satchel import SatchelUsageError
from satchel.channels import (
    Action,
    ChannelConfig,
    InboundChannel,
    InboxChannel,
    InboxConfig,
    open_inbound_channels,
    parse_channels,
)
from satchel.channels._inbox_app import MAX_BODY_BYTES

pytestmark = pytest.mark.anyio

TOKEN = "inbox-test-token-0123456789"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


@pytest.fixture
async def inbox() -> AsyncIterator[InboxChannel]:
    channel = InboxChannel(InboxConfig(token=TOKEN, port=0), poll=0.05)
    await channel.start()
    try:
        yield channel
    finally:
        await channel.aclose()


@pytest.fixture
async def http(inbox: InboxChannel) -> AsyncIterator[httpx.AsyncClient]:
    assert inbox.url is not None
    async with httpx.AsyncClient(base_url=inbox.url, timeout=30) as client:
        yield client


async def test_a_posted_message_is_fetched_with_its_chat_and_sender(
    inbox: InboxChannel, http: httpx.AsyncClient
) -> None:
    answer = await http.post(
        "/messages", json={"text": "buy milk", "chat": "phone", "sender": "ada"}, headers=AUTH
    )
    assert answer.status_code == 202
    body = answer.json()
    assert body["status"] == "pending"
    [message] = await inbox.fetch()
    assert (message.channel, message.chat, message.sender, message.text) == (
        "inbox",
        "phone",
        "ada",
        "buy milk",
    )
    assert message.message_id == body["id"]
    assert message.origin == "inbox:phone"
    assert inbox.allows(message)
    assert isinstance(inbox, InboundChannel)


async def test_a_reply_is_read_back_by_id(inbox: InboxChannel, http: httpx.AsyncClient) -> None:
    posted = (await http.post("/messages", json={"text": "hi"}, headers=AUTH)).json()
    pending = await http.get(f"/messages/{posted['id']}", headers=AUTH)
    assert pending.json()["status"] == "pending"
    [message] = await inbox.fetch()
    sent = await inbox.reply(message, "hello!")
    await inbox.acknowledge(message)
    answered = (await http.get(f"/messages/{posted['id']}", headers=AUTH)).json()
    assert (answered["status"], answered["reply"]) == ("answered", "hello!")
    assert (sent.channel, sent.chat) == ("inbox", "inbox")


async def test_a_post_with_wait_gets_the_reply_in_its_answer(
    inbox: InboxChannel, http: httpx.AsyncClient
) -> None:
    answers: list[httpx.Response] = []

    async def post() -> None:
        answers.append(
            await http.post("/messages?wait=60", json={"text": "ping", "id": "p1"}, headers=AUTH)
        )

    with anyio.fail_after(60):
        async with anyio.create_task_group() as tg:
            tg.start_soon(post)
            messages: list[Any] = []
            while not messages:
                messages = list(await inbox.fetch())
            await inbox.reply(messages[0], "pong")
    [answer] = answers
    assert answer.status_code == 200
    assert answer.json() == {
        "id": "p1",
        "chat": "inbox",
        "sender": "inbox",
        "status": "answered",
        "reply": "pong",
    }


async def test_posting_an_id_again_is_idempotent(
    inbox: InboxChannel, http: httpx.AsyncClient
) -> None:
    first = await http.post("/messages", json={"text": "once", "id": "m-1"}, headers=AUTH)
    again = await http.post("/messages", json={"text": "once", "id": "m-1"}, headers=AUTH)
    other = await http.post("/messages", json={"text": "twice", "id": "m-1"}, headers=AUTH)
    assert (first.status_code, again.status_code, other.status_code) == (202, 202, 409)
    assert [m.message_id for m in await inbox.fetch()] == ["m-1"]
    assert list(await inbox.fetch()) == []


async def test_form_data_posts_like_json(inbox: InboxChannel, http: httpx.AsyncClient) -> None:
    urlencoded = await http.post("/messages", data={"text": "from a form"}, headers=AUTH)
    multipart = await http.post(
        "/messages", data={"text": "multi"}, files={"x": ("x.txt", b"")}, headers=AUTH
    )
    assert urlencoded.status_code == 202
    assert multipart.status_code == 400
    assert [m.text for m in await inbox.fetch()] == ["from a form"]


@pytest.mark.parametrize(
    "headers",
    [{}, {"Authorization": "Bearer wrong"}, {"Authorization": f"Basic {TOKEN}"}],
)
async def test_a_request_without_the_token_is_401_and_queues_nothing(
    inbox: InboxChannel, http: httpx.AsyncClient, headers: dict[str, str]
) -> None:
    for request in (
        http.post("/messages", json={"text": "x"}, headers=headers),
        http.get("/notifications", headers=headers),
        http.get("/messages/abc", headers=headers),
    ):
        answer = await request
        assert answer.status_code == 401
        assert answer.json()["error"] == "invalid_token"
    assert list(await inbox.fetch()) == []


async def test_many_wrong_tokens_are_throttled(http: httpx.AsyncClient) -> None:
    codes = [
        (await http.get("/notifications", headers={"Authorization": "Bearer no"})).status_code
        for _ in range(7)
    ]
    assert codes[:5] == [401] * 5
    assert codes[-1] == 429


@pytest.mark.parametrize(
    ("content", "kind", "status", "error"),
    [
        (b"{not json", "application/json", 400, "invalid_json"),
        (b"[1, 2]", "application/json", 400, "invalid_body"),
        (b'{"chat": "x"}', "application/json", 400, "invalid_body"),
        (b'{"text": ""}', "application/json", 400, "invalid_body"),
        (b'{"text": "x", "id": "has space"}', "application/json", 400, "invalid_body"),
        (b"text=x", "text/plain", 415, "unsupported_media_type"),
        (b"[" * 100_000, "application/json", 413, "too_large"),
    ],
)
async def test_a_bad_body_gets_a_json_error(
    inbox: InboxChannel,
    http: httpx.AsyncClient,
    content: bytes,
    kind: str,
    status: int,
    error: str,
) -> None:
    answer = await http.post("/messages", content=content, headers={**AUTH, "Content-Type": kind})
    assert answer.status_code == status
    assert answer.json()["error"] == error
    assert list(await inbox.fetch()) == []


async def test_a_huge_chunked_body_is_413(http: httpx.AsyncClient) -> None:
    async def chunks() -> AsyncIterator[bytes]:
        for _ in range(MAX_BODY_BYTES // 1000 + 2):
            yield b" " * 1000

    answer = await http.post("/messages", content=chunks(), headers=AUTH)
    assert answer.status_code == 413


@pytest.mark.parametrize("wait", ["-1", "abc", "nan", "100000"])
async def test_a_bad_wait_is_400(http: httpx.AsyncClient, wait: str) -> None:
    answer = await http.post(f"/messages?wait={wait}", json={"text": "x"}, headers=AUTH)
    assert answer.status_code == 400
    assert answer.json()["error"] == "invalid_parameter"


async def test_notify_and_send_are_picked_up_after_a_seq(
    inbox: InboxChannel, http: httpx.AsyncClient
) -> None:
    await inbox.notify("Reminder: water the plants", actions=[Action("Done", "done:1")])
    sent = await inbox.send("phone", "Approve the write?")
    first = (await http.get("/notifications", headers=AUTH)).json()
    assert [(n["seq"], n["text"], n["chat"]) for n in first["notifications"]] == [
        (1, "Reminder: water the plants", None),
        (2, "Approve the write?", "phone"),
    ]
    assert first["notifications"][0]["actions"] == [{"label": "Done", "data": "done:1"}]
    assert sent.message_id == "n2"
    later = (await http.get("/notifications?after=2", headers=AUTH)).json()
    assert later == {"notifications": [], "last": 2}


async def test_a_long_poll_returns_when_a_notification_comes(
    inbox: InboxChannel, http: httpx.AsyncClient
) -> None:
    answers: list[httpx.Response] = []

    async def poll() -> None:
        answers.append(await http.get("/notifications?after=0&wait=60", headers=AUTH))

    with anyio.fail_after(60):
        async with anyio.create_task_group() as tg:
            tg.start_soon(poll)
            while not answers:
                await inbox.notify("now")
                await anyio.sleep(0.05)
    assert answers[0].json()["notifications"][0]["text"] == "now"


async def test_a_sender_off_the_allow_list_is_refused_before_the_queue() -> None:
    channel = InboxChannel(InboxConfig(token=TOKEN, port=0, allowed_senders=["ada"]), poll=0.05)
    url = await channel.start()
    try:
        async with httpx.AsyncClient(base_url=url) as http:
            stranger = await http.post(
                "/messages", json={"text": "hi", "sender": "eve"}, headers=AUTH
            )
            ada = await http.post("/messages", json={"text": "hi", "sender": "ada"}, headers=AUTH)
        assert (stranger.status_code, ada.status_code) == (403, 202)
        assert [m.sender for m in await channel.fetch()] == ["ada"]
    finally:
        await channel.aclose()


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    body=st.one_of(
        st.binary(max_size=300),
        st.recursive(
            st.none() | st.booleans() | st.integers() | st.text(max_size=30),
            lambda inner: (
                st.lists(inner, max_size=4)
                | st.dictionaries(
                    st.sampled_from(["text", "chat", "sender", "id", "x"]), inner, max_size=5
                )
            ),
            max_leaves=10,
        ).map(lambda v: json.dumps(v).encode()),
    ),
    kind=st.sampled_from(
        ["application/json", "application/x-www-form-urlencoded", "multipart/form-data", "text/x"]
    ),
)
def test_any_body_gets_a_json_answer_never_a_crash(body: bytes, kind: str) -> None:
    async def run() -> None:
        channel = InboxChannel(InboxConfig(token=TOKEN, port=0), poll=0)
        url = await channel.start()
        try:
            async with httpx.AsyncClient(base_url=url, timeout=30) as http:
                answer = await http.post(
                    "/messages", content=body, headers={**AUTH, "Content-Type": kind}
                )
                assert answer.status_code in (202, 400, 413, 415), answer.text
                payload = answer.json()
                queued = list(await channel.fetch())
                if answer.status_code == 202:
                    assert [m.message_id for m in queued] == [payload["id"]]
                else:
                    assert set(payload) == {"error", "message"}
                    assert queued == []
        finally:
            await channel.aclose()

    anyio.run(run)


def test_the_inbox_section_reads_its_token_from_the_environment() -> None:
    config = parse_channels(
        '[inbox]\nport = 9999\nallowed_senders = ["ada"]\n',
        environ={"SATCHEL_INBOX_TOKEN": TOKEN},
    )
    assert config.inbox is not None
    assert config.inbox.token.get_secret_value() == TOKEN
    assert (config.inbox.host, config.inbox.port) == ("127.0.0.1", 9999)
    assert TOKEN not in repr(config)
    [channel] = open_inbound_channels(config)
    assert isinstance(channel, InboxChannel)
    assert channel.name == "inbox"


def test_an_inbox_without_a_token_is_refused_naming_the_variable() -> None:
    with pytest.raises(SatchelUsageError, match="SATCHEL_INBOX_TOKEN"):
        parse_channels("[inbox]\n", environ={})
    with pytest.raises(SatchelUsageError, match=r"inbox\.token"):
        parse_channels("[inbox]\n", environ={"SATCHEL_INBOX_TOKEN": "short"})


def test_no_inbound_section_opens_no_channel() -> None:
    assert open_inbound_channels(ChannelConfig()) == []
