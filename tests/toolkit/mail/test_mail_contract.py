"""One contract for every mail backend: the local Maildir and a real IMAP server (pymap)
with a real SMTP server (aiosmtpd), driven through the tools."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from typing import Any

import pytest

from satchel.tools import ToolResult

from .conftest import ME, MailSetup, message

pytestmark = pytest.mark.anyio


def _recent(days: float = 0.0) -> str:
    return format_datetime(datetime.now(UTC) - timedelta(days=days, minutes=5))


async def _ok(mail: MailSetup, name: str, args: dict[str, Any]) -> Any:
    result = await mail.tools.call(name, args)
    assert result.ok, result.error
    return result.output


async def _error(mail: MailSetup, name: str, args: dict[str, Any]) -> ToolResult:
    result = await mail.tools.call(name, args)
    assert not result.ok
    assert result.error is not None
    return result


async def test_unread_list_shows_only_unseen_messages_newest_first(mail: MailSetup) -> None:
    mail.deliver(
        message("Ada <ada@example.org>", "Old news", "read it", date=_recent(3)), seen=True
    )
    mail.deliver(message("Bob <bob@example.org>", "First", "one", date=_recent(2)))
    mail.deliver(message("Cy <cy@example.org>", "Second", "two", date=_recent(1)))
    out = await _ok(mail, "list_unread_emails", {})
    assert [e.subject for e in out.emails] == ["Second", "First"]
    assert out.count == 2
    assert all(e.unread for e in out.emails)
    assert out.emails[0].sender == "Cy <cy@example.org>"
    assert out.emails[0].snippet == "two"


async def test_read_emails_lists_read_and_unread_up_to_max_results(mail: MailSetup) -> None:
    for day in range(5):
        mail.deliver(
            message("ada@example.org", f"Note {day}", "x", date=_recent(day)), seen=day % 2 == 0
        )
    out = await _ok(mail, "read_emails", {"max_results": 3})
    assert [e.subject for e in out.emails] == ["Note 0", "Note 1", "Note 2"]
    assert [e.unread for e in out.emails] == [False, True, False]


async def test_search_matches_sender_subject_and_body_words(mail: MailSetup) -> None:
    mail.deliver(message("Ada <ada@example.org>", "Lunch plans", "Friday at the noodle bar"))
    mail.deliver(message("Bob <bob@example.org>", "Lunch plans", "Thursday instead?"))
    mail.deliver(message("Ada <ada@example.org>", "Invoice", "Attached, due Friday"))
    by_sender = await _ok(mail, "search_emails", {"query": "from:ada"})
    assert sorted(e.subject for e in by_sender.emails) == ["Invoice", "Lunch plans"]
    combined = await _ok(mail, "search_emails", {"query": 'subject:"lunch plans" noodle'})
    assert [e.sender for e in combined.emails] == ["Ada <ada@example.org>"]
    none = await _ok(mail, "search_emails", {"query": "zeppelin"})
    assert none.count == 0


async def test_search_with_days_leaves_out_older_messages(mail: MailSetup) -> None:
    mail.deliver(message("ada@example.org", "Report old", "quarterly", date=_recent(40)))
    mail.deliver(message("ada@example.org", "Report new", "quarterly", date=_recent(1)))
    out = await _ok(mail, "search_emails", {"query": "quarterly", "days": 7})
    assert [e.subject for e in out.emails] == ["Report new"]


async def test_email_details_give_body_cc_attachments_and_leave_it_unread(
    mail: MailSetup,
) -> None:
    msg = message(
        "Ada <ada@example.org>",
        "Slides",
        "Here are the slides.\nSee you.",
        cc="Bob <bob@example.org>, cy@example.org",
        msgid="<slides-1@example.org>",
    )
    msg.add_attachment(b"%PDF-1.4 fake", maintype="application", subtype="pdf", filename="deck.pdf")
    email_id = mail.deliver(msg)
    details = await _ok(mail, "get_email_details", {"email_id": email_id})
    assert details.email_id == email_id
    assert details.body == "Here are the slides.\nSee you."
    assert details.cc == ["bob@example.org", "cy@example.org"]
    assert details.attachments == ["deck.pdf"]
    assert details.message_id == "<slides-1@example.org>"
    still = await _ok(mail, "list_unread_emails", {})
    assert [e.email_id for e in still.emails] == [email_id]


async def test_an_html_only_message_reads_as_text(mail: MailSetup) -> None:
    msg = message("ada@example.org", "News", "")
    msg.set_content("<p>Hello&nbsp;<b>there</b></p>", subtype="html")
    email_id = mail.deliver(msg)
    details = await _ok(mail, "get_email_details", {"email_id": email_id})
    assert details.body == "Hello there"


@pytest.mark.parametrize("email_id", ["INBOX:999999", "nonsense", "Nowhere:1", ":"])
async def test_an_unknown_email_id_is_a_retry_naming_it(mail: MailSetup, email_id: str) -> None:
    result = await _error(mail, "get_email_details", {"email_id": email_id})
    assert result.error is not None
    assert result.error.kind == "retry"
    assert email_id in result.error.message
    assert result.error.details["email_id"] == email_id


async def test_an_unknown_folder_is_a_retry_listing_the_folders(mail: MailSetup) -> None:
    result = await _error(mail, "read_emails", {"folder": "Archive2019"})
    assert result.error is not None
    assert result.error.kind == "retry"
    assert "INBOX" in result.error.details["folders"]
    assert "Sent" in result.error.details["folders"]


async def test_send_email_files_a_copy_in_sent(mail: MailSetup) -> None:
    sent = await _ok(
        mail,
        "send_email",
        {
            "to": "Ada <ada@example.org>",
            "subject": "Hello",
            "body": "Hi Ada",
            "cc": "bob@example.org",
        },
    )
    assert sent.to == ["ada@example.org"]
    assert sent.cc == ["bob@example.org"]
    assert sent.sender == ME
    assert sent.saved_as is not None
    copy = await _ok(mail, "get_email_details", {"email_id": sent.saved_as})
    assert copy.subject == "Hello"
    assert copy.body == "Hi Ada"
    assert copy.message_id == sent.message_id
    assert not copy.unread
    if mail.smtp is not None:
        [(sender, rcpts, raw)] = mail.smtp.outbox.messages
        assert sender == ME
        assert sorted(rcpts) == ["ada@example.org", "bob@example.org"]
        assert b"Hi Ada" in raw


@pytest.mark.parametrize(
    "args",
    [
        {"to": "ada@", "subject": "x", "body": "y"},
        {"to": "not an address", "subject": "x", "body": "y"},
        {"to": "ada@example.org, @example.org", "subject": "x", "body": "y"},
        {"to": "ada@example.org", "subject": "x", "body": "y", "cc": "bob"},
        {"to": "ada@example.org", "subject": "two\nlines", "body": "y"},
        {"to": "ada@example.org", "subject": "x", "body": "y" * 200_001},
        {"to": "", "subject": "x", "body": "y"},
    ],
)
async def test_a_bad_send_is_invalid_arguments_and_nothing_is_sent(
    mail: MailSetup, args: dict[str, Any]
) -> None:
    result = await _error(mail, "send_email", args)
    assert result.error is not None
    assert result.error.kind == "invalid_arguments"
    assert result.error.details["errors"]
    sent = await _ok(mail, "read_emails", {"folder": "Sent"})
    assert sent.count == 0
    if mail.smtp is not None:
        assert mail.smtp.outbox.messages == []


async def test_weekly_digest_counts_senders_and_finds_threads_awaiting_a_reply(
    mail: MailSetup,
) -> None:
    mail.deliver(
        message("Ada <ada@example.org>", "Budget", "numbers?", date=_recent(2), msgid="<b1@x>")
    )
    mail.deliver(
        message("Ada <ada@example.org>", "Re: Budget", "any news?", date=_recent(1), msgid="<b2@x>")
    )
    mail.deliver(
        message("Bob <bob@example.org>", "Offsite", "which day?", date=_recent(1), msgid="<o1@x>")
    )
    mail.deliver(
        message(
            "News <news@example.org>",
            "Weekly letter",
            "hi all",
            to="list@example.org",
            date=_recent(1),
        ),
        seen=True,
    )
    mail.deliver(message("Old <old@example.org>", "Ancient", "hello", date=_recent(20)))
    mail.deliver(
        message(
            ME,
            "Re: Offsite",
            "Tuesday",
            to="bob@example.org",
            date=_recent(0),
            in_reply_to="<o1@x>",
        ),
        folder="Sent",
        seen=True,
    )
    digest = await _ok(mail, "summarize_weekly_emails", {})
    assert digest.total == 4
    assert digest.unread == 3
    assert digest.sent == 1
    assert [(s.sender, s.count, s.unread) for s in digest.senders] == [
        ("Ada <ada@example.org>", 2, 2),
        ("Bob <bob@example.org>", 1, 1),
        ("News <news@example.org>", 1, 0),
    ]
    assert "Ancient" not in digest.subjects
    [waiting] = digest.threads_needing_reply
    assert waiting.subject == "Re: Budget"
    assert waiting.messages == 2
    assert waiting.last_from == "Ada <ada@example.org>"


async def test_every_mail_tool_has_category_email_and_only_send_is_destructive(
    mail: MailSetup,
) -> None:
    specs = {s.name: s for s in mail.tools.specs()}
    assert set(specs) == {
        "list_unread_emails",
        "read_emails",
        "search_emails",
        "get_email_details",
        "summarize_weekly_emails",
        "send_email",
    }
    assert {s.category for s in specs.values()} == {"email"}
    assert [n for n, s in specs.items() if s.is_destructive()] == ["send_email"]
    assert all(s.summary and s.actions for s in specs.values())
    assert [n for n, s in specs.items() if s.is_write] == ["send_email"]


async def test_search_finds_words_outside_ascii_and_survives_odd_text(mail: MailSetup) -> None:
    mail.deliver(message("Zoë <zoe@example.org>", "Café menu", "Crème brûlée on Friday"))
    out = await _ok(mail, "search_emails", {"query": "brûlée"})
    assert [e.subject for e in out.emails] == ["Café menu"]
    for odd in ['"', 'from:"', "subject:(", "\\", "*", "a" * 300]:
        result = await mail.tools.call("search_emails", {"query": odd})
        assert result.ok, (odd, result.error)


async def test_raw_utf8_headers_read_as_the_sender_wrote_them(mail: MailSetup) -> None:
    raw = (
        "From: Tomás Núñez <tomas@example.org>\r\n"
        f"To: {ME}\r\n"
        "Subject: Reunión mañana\r\n"
        f"Date: {_recent()}\r\n"
        "Content-Type: text/plain; charset=utf-8\r\n"
        "Content-Transfer-Encoding: 8bit\r\n"
        "\r\n"
        "Hasta mañana.\r\n"
    ).encode()
    email_id = mail.deliver(raw)
    [summary] = (await _ok(mail, "list_unread_emails", {})).emails
    assert (summary.sender, summary.subject) == (
        "Tomás Núñez <tomas@example.org>",
        "Reunión mañana",
    )
    details = await _ok(mail, "get_email_details", {"email_id": email_id})
    assert details.body == "Hasta mañana."
    found = await _ok(mail, "search_emails", {"query": "from:Tomás"})
    assert [e.subject for e in found.emails] == ["Reunión mañana"]
