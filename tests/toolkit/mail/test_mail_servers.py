"""Mail servers that are down, refuse the login or refuse a recipient: clear structured
errors, and nothing is sent or filed."""

from __future__ import annotations

from pathlib import Path

import pytest
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import SMTP, Envelope, Session

from satchel.registry import ToolRegistry
from satchel.toolkit import ToolkitConfig
from satchel.toolkit.mail import (
    ImapSmtpBackend,
    MaildirBackend,
    MailServer,
    mail_backend,
    mail_tools,
    mail_tools_for,
)

from .conftest import ME, PASSWORD, USER, ImapServer, SmtpServer, free_port

pytestmark = pytest.mark.anyio

_SEND = {"to": "ada@example.org", "subject": "Hi", "body": "Hello"}


def _tools(backend: ImapSmtpBackend | MaildirBackend) -> ToolRegistry:
    registry = ToolRegistry()
    for tool in mail_tools_for(backend):
        registry.register(tool)
    return registry


def _imap(port: int, password: str = PASSWORD) -> MailServer:
    return MailServer(
        host="127.0.0.1", port=port, username=USER, password=password, security="none", timeout=5
    )


async def test_reading_from_an_imap_server_that_is_down_fails_naming_the_server() -> None:
    port = free_port()
    backend = ImapSmtpBackend(imap=_imap(port), smtp=None, address=ME)
    result = await _tools(backend).call("list_unread_emails", {})
    assert result.error is not None
    assert result.error.kind == "failed"
    assert f"127.0.0.1:{port}" in result.error.message
    assert result.error.details["server"] == f"127.0.0.1:{port}"


async def test_a_wrong_imap_password_fails_without_leaking_it(imap_server: ImapServer) -> None:
    backend = ImapSmtpBackend(imap=_imap(imap_server.port, "wrong-secret"), smtp=None, address=ME)
    result = await _tools(backend).call("read_emails", {})
    assert result.error is not None
    assert result.error.kind == "failed"
    assert "wrong-secret" not in repr(result.error)


async def test_without_smtp_a_send_whose_copy_cannot_be_filed_fails_instead_of_a_receipt() -> None:
    backend = ImapSmtpBackend(imap=_imap(free_port()), smtp=None, address=ME)
    result = await _tools(backend).call("send_email", _SEND)
    assert result.error is not None
    assert result.error.kind == "failed"
    assert "Nothing was sent" in result.error.message
    assert "no SMTP server" in result.error.message


async def test_without_smtp_or_a_sent_folder_nothing_pretends_to_be_sent(
    imap_server: ImapServer,
) -> None:
    backend = ImapSmtpBackend(imap=_imap(imap_server.port), smtp=None, address=ME, sent_folder=None)
    result = await _tools(backend).call("send_email", _SEND)
    assert result.error is not None
    assert result.error.kind == "failed"
    assert "Configure SMTP" in result.error.message


async def test_sending_through_an_smtp_server_that_is_down_fails_and_files_nothing(
    imap_server: ImapServer,
) -> None:
    imap_server.reset()
    smtp = MailServer(host="127.0.0.1", port=free_port(), security="none", timeout=5)
    tools = _tools(ImapSmtpBackend(imap=_imap(imap_server.port), smtp=smtp, address=ME))
    result = await tools.call("send_email", _SEND)
    assert result.error is not None
    assert result.error.kind == "failed"
    assert "Nothing was changed" in result.error.message
    sent = await tools.call("read_emails", {"folder": "Sent"})
    assert sent.ok
    assert sent.output.count == 0


class _Refuser:
    async def handle_RCPT(
        self, server: SMTP, session: Session, envelope: Envelope, address: str, options: list[str]
    ) -> str:
        return "550 no such user here"


async def test_a_recipient_the_smtp_server_refuses_is_a_failure_naming_it(
    tmp_path: Path,
) -> None:
    controller = Controller(_Refuser(), hostname="127.0.0.1", port=free_port())
    controller.start()
    try:
        smtp = MailServer(host="127.0.0.1", port=controller.port, security="none", timeout=5)
        backend = MaildirBackend(tmp_path / "mail", address=ME, smtp=smtp)
        result = await _tools(backend).call("send_email", _SEND)
    finally:
        controller.stop()
    assert result.error is not None
    assert result.error.kind == "failed"
    assert result.error.details["refused"] == ["ada@example.org"]
    assert backend.list_emails(folder="Sent") == []


async def test_a_maildir_with_smtp_delivers_and_keeps_a_copy(
    tmp_path: Path, smtp_server: SmtpServer
) -> None:
    smtp = MailServer(host="127.0.0.1", port=smtp_server.port, security="none", timeout=5)
    backend = MaildirBackend(tmp_path / "mail", address=ME, smtp=smtp)
    result = await _tools(backend).call("send_email", _SEND)
    assert result.ok, result.error
    [(sender, rcpts, _)] = smtp_server.outbox.messages
    assert (sender, rcpts) == (ME, ["ada@example.org"])
    assert [m.subject for m in backend.list_emails(folder="Sent")] == ["Hi"]


def test_with_no_mail_settings_mail_lives_in_a_maildir_in_the_data_dir(tmp_path: Path) -> None:
    config = ToolkitConfig(data_dir=tmp_path)
    backend = mail_backend(config)
    assert isinstance(backend, MaildirBackend)
    assert backend.path == tmp_path / "mail"
    assert backend.smtp is None
    assert len(mail_tools(config)) == 6


def test_imap_and_smtp_settings_choose_the_servers_with_their_credentials(tmp_path: Path) -> None:
    config = ToolkitConfig(
        data_dir=tmp_path,
        imap_host="imap.example.org",
        imap_username="ada@example.org",
        imap_password="s3cret",  # pyright: ignore[reportArgumentType]
        smtp_host="smtp.example.org",
        smtp_starttls=False,
        smtp_port=465,
    )
    backend = mail_backend(config)
    assert isinstance(backend, ImapSmtpBackend)
    assert (backend.imap.port, backend.imap.security, backend.imap.password) == (
        993,
        "ssl",
        "s3cret",
    )
    assert backend.smtp is not None
    assert (backend.smtp.port, backend.smtp.security) == (465, "ssl")
    assert backend.address == "ada@example.org"


async def test_a_sent_copy_that_cannot_be_filed_leaves_the_send_done(
    imap_server: ImapServer, smtp_server: SmtpServer
) -> None:
    smtp = MailServer(host="127.0.0.1", port=smtp_server.port, security="none", timeout=5)
    backend = ImapSmtpBackend(
        imap=_imap(imap_server.port), smtp=smtp, address=ME, sent_folder="NoSuchFolder"
    )
    result = await _tools(backend).call("send_email", _SEND)
    assert result.ok, result.error
    assert result.output.saved_as is None
    assert len(smtp_server.outbox.messages) == 1
