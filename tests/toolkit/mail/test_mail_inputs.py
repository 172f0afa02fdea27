"""Any text a model sends to the mail tools gets an answer of a known kind, and a send
that is refused files nothing."""

from __future__ import annotations

import tempfile
from pathlib import Path

import anyio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from satchel.registry import ToolRegistry
from satchel.toolkit.mail import ImapSmtpBackend, MaildirBackend, MailServer, mail_tools_for

from .conftest import ME, PASSWORD, USER, ImapServer


def test_a_password_never_shows_in_a_server_repr() -> None:
    server = MailServer(host="imap.example.org", port=993, username="ada", password="hunter2")
    assert "hunter2" not in repr(server)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(to=st.text(max_size=60), query=st.text(max_size=60), email_id=st.text(max_size=40))
def test_any_text_gets_a_result_or_a_structured_error(
    tmp_path: Path, to: str, query: str, email_id: str
) -> None:
    backend = MaildirBackend(tmp_path / "mail", address=ME)
    registry = ToolRegistry()
    for tool in mail_tools_for(backend):
        registry.register(tool)

    async def run() -> None:
        before = len(backend.list_emails(folder="Sent", limit=1000))
        sent = await registry.call("send_email", {"to": to, "subject": "s", "body": "b"})
        after = len(backend.list_emails(folder="Sent", limit=1000))
        if sent.ok:
            assert after == before + 1
            assert "@" in to
        else:
            assert sent.error is not None
            assert sent.error.kind == "invalid_arguments"
            assert after == before
        found = await registry.call("search_emails", {"query": query})
        assert found.ok or (found.error is not None and found.error.kind == "invalid_arguments")
        details = await registry.call("get_email_details", {"email_id": email_id})
        assert details.error is not None
        assert details.error.kind in {"retry", "invalid_arguments"}

    anyio.run(run)


@settings(max_examples=40, deadline=None)
@given(query=st.text(max_size=40))
def test_any_search_text_on_a_real_imap_server_gets_a_result(
    imap_server: ImapServer, query: str
) -> None:
    backend = ImapSmtpBackend(
        imap=MailServer(
            host="127.0.0.1",
            port=imap_server.port,
            username=USER,
            password=PASSWORD,
            security="none",
            timeout=10,
        ),
        smtp=None,
        address=ME,
    )
    registry = ToolRegistry()
    for tool in mail_tools_for(backend):
        registry.register(tool)

    async def run() -> None:
        found = await registry.call("search_emails", {"query": query})
        assert found.ok or (found.error is not None and found.error.kind == "invalid_arguments"), (
            found.error
        )

    anyio.run(run)


@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(subject=st.text(max_size=40))
def test_any_subject_is_sent_or_refused_as_invalid_arguments(tmp_path: Path, subject: str) -> None:
    backend = MaildirBackend(tmp_path / "mail", address=ME)
    registry = ToolRegistry()
    for tool in mail_tools_for(backend):
        registry.register(tool)

    async def run() -> None:
        before = len(backend.list_emails(folder="Sent", limit=1000))
        sent = await registry.call(
            "send_email", {"to": "bo@example.org", "subject": subject, "body": "b"}
        )
        after = len(backend.list_emails(folder="Sent", limit=1000))
        if sent.ok:
            assert after == before + 1
        else:
            assert sent.error is not None
            assert sent.error.kind == "invalid_arguments", sent.error
            assert after == before

    anyio.run(run)


def test_a_subject_with_a_unicode_line_separator_is_invalid_arguments(tmp_path: Path) -> None:
    backend = MaildirBackend(tmp_path / "mail", address=ME)
    registry = ToolRegistry()
    for tool in mail_tools_for(backend):
        registry.register(tool)

    for subject in ("Hi\u2028Bcc: eve@example.org", "Hi\x85there", "a\u2029b", "a\x0bb"):
        sent = anyio.run(
            lambda s=subject: registry.call(
                "send_email", {"to": "bo@example.org", "subject": s, "body": "b"}
            )
        )
        assert sent.error is not None
        assert sent.error.kind == "invalid_arguments", subject
        assert "one line" in sent.error.message
    assert backend.list_emails(folder="Sent", limit=10) == []


def test_an_address_the_header_parser_rejects_is_invalid_arguments(tmp_path: Path) -> None:
    """``b@x..y`` passed the first check and made the header parser raise
    ``HeaderParseError`` (no ValueError): an ``internal`` result (found by the fuzz soak)."""
    backend = MaildirBackend(tmp_path / "mail", address=ME)
    registry = ToolRegistry()
    for tool in mail_tools_for(backend):
        registry.register(tool)

    for to in ("b@x..y", "a@..-a\u4e2d.", '"a"@\u4e2d.', "bo@example.org, c@d..e"):
        sent = anyio.run(
            lambda t=to: registry.call("send_email", {"to": t, "subject": "Hi", "body": "b"})
        )
        assert sent.error is not None
        assert sent.error.kind == "invalid_arguments", (to, sent.error)
        assert "is not an email address" in sent.error.message
    assert backend.list_emails(folder="Sent", limit=10) == []


@settings(max_examples=150, deadline=None)
@given(to=st.text(alphabet='ab.@-\u4e2d" ,', max_size=20))
def test_any_recipient_text_is_sent_or_refused_as_invalid_arguments(to: str) -> None:
    with tempfile.TemporaryDirectory() as folder:
        backend = MaildirBackend(Path(folder) / "mail", address=ME)
        registry = ToolRegistry()
        for tool in mail_tools_for(backend):
            registry.register(tool)
        sent = anyio.run(
            lambda: registry.call("send_email", {"to": to, "subject": "Hi", "body": "b"})
        )
        assert sent.ok or (sent.error is not None and sent.error.kind == "invalid_arguments"), (
            to,
            sent.error,
        )
