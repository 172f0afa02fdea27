"""What the email channel's tests share: the real pymap and aiosmtpd servers of the mail
toolkit's tests (their fixtures), a channel configured for them, mail to deliver, and a
cursor store."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from email.message import EmailMessage
from typing import Any

import pytest
from pydantic import SecretStr

from satchel.channels import EmailChannel, EmailConfig
from toolkit.mail.conftest import (  # the mail tests' servers
    PASSWORD,
    USER,
    ImapServer,
    SmtpServer,
    free_port,
    imap_server,  # noqa: F401  (a fixture)
    smtp_server,  # noqa: F401  (a fixture)
    start_pymap,
)

AGENT = "agent@example.org"
ADA = "ada@example.org"
STRANGER = "mallory@example.net"


def email_config(imap_port: int, smtp_port: int, **changes: Any) -> EmailConfig:
    """The channel's section for the local servers (no TLS, no SMTP login)."""
    settings: dict[str, Any] = {
        "imap_host": "127.0.0.1",
        "imap_port": imap_port,
        "imap_tls": "none",
        "smtp_host": "127.0.0.1",
        "smtp_port": smtp_port,
        "smtp_tls": "none",
        "smtp_login": False,
        "username": USER,
        "password": SecretStr(PASSWORD),
        "address": AGENT,
        "allowed_senders": ["Ada@Example.org"],
        "notify_address": ADA,
        "poll_seconds": 0.1,
        "timeout": 10,
    }
    settings.update(changes)
    return EmailConfig.model_validate(settings)


@dataclass
class MemoryCursors:
    """A :class:`~satchel.channels.CursorStore` in a dict (what outlives a channel
    object here, as the host's database does across restarts)."""

    values: dict[str, str] = field(default_factory=dict[str, str])

    async def get(self, key: str) -> str | None:
        return self.values.get(key)

    async def set(self, key: str, value: str) -> None:
        self.values[key] = value


def mail(
    sender: str = ADA,
    subject: str = "Lunch",
    body: str = "Shall we have lunch at noon?",
    *,
    msgid: str | None = "<m1@example.org>",
    **headers: str,
) -> EmailMessage:
    """A plain-text mail to the agent."""
    msg = EmailMessage()
    msg["From"] = f"Ada Lovelace <{sender}>" if "<" not in sender else sender
    msg["To"] = AGENT
    msg["Subject"] = subject
    msg["Date"] = "Mon, 23 Nov 2026 09:00:00 +0000"
    if msgid:
        msg["Message-ID"] = msgid
    for name, value in headers.items():
        msg[name.replace("_", "-")] = value
    msg.set_content(body)
    return msg


def deliver(server: ImapServer, message: EmailMessage | bytes, *, seen: bool = False) -> None:
    """Put ``message`` in the server's INBOX, as an SMTP server delivering it would."""
    raw = message if isinstance(message, bytes) else message.as_bytes()
    with server.client() as client:
        client.append("INBOX", raw, flags=[b"\\Seen"] if seen else [])


async def fetch_all(channel: EmailChannel) -> list[Any]:
    """One fetch (it waits ``poll_seconds`` when nothing is new)."""
    return list(await channel.fetch())


@pytest.fixture
def servers(request: pytest.FixtureRequest) -> tuple[ImapServer, SmtpServer]:
    """The session's pymap, emptied, and a fresh aiosmtpd."""
    imap: ImapServer = request.getfixturevalue("imap_server")
    imap.reset()
    return imap, request.getfixturevalue("smtp_server")


@pytest.fixture
def own_pymap() -> Iterator[tuple[int, list[subprocess.Popen[str]]]]:
    """A pymap server of the test's own, which the test may stop and start again on the
    same port (each start is appended to the list)."""
    port = free_port()
    processes = [start_pymap(port)]
    try:
        yield port, processes
    finally:
        for process in processes:
            process.terminate()
            process.wait(timeout=10)
