"""Reading incoming mail: headers in any encoding, the person's own words without the
mail they quote or their signature, and no mail, however odd, that makes reading it
fail."""

from __future__ import annotations

from email.message import EmailMessage

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from satchel.channels._email._compose import new_mail, reply_subject, threaded_reply
from satchel.channels._email._parse import MAX_TEXT_CHARS, parse_mail, trim_reply
from satchel.channels._inbound import Action


@pytest.mark.parametrize(
    ("written", "meant"),
    [
        (
            "Yes, noon works.\n\nOn Mon, 23 Nov 2026, Ada wrote:\n> Lunch?\n> At noon?",
            "Yes, noon works.",
        ),
        (
            "Sure.\n\nOn Mon, 23 Nov 2026 at 09:00, Ada Lovelace\n"
            "<ada@example.org> wrote:\n> Lunch?",
            "Sure.",
        ),
        ("On Mon, Ada wrote:\n> Lunch?\n\nBelow your question: yes.", "Below your question: yes."),
        ("Fine by me.\n\n-- \nBob\nBob's Bakery, 1 Main St", "Fine by me."),
        ("Fine by me.\n--\nBob", "Fine by me."),
        ("See you then.\n\nSent from my iPhone", "See you then."),
        (
            "Done.\n\n-----Original Message-----\nFrom: Ada\nSent: Monday\nSubject: Task",
            "Done.",
        ),
        (
            "Done.\n\n________________________________\nFrom: Ada <ada@example.org>\nSent: Monday",
            "Done.",
        ),
        ("Done.\n\nFrom: Ada <ada@example.org>\nSent: Monday\nTo: agent", "Done."),
        ("> Lunch?\nYes.\n> Noon?\nNo, one.", "Yes.\nNo, one."),
        ("> only\n> quotes", "> only\n> quotes"),
        (
            "Meet me at 3.\nFrom: the kitchen, with love",
            "Meet me at 3.\nFrom: the kitchen, with love",
        ),
        ("", ""),
    ],
)
def test_trim_reply_keeps_what_the_person_wrote(written: str, meant: str) -> None:
    assert trim_reply(written) == meant


def test_encoded_words_raw_utf8_and_latin1_headers_all_read_as_text() -> None:
    raw = (
        b"From: =?iso-8859-1?q?Tom=E1s?= <Tomas@Example.ORG>\r\n"
        b"Subject: =?utf-8?b?Q2Fmw6k=?= =?utf-8?q?_au_lait?= \xc3\xa0 9h\r\n"
        b"Message-ID: <x1@example.org>\r\n"
        b"In-Reply-To: Ada's mail <x0@example.org>\r\n"
        b"References: <a@example.org>\r\n <x0@example.org>\r\n"
        b"\r\nHi\r\n"
    )
    parsed = parse_mail(raw)
    assert parsed.sender == "tomas@example.org"
    assert parsed.subject == "Café au lait à 9h"
    assert parsed.message_id == "<x1@example.org>"
    assert parsed.in_reply_to == "<x0@example.org>"
    assert parsed.references == "<a@example.org> <x0@example.org>"
    latin1 = parse_mail(b"From: a@b.org\r\nSubject: Ol\xe1\r\n\r\nx")
    assert latin1.subject == "Olá"


def test_a_body_in_its_own_charset_and_quoted_printable_is_decoded() -> None:
    msg = EmailMessage()
    msg["From"] = "ada@example.org"
    msg.set_content("Grüße aus Köln", charset="iso-8859-1", cte="quoted-printable")
    assert parse_mail(msg.as_bytes()).text == "Grüße aus Köln"


def test_an_html_only_mail_is_read_as_its_text() -> None:
    msg = EmailMessage()
    msg["From"] = "ada@example.org"
    msg.set_content(
        "<html><head><style>p{}</style></head><body><p>Hello&nbsp;there</p>"
        "<div>Second line<br>third</div><blockquote>old mail</blockquote></body></html>",
        subtype="html",
    )
    text = parse_mail(msg.as_bytes()).text
    assert text.startswith("Hello there\nSecond line\nthird")
    assert "p{}" not in text


def test_format_flowed_lines_are_joined() -> None:
    raw = (
        b"From: ada@example.org\r\nContent-Type: text/plain; charset=utf-8; format=flowed\r\n\r\n"
        b"This is one long \r\nparagraph, wrapped.\r\nNew line.\r\n"
    )
    assert parse_mail(raw).text == "This is one long paragraph, wrapped.\nNew line."


def test_text_past_the_limit_is_cut_and_says_so() -> None:
    msg = EmailMessage()
    msg["From"] = "ada@example.org"
    msg.set_content("x" * (MAX_TEXT_CHARS * 2))
    text = parse_mail(msg.as_bytes(), truncated=True).text
    assert len(text) < MAX_TEXT_CHARS + 200
    assert text.endswith("more characters were cut.]")


@pytest.mark.parametrize(
    ("subject", "answer"),
    [
        ("Lunch", "Re: Lunch"),
        ("Re: Lunch", "Re: Lunch"),
        ("RE: re:Re : Lunch", "Re: Lunch"),
        ("Re[2]: Lunch", "Re: Lunch"),
        ("AW: Mittag", "Re: Mittag"),
        ("Fwd: Lunch", "Re: Fwd: Lunch"),
        ("", "Re: your message"),
        ("Re:", "Re: your message"),
    ],
)
def test_a_reply_subject_has_one_re(subject: str, answer: str) -> None:
    assert reply_subject(subject) == answer


def test_references_keep_the_last_ids_and_end_with_the_answered_one() -> None:
    references = " ".join(f"<r{i}@example.org>" for i in range(40))
    msg = threaded_reply(
        sender="agent@example.org",
        to="ada@example.org",
        subject="x",
        text="y",
        message_id="<m@example.org>",
        references=references,
    )
    ids = str(msg["References"]).split()
    assert len(ids) == 20
    assert ids[-1] == "<m@example.org>"
    assert ids[-2] == "<r39@example.org>"


def test_a_new_mail_takes_its_subject_from_its_first_line_and_lists_its_actions() -> None:
    msg = new_mail(
        sender="agent@example.org",
        to="ada@example.org",
        text="\n  Reminder: " + "very " * 30 + "long\nsecond line",
        actions=[Action("Done", "task:done:1"), Action("Snooze", "task:snooze:1")],
    )
    assert str(msg["Subject"]).startswith("Reminder: very very")
    assert len(str(msg["Subject"])) <= 78
    assert "Reply DONE or SNOOZE." in str(msg.get_content())  # pyright: ignore


_HEADER_NAMES = st.sampled_from(
    [
        "From",
        "Subject",
        "Message-ID",
        "In-Reply-To",
        "References",
        "Content-Type",
        "Content-Transfer-Encoding",
        "Auto-Submitted",
        "Content-Disposition",
        "X-Odd",
    ]
)
_ODD_TEXT = st.text(
    st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=80
) | st.sampled_from(
    [
        "=?utf-8?q?broken",
        "=?x-unknown?q?abc?=",
        "=?utf-8?b?!!!?=",
        "multipart/mixed; boundary=",
        "text/plain; charset=no-such-charset",
        "base64",
        "<<<>>>",
        "=?utf-8?q?=FF=FE?=",
    ]
)


@settings(max_examples=300)
@given(
    headers=st.lists(st.tuples(_HEADER_NAMES, _ODD_TEXT), max_size=8),
    body=st.binary(max_size=500) | st.text(max_size=300).map(str.encode),
)
def test_no_mail_however_odd_makes_reading_it_fail(
    headers: list[tuple[str, str]], body: bytes
) -> None:
    head = b"".join(
        f"{name}: {value}".encode("utf-8", "surrogatepass")
        .replace(b"\n", b" ")
        .replace(b"\r", b" ")
        + b"\r\n"
        for name, value in headers
    )
    parsed = parse_mail(head + b"\r\n" + body)
    assert isinstance(parsed.text, str)
    assert "\n" not in parsed.subject
    assert len(parsed.text) <= MAX_TEXT_CHARS + 100


@settings(max_examples=300)
@given(st.binary(max_size=2000))
def test_no_bytes_at_all_make_reading_a_mail_fail(raw: bytes) -> None:
    assert isinstance(parse_mail(raw).subject, str)


@given(st.text(max_size=500))
def test_trimming_never_fails_and_never_leaves_nothing_of_something(text: str) -> None:
    trimmed = trim_reply(text)
    assert (trimmed == "") == (text.strip() == "")


@pytest.mark.parametrize(
    "markup",
    ["<" * 200_000, "<br" * 70_000, "<style" * 40_000, "<p>hi</p><script>" + "x" * 200_000],
)
def test_markup_built_to_be_slow_is_read_in_one_pass(markup: str) -> None:
    raw = b"From: a@example.org\r\nContent-Type: text/html\r\n\r\n" + markup.encode()
    text = parse_mail(raw).text
    assert "script" not in text
    assert "style" not in text


def test_scripts_and_styles_are_not_text_but_what_follows_them_is() -> None:
    raw = (
        b"From: a@example.org\r\nContent-Type: text/html\r\n\r\n"
        b"<STYLE>p {}</STYLE >Hello<script type='x'>alert(1)</script> there"
    )
    assert parse_mail(raw).text == "Hello there"


def test_a_mail_without_references_is_threaded_by_its_in_reply_to() -> None:
    parsed = parse_mail(b"From: a@example.org\r\nIn-Reply-To: <p@example.org>\r\n\r\nok")
    assert parsed.references == "<p@example.org>"
    msg = threaded_reply(
        sender="agent@example.org",
        to="a@example.org",
        subject="",
        text="ok",
        message_id="<m@example.org>",
        references=parsed.references,
    )
    assert str(msg["References"]).split() == ["<p@example.org>", "<m@example.org>"]
