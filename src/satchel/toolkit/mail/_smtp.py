"""Sending through an SMTP server (stdlib :mod:`smtplib`), and how to reach a mail
server. Both backends use it: IMAP accounts, and a local Maildir that is given an SMTP
server to deliver through."""

from __future__ import annotations

import smtplib
import ssl
from dataclasses import dataclass, field
from email.message import EmailMessage
from typing import Literal

from satchel._errors import ToolFailed
from satchel.toolkit.mail._backend import unreachable

__all__ = ["MailServer", "submit"]


@dataclass(frozen=True, kw_only=True, slots=True)
class MailServer:
    """How to reach one IMAP or SMTP server.

    Attributes:
        host: The server's host name.
        port: Its port (IMAP: 993 with TLS, 143 without; SMTP: 465 TLS, 587 STARTTLS).
        username: The login, or ``None`` to skip logging in (SMTP only).
        password: The password (from the environment or the config file, never a tool
            argument).
        security: ``ssl`` (TLS from the first byte), ``starttls`` or ``none``.
        timeout: Seconds to wait for the server.
    """

    host: str
    port: int
    username: str | None = None
    password: str | None = field(default=None, repr=False)
    security: Literal["ssl", "starttls", "none"] = "ssl"
    timeout: float = 30.0

    @property
    def label(self) -> str:
        """``host:port``, for messages."""
        return f"{self.host}:{self.port}"


def submit(server: MailServer, message: EmailMessage) -> None:
    """Hand ``message`` to the SMTP ``server``.

    Raises:
        ToolFailed: The server refused the login or every recipient, or cannot be
            reached; nothing was sent.
    """
    context = ssl.create_default_context()
    try:
        if server.security == "ssl":
            smtp = smtplib.SMTP_SSL(
                server.host, server.port, timeout=server.timeout, context=context
            )
        else:
            smtp = smtplib.SMTP(server.host, server.port, timeout=server.timeout)
        with smtp:
            if server.security == "starttls":
                smtp.starttls(context=context)
            if server.username is not None:
                smtp.login(server.username, server.password or "")
            smtp.send_message(message)
    except smtplib.SMTPRecipientsRefused as exc:
        refused = sorted(exc.recipients)
        raise ToolFailed(
            f"The mail server refused the recipients {', '.join(refused)}; nothing was sent.",
            details={"refused": refused},
        ) from exc
    except smtplib.SMTPAuthenticationError as exc:
        raise ToolFailed(
            f"The mail server {server.label} refused the login; nothing was sent. Check "
            "the SMTP username and password in the configuration.",
            details={"server": server.label},
        ) from exc
    except (OSError, smtplib.SMTPException) as exc:
        raise unreachable(server.label, exc) from exc
