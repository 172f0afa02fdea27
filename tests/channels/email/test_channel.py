"""The email channel against real servers (pymap for IMAP, aiosmtpd for SMTP): new mail
is fetched once, survives a restart without coming back, strangers and machines are not
allowed, answers are threaded, and a server that goes away is a ChannelUnavailableError
until it is back."""

from __future__ import annotations

import email
import subprocess
from email.message import Message
from email.policy import default as default_policy

import anyio
import anyio.to_thread
import pytest
from aiosmtpd.controller import Controller
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from satchel import SatchelUsageError
from satchel.channels import (
    Action,
    ChannelUnavailableError,
    EmailChannel,
    InboundChannel,
    InboundMessage,
    email_channel,
)
from toolkit.mail.conftest import ImapServer, Outbox, SmtpServer, free_port, start_pymap

from .conftest import ADA, AGENT, STRANGER, MemoryCursors, deliver, email_config, fetch_all, mail

pytestmark = pytest.mark.anyio


def _channel(
    servers: tuple[ImapServer, SmtpServer], cursors: MemoryCursors | None = None, **changes: object
) -> EmailChannel:
    imap, smtp = servers
    channel = email_channel(email_config(imap.port, smtp.port, **changes), cursors)
    assert isinstance(channel, EmailChannel)
    return channel


def _received(outbox: Outbox) -> list[Message]:
    return [email.message_from_bytes(raw, policy=default_policy) for _, _, raw in outbox.messages]


async def test_the_channel_is_an_inbound_channel_named_email(
    servers: tuple[ImapServer, SmtpServer],
) -> None:
    channel = _channel(servers)
    assert isinstance(channel, InboundChannel)
    assert channel.name == "email"
    await channel.aclose()


async def test_mail_from_an_allowed_sender_is_fetched_with_its_thread_details(
    servers: tuple[ImapServer, SmtpServer],
) -> None:
    deliver(servers[0], mail(In_Reply_To="<m0@example.org>", References="<m0@example.org>"))
    channel = _channel(servers)
    [message] = await fetch_all(channel)
    await channel.aclose()
    assert (message.channel, message.chat, message.sender) == ("email", ADA, ADA)
    assert message.origin == f"email:{ADA}"
    assert message.text == "Shall we have lunch at noon?"
    assert message.message_id == "<m1@example.org>"
    assert message.reply_to == "<m0@example.org>"
    assert message.meta["subject"] == "Lunch"
    assert message.meta["references"] == "<m0@example.org>"
    assert channel.allows(message)


async def test_an_acknowledged_mail_is_not_fetched_again_nor_after_a_restart(
    servers: tuple[ImapServer, SmtpServer],
) -> None:
    cursors = MemoryCursors()
    deliver(servers[0], mail())
    channel = _channel(servers, cursors)
    [first] = await fetch_all(channel)
    [again] = await fetch_all(channel)  # not acknowledged yet: the host may not have answered
    assert again.message_id == first.message_id
    await channel.acknowledge(first)
    assert await fetch_all(channel) == []
    await channel.aclose()

    restarted = _channel(servers, cursors)
    assert await fetch_all(restarted) == []
    deliver(servers[0], mail(msgid="<m2@example.org>", body="And tomorrow?"))
    [second] = await fetch_all(restarted)
    assert (second.message_id, second.text) == ("<m2@example.org>", "And tomorrow?")
    await restarted.aclose()


async def test_the_cursor_alone_keeps_a_restart_from_fetching_mail_marked_unread_again(
    servers: tuple[ImapServer, SmtpServer],
) -> None:
    cursors = MemoryCursors()
    deliver(servers[0], mail())
    channel = _channel(servers, cursors)
    [message] = await fetch_all(channel)
    await channel.acknowledge(message)
    await channel.aclose()
    with servers[0].client() as client:  # the person marks it unread in their mail app
        client.select_folder("INBOX")
        client.remove_flags(client.search(["ALL"]), [b"\\Seen"])
    restarted = _channel(servers, cursors)
    assert await fetch_all(restarted) == []
    await restarted.aclose()


async def test_without_a_cursor_store_the_seen_flag_keeps_a_restart_from_fetching_again(
    servers: tuple[ImapServer, SmtpServer],
) -> None:
    deliver(servers[0], mail())
    channel = _channel(servers)
    [message] = await fetch_all(channel)
    await channel.acknowledge(message)
    await channel.aclose()
    restarted = _channel(servers)
    assert await fetch_all(restarted) == []
    await restarted.aclose()
    with servers[0].client() as client:
        client.select_folder("INBOX")
        assert client.search(["SEEN"]) != []


async def test_mail_already_read_in_the_mailbox_is_not_new(
    servers: tuple[ImapServer, SmtpServer],
) -> None:
    deliver(servers[0], mail(), seen=True)
    channel = _channel(servers)
    assert await fetch_all(channel) == []
    await channel.aclose()


async def test_a_strangers_mail_is_fetched_but_not_allowed(
    servers: tuple[ImapServer, SmtpServer],
) -> None:
    deliver(servers[0], mail(STRANGER, msgid="<s1@example.net>"))
    channel = _channel(servers)
    [message] = await fetch_all(channel)
    assert message.sender == STRANGER
    assert not channel.allows(message)
    await channel.acknowledge(message)
    assert await fetch_all(channel) == []
    await channel.aclose()


@pytest.mark.parametrize(
    "headers",
    [
        {"Auto_Submitted": "auto-replied"},
        {"Precedence": "bulk"},
        {"X_Autoreply": "yes"},
    ],
)
async def test_mail_a_machine_sent_from_an_allowed_sender_is_not_allowed(
    servers: tuple[ImapServer, SmtpServer], headers: dict[str, str]
) -> None:
    deliver(servers[0], mail(subject="Out of office", **headers))
    channel = _channel(servers)
    [message] = await fetch_all(channel)
    assert not channel.allows(message)
    await channel.aclose()


async def test_mail_from_the_agents_own_address_is_not_allowed(
    servers: tuple[ImapServer, SmtpServer],
) -> None:
    deliver(servers[0], mail(AGENT))
    channel = _channel(servers, allowed_senders=[ADA, AGENT])
    [message] = await fetch_all(channel)
    assert not channel.allows(message)
    await channel.aclose()


async def test_a_reply_is_threaded_with_one_re_and_the_references(
    servers: tuple[ImapServer, SmtpServer],
) -> None:
    deliver(
        servers[0],
        mail(
            subject="RE: Re: Lunch",
            msgid="<m3@example.org>",
            In_Reply_To="<m2@example.org>",
            References="<m1@example.org> <m2@example.org>",
        ),
    )
    channel = _channel(servers)
    [message] = await fetch_all(channel)
    sent = await channel.reply(message, "Noon works. See you there!")
    await channel.aclose()
    [(envelope_from, recipients, _)] = servers[1].outbox.messages
    [answer] = _received(servers[1].outbox)
    assert (envelope_from, recipients) == (AGENT, [ADA])
    assert answer["Subject"] == "Re: Lunch"
    assert answer["In-Reply-To"] == "<m3@example.org>"
    assert answer["References"].split() == [
        "<m1@example.org>",
        "<m2@example.org>",
        "<m3@example.org>",
    ]
    assert answer["From"] == AGENT
    assert answer["To"] == ADA
    assert answer["Auto-Submitted"] == "auto-replied"
    assert answer.get_content().strip() == "Noon works. See you there!"  # pyright: ignore
    assert sent.message_id == answer["Message-ID"]
    assert (sent.channel, sent.chat) == ("email", ADA)


async def test_send_starts_a_new_mail_with_its_actions_written_as_answers_to_give(
    servers: tuple[ImapServer, SmtpServer],
) -> None:
    cursors = MemoryCursors()
    channel = _channel(servers, cursors)
    actions = [Action("Approve", "consent:approve:ap_1"), Action("Deny", "consent:deny:ap_1")]
    sent = await channel.send(ADA, "Approval needed: ada wants to edit 'rules'.", actions=actions)
    [request] = _received(servers[1].outbox)
    body = request.get_content()  # pyright: ignore
    assert "Reply APPROVE or DENY." in body
    assert request["In-Reply-To"] is None
    assert request["Subject"] == "Approval needed: ada wants to edit 'rules'."
    await channel.aclose()

    # the person answers it, after a restart of the host
    restarted = _channel(servers, cursors)
    answer = mail(
        subject=f"Re: {request['Subject']}",
        body="approve\n\n> Approval needed: ada wants to edit 'rules'.",
        msgid="<a1@example.org>",
        In_Reply_To=sent.message_id,
    )
    deliver(servers[0], answer)
    [message] = await fetch_all(restarted)
    assert message.reply_to == sent.message_id
    assert message.action == "consent:approve:ap_1"
    assert message.text == "approve"
    await restarted.aclose()


async def test_send_writes_only_to_allowed_senders_and_the_notify_address(
    servers: tuple[ImapServer, SmtpServer],
) -> None:
    channel = _channel(servers)
    with pytest.raises(SatchelUsageError, match="allowed senders"):
        await channel.send(STRANGER, "Hello")
    assert servers[1].outbox.messages == []


async def test_notify_writes_to_the_notify_address_or_nowhere(
    servers: tuple[ImapServer, SmtpServer],
) -> None:
    channel = _channel(servers)
    sent = await channel.notify("Reminder: water the plants")
    assert sent is not None
    [note] = _received(servers[1].outbox)
    assert (note["To"], note["Subject"]) == (ADA, "Reminder: water the plants")
    silent = _channel(servers, notify_address=None)
    assert await silent.notify("Reminder") is None
    assert len(servers[1].outbox.messages) == 1


async def test_utf8_subjects_and_bodies_arrive_and_go_back_out_intact(
    servers: tuple[ImapServer, SmtpServer],
) -> None:
    raw = (
        "From: Tomás Ñúñez <ada@example.org>\r\n"  # raw UTF-8, as current mailers write
        "To: agent@example.org\r\n"
        "Subject: Olá =?utf-8?q?caf=C3=A9?= ☕\r\n"
        "Message-ID: <u1@example.org>\r\n"
        "Content-Type: text/plain; charset=utf-8\r\n"
        "Content-Transfer-Encoding: 8bit\r\n"
        "\r\n"
        "Können wir um 12 Uhr essen? 🍜\r\n"
    ).encode()
    deliver(servers[0], raw)
    channel = _channel(servers)
    [message] = await fetch_all(channel)
    assert message.meta["subject"] == "Olá café ☕"
    assert message.text == "Können wir um 12 Uhr essen? 🍜"
    await channel.reply(message, "Ja, gerne — bis gleich! 😊")
    await channel.aclose()
    [answer] = _received(servers[1].outbox)
    assert answer["Subject"] == "Re: Olá café ☕"
    assert answer.get_content().strip() == "Ja, gerne — bis gleich! 😊"  # pyright: ignore


async def test_a_huge_mail_is_read_in_part_and_its_text_bounded(
    servers: tuple[ImapServer, SmtpServer],
) -> None:
    body = "Here is my novel.\n" + ("All work and no play. " * 250_000)  # about 5 MB
    deliver(servers[0], mail(body=body))
    channel = _channel(servers)
    [message] = await fetch_all(channel)
    await channel.aclose()
    assert message.text.startswith("Here is my novel.")
    assert len(message.text) < 17_000
    assert "cut" in message.text


async def test_a_mail_with_no_text_says_what_is_attached(
    servers: tuple[ImapServer, SmtpServer],
) -> None:
    photo = mail(body="")
    photo.clear_content()
    photo.add_attachment(
        b"\x89PNG\r\n" + bytes(range(256)) * 40, "image", "png", filename="cat.png"
    )
    deliver(servers[0], photo)
    channel = _channel(servers)
    [message] = await fetch_all(channel)
    await channel.aclose()
    assert "cat.png" in message.text
    assert message.meta["attachments"] == "cat.png"


async def test_mail_without_a_message_id_gets_a_stable_one_and_an_unthreaded_reply(
    servers: tuple[ImapServer, SmtpServer],
) -> None:
    deliver(servers[0], mail(msgid=None))
    channel = _channel(servers)
    [first] = await fetch_all(channel)
    [again] = await fetch_all(channel)
    assert first.message_id == again.message_id
    await channel.reply(first, "Got it.")
    await channel.aclose()
    [answer] = _received(servers[1].outbox)
    assert answer["In-Reply-To"] is None
    assert answer["Subject"] == "Re: Lunch"


async def test_a_wrong_password_is_a_clear_error_at_the_first_fetch_naming_the_setting(
    servers: tuple[ImapServer, SmtpServer],
) -> None:
    from pydantic import SecretStr

    channel = _channel(servers, password=SecretStr("wrong-secret"))
    with pytest.raises(SatchelUsageError) as raised:
        await channel.fetch()
    assert "SATCHEL_EMAIL_PASSWORD" in str(raised.value)
    assert "wrong-secret" not in str(raised.value)
    assert not isinstance(raised.value, ChannelUnavailableError)


async def test_a_mailbox_the_server_does_not_have_is_a_clear_error(
    servers: tuple[ImapServer, SmtpServer],
) -> None:
    channel = _channel(servers, mailbox="Agent")
    with pytest.raises(SatchelUsageError, match=r"no mailbox 'Agent'.*INBOX"):
        await channel.fetch()


async def test_an_smtp_server_that_is_down_makes_a_reply_unavailable(
    servers: tuple[ImapServer, SmtpServer],
) -> None:
    deliver(servers[0], mail())
    imap, _ = servers
    channel = email_channel(email_config(imap.port, free_port()))
    [message] = await fetch_all(channel)
    with pytest.raises(ChannelUnavailableError, match="nothing was sent"):
        await channel.reply(message, "Hello?")
    await channel.aclose()


class _Refuser:
    async def handle_RCPT(self, *args: object) -> str:
        return "550 no such user here"


async def test_a_refused_recipient_makes_a_reply_unavailable_naming_it(
    servers: tuple[ImapServer, SmtpServer],
) -> None:
    deliver(servers[0], mail())
    controller = Controller(_Refuser(), hostname="127.0.0.1", port=free_port())
    controller.start()
    try:
        channel = email_channel(email_config(servers[0].port, controller.port))
        [message] = await fetch_all(channel)
        with pytest.raises(ChannelUnavailableError, match=ADA):
            await channel.reply(message, "Hello?")
        await channel.aclose()
    finally:
        controller.stop()


async def test_an_imap_server_that_goes_away_is_unavailable_until_it_is_back(
    own_pymap: tuple[int, list[subprocess.Popen[str]]], smtp_server: SmtpServer
) -> None:
    port, processes = own_pymap
    server = ImapServer(port=port, process=processes[0])
    cursors = MemoryCursors()
    channel = email_channel(email_config(port, smtp_server.port), cursors)
    assert await fetch_all(channel) == []

    processes[0].terminate()
    processes[0].wait(timeout=10)
    with anyio.fail_after(60):
        with pytest.raises(ChannelUnavailableError, match=f"127.0.0.1:{port}"):
            await channel.fetch()
        with pytest.raises(ChannelUnavailableError):  # still down: still unavailable
            await channel.fetch()

    processes.append(start_pymap(port))
    server = ImapServer(port=port, process=processes[-1])
    server.reset()
    deliver(server, mail())
    with anyio.fail_after(60):
        [message] = await fetch_all(channel)
    assert message.message_id == "<m1@example.org>"
    await channel.acknowledge(message)
    assert await fetch_all(channel) == []
    await channel.aclose()


async def test_an_acknowledgement_while_the_server_is_away_holds_after_it_is_back(
    own_pymap: tuple[int, list[subprocess.Popen[str]]], smtp_server: SmtpServer
) -> None:
    port, processes = own_pymap
    server = ImapServer(port=port, process=processes[0])
    server.reset()
    deliver(server, mail())
    channel = email_channel(email_config(port, smtp_server.port))
    [message] = await fetch_all(channel)
    processes[0].terminate()
    processes[0].wait(timeout=10)
    await channel.acknowledge(message)  # the server is gone: no error, the cursor moved
    assert (await channel.reply(message, "Noted.")).chat == ADA  # SMTP is still up
    with pytest.raises(ChannelUnavailableError):
        await channel.fetch()
    await channel.aclose()


_ODD_HEADER = st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), max_size=60)


@settings(max_examples=25, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    subject=_ODD_HEADER | st.sampled_from(["=?utf-8?q?broken", "=?x-nope?b?QUJD?=", "Re: Re:"]),
    sender=_ODD_HEADER | st.just(ADA),
    body=st.binary(max_size=400),
    content_type=st.sampled_from(
        [
            "text/plain; charset=utf-8",
            "text/html",
            "image/png",
            "multipart/mixed; boundary=b",
            "text/plain; charset=no-such-charset",
            "application/octet-stream",
        ]
    ),
)
async def test_odd_mail_through_the_real_server_is_fetched_answered_and_acknowledged(
    servers: tuple[ImapServer, SmtpServer],
    subject: str,
    sender: str,
    body: bytes,
    content_type: str,
) -> None:
    raw = (
        f"From: {sender}\r\nTo: {AGENT}\r\nSubject: {subject}\r\n"
        f"Content-Type: {content_type}\r\n\r\n"
    ).encode() + body.replace(b"\r", b"")
    deliver(servers[0], raw)
    channel = _channel(servers)
    messages = await fetch_all(channel)
    assert len(messages) == 1
    [message] = messages
    if channel.allows(message):
        await channel.reply(message, "Received.")
    await channel.acknowledge(message)
    assert await fetch_all(channel) == []
    await channel.aclose()


async def test_a_fetch_waiting_on_a_server_that_can_idle_returns_when_mail_comes(
    servers: tuple[ImapServer, SmtpServer],
) -> None:
    channel = _channel(servers, poll_seconds=600)  # a poll would not come within the test
    found: list[InboundMessage] = []

    async def fetch() -> None:
        found.extend(await channel.fetch())

    with anyio.fail_after(60):
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(fetch)
            await anyio.wait_all_tasks_blocked()
            await anyio.to_thread.run_sync(deliver, servers[0], mail())
    assert [m.message_id for m in found] == ["<m1@example.org>"]
    await channel.acknowledge(found[0])  # while nothing waits: flagged at once
    await channel.aclose()
    with servers[0].client() as client:
        client.select_folder("INBOX")
        assert len(client.search(["SEEN"])) == 1


async def test_a_fetch_waiting_for_mail_is_cancelled_at_once_and_the_channel_goes_on(
    servers: tuple[ImapServer, SmtpServer],
) -> None:
    channel = _channel(servers, poll_seconds=600)
    assert await channel._poll() == []  # pyright: ignore[reportPrivateUsage]  (connected)
    with anyio.fail_after(60):  # not after poll_seconds
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(fetch_all, channel)  # waits in IDLE
            await anyio.wait_all_tasks_blocked()
            tasks.cancel_scope.cancel()
    deliver(servers[0], mail())
    with anyio.fail_after(60):
        [message] = await fetch_all(channel)
    await channel.acknowledge(message)
    await channel.aclose()
    with servers[0].client() as client:
        client.select_folder("INBOX")
        assert len(client.search(["SEEN"])) == 1
