"""Real mail servers for the mail tests: pymap (IMAP, in-memory) in a subprocess, and
aiosmtpd (SMTP) in a thread, plus the two backends under one contract."""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import pytest
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import SMTP, Envelope, Session
from imapclient import IMAPClient

from satchel.registry import ToolRegistry
from satchel.toolkit.mail import (
    ImapSmtpBackend,
    MailBackend,
    MaildirBackend,
    MailServer,
    mail_tools_for,
)

ME = "me@example.org"
USER, PASSWORD = "demouser", "demopass"
_SERVER_SCRIPT = Path(__file__).with_name("pymap_server.py")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class ImapServer:
    port: int
    process: subprocess.Popen[str]

    def client(self) -> IMAPClient:
        client = IMAPClient("127.0.0.1", port=self.port, ssl=False, timeout=10)
        client.login(USER, PASSWORD)
        return client

    def reset(self) -> None:
        """Empty INBOX and Sent (creating Sent when missing)."""
        with self.client() as client:
            names = {f[2] for f in client.list_folders()}
            if "Sent" not in names:
                client.create_folder("Sent")
            for folder in ("INBOX", "Sent"):
                client.select_folder(folder)
                uids = client.search(["ALL"])
                if uids:
                    client.delete_messages(uids)
                    client.expunge()


def start_pymap(port: int) -> subprocess.Popen[str]:
    process = subprocess.Popen(
        [sys.executable, str(_SERVER_SCRIPT), "--port", str(port), "dict"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert process.stdout is not None
    line = process.stdout.readline()  # blocks until pymap listens (pytest-timeout bounds it)
    if line.strip() != "READY":
        process.kill()
        raise RuntimeError(f"pymap did not start: {line!r}")
    return process


@pytest.fixture(scope="session")
def imap_server() -> Iterator[ImapServer]:
    port = free_port()
    process = start_pymap(port)
    try:
        yield ImapServer(port=port, process=process)
    finally:
        process.terminate()
        process.wait(timeout=10)


@dataclass
class Outbox:
    """What the SMTP server received."""

    messages: list[tuple[str, list[str], bytes]] = field(
        default_factory=list[tuple[str, list[str], bytes]]
    )

    async def handle_DATA(self, server: SMTP, session: Session, envelope: Envelope) -> str:
        content = envelope.original_content or b""
        self.messages.append((str(envelope.mail_from), list(envelope.rcpt_tos), content))
        return "250 OK"


@dataclass
class SmtpServer:
    port: int
    outbox: Outbox


@pytest.fixture
def smtp_server() -> Iterator[SmtpServer]:
    outbox = Outbox()
    controller = Controller(outbox, hostname="127.0.0.1", port=free_port())
    controller.start()
    try:
        yield SmtpServer(port=controller.port, outbox=outbox)
    finally:
        controller.stop()


@dataclass
class MailSetup:
    """A backend under test, its tools, and a way to deliver mail into it."""

    kind: str
    backend: MailBackend
    tools: ToolRegistry
    deliver: Callable[..., str]
    smtp: SmtpServer | None = None


def message(
    sender: str,
    subject: str,
    body: str,
    *,
    to: str = ME,
    date: str = "Mon, 23 Nov 2026 09:00:00 +0000",
    msgid: str | None = None,
    cc: str | None = None,
    in_reply_to: str | None = None,
    **extra: Any,
) -> EmailMessage:
    msg = EmailMessage()
    msg["From"] = sender
    msg["To"] = to
    if cc:
        msg["Cc"] = cc
    msg["Subject"] = subject
    msg["Date"] = date
    if msgid:
        msg["Message-ID"] = msgid
    if in_reply_to:
        msg["In-Reply-To"] = in_reply_to
    msg.set_content(body)
    return msg


def _registry(backend: MailBackend) -> ToolRegistry:
    registry = ToolRegistry()
    for tool in mail_tools_for(backend):
        registry.register(tool)
    return registry


@pytest.fixture(params=["maildir", "imap"])
def mail(
    request: pytest.FixtureRequest, tmp_path: Path, imap_server: ImapServer
) -> Iterator[MailSetup]:
    if request.param == "maildir":
        maildir = MaildirBackend(tmp_path / "mail", address=ME)

        def deliver_local(
            msg: EmailMessage | bytes, *, seen: bool = False, folder: str = "INBOX"
        ) -> str:
            return maildir.add(msg, folder=folder, seen=seen)

        yield MailSetup("maildir", maildir, _registry(maildir), deliver_local)
        return
    imap_server.reset()
    smtp: SmtpServer = request.getfixturevalue("smtp_server")
    backend = ImapSmtpBackend(
        imap=MailServer(
            host="127.0.0.1",
            port=imap_server.port,
            username=USER,
            password=PASSWORD,
            security="none",
            timeout=10,
        ),
        smtp=MailServer(host="127.0.0.1", port=smtp.port, security="none", timeout=10),
        address=ME,
    )

    def deliver_imap(
        msg: EmailMessage | bytes, *, seen: bool = False, folder: str = "INBOX"
    ) -> str:
        raw = msg if isinstance(msg, bytes) else msg.as_bytes()
        with imap_server.client() as client:
            reply = client.append(folder, raw, flags=[b"\\Seen"] if seen else [])
        return f"{folder}:{reply.split()[2].rstrip(b']').decode()}"

    yield MailSetup("imap", backend, _registry(backend), deliver_imap, smtp)
