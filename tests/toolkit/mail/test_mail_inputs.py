"""Any text a model sends to the mail tools gets an answer of a known kind, and a send
that is refused files nothing."""

from __future__ import annotations

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
