"""The ``[email]`` section of the channels file: the mailbox a person writes to the
agent at, the servers it is read and answered through, and who may write."""

from __future__ import annotations

import re
from typing import Annotated, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator, model_validator

__all__ = ["EmailConfig", "Security"]

Security = Literal["ssl", "starttls", "none"]
"""How a mail connection is protected: TLS from the first byte, STARTTLS, or not at all
(a server on this machine)."""

_ADDRESS = re.compile(r"^[^@\s<>(),;:\"]+@[^@\s<>(),;:\"]+\.[^@\s<>(),;:\"]+$")
_IMAP_PORTS = {"ssl": 993, "starttls": 143, "none": 143}
_SMTP_PORTS = {"ssl": 465, "starttls": 587, "none": 25}

Host = Annotated[str, Field(min_length=1, max_length=253, pattern=r"^[A-Za-z0-9_.:\[\]-]+$")]
Port = Annotated[int, Field(ge=1, le=65_535)]


def _address(value: str) -> str:
    value = value.strip()
    if not _ADDRESS.match(value):
        raise ValueError(f"{value[:100]!r} is not an email address (expected name@example.org)")
    return value


class EmailConfig(BaseModel):
    """The mailbox a person writes to the agent at (the ``[email]`` section).

    New mail in ``mailbox`` is read over IMAP; the agent answers over SMTP, from
    ``address``, threaded under the mail it answers. Mail from an address not in
    ``allowed_senders`` is refused (and logged) without an answer.

    Attributes:
        imap_host: The IMAP server.
        imap_port: Its port (default 993 with ``ssl``, else 143).
        imap_tls: ``ssl`` (default), ``starttls`` or ``none``.
        smtp_host: The SMTP server the answers go out through.
        smtp_port: Its port (default 465 with ``ssl``, 587 with ``starttls``, else 25).
        smtp_tls: ``ssl`` (default), ``starttls`` or ``none``.
        username: The login on both servers.
        password: Its password (default ``$SATCHEL_EMAIL_PASSWORD``).
        smtp_login: Log in to the SMTP server too (off for a local relay that takes
            mail without a login).
        address: The agent's own address, the From of its answers (default
            ``username`` when that is an address).
        mailbox: The IMAP folder new mail is read from.
        allowed_senders: The addresses that may talk to the agent (case does not matter).
        notify_address: Where reminders, nudges and consent requests go, if anywhere.
        poll_seconds: How often the mailbox is checked for new mail.
        timeout: Seconds to wait for a server.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    imap_host: Host
    imap_port: Port | None = None
    imap_tls: Security = "ssl"
    smtp_host: Host
    smtp_port: Port | None = None
    smtp_tls: Security = "ssl"
    username: str = Field(min_length=1, max_length=320)
    password: SecretStr = Field(min_length=1)
    smtp_login: bool = True
    address: str | None = None
    mailbox: str = Field(default="INBOX", min_length=1, max_length=1000)
    allowed_senders: list[str] = Field(default=[], max_length=10_000)
    notify_address: str | None = None
    poll_seconds: float = Field(default=5.0, ge=0.1, le=3600)
    timeout: float = Field(default=30.0, gt=0, le=600)

    @field_validator("address", "notify_address")
    @classmethod
    def _one_address(cls, value: str | None) -> str | None:
        return None if value is None else _address(value)

    @field_validator("allowed_senders")
    @classmethod
    def _addresses(cls, value: list[str]) -> list[str]:
        return [_address(v) for v in value]

    @model_validator(mode="after")
    def _own_address(self) -> Self:
        if self.address is None and not _ADDRESS.match(self.username):
            raise ValueError(
                "address is required when username is not an email address (it is the "
                "From of the agent's answers)"
            )
        return self

    @property
    def sender(self) -> str:
        """The agent's own address: ``address``, else ``username``."""
        return self.address or self.username

    @property
    def imap_port_or_default(self) -> int:
        """``imap_port``, or the usual port for ``imap_tls``."""
        return self.imap_port or _IMAP_PORTS[self.imap_tls]

    @property
    def smtp_port_or_default(self) -> int:
        """``smtp_port``, or the usual port for ``smtp_tls``."""
        return self.smtp_port or _SMTP_PORTS[self.smtp_tls]
