"""Choosing the mail backend from a :class:`~satchel.toolkit.ToolkitConfig`."""

from __future__ import annotations

from satchel.toolkit._config import ToolkitConfig
from satchel.toolkit.mail._backend import MailBackend
from satchel.toolkit.mail._imap import ImapSmtpBackend
from satchel.toolkit.mail._maildir import MaildirBackend
from satchel.toolkit.mail._smtp import MailServer
from satchel.toolkit.mail._tools import mail_tools_for
from satchel.tools import BaseTool

__all__ = ["DEFAULT_ADDRESS", "mail_backend", "mail_tools"]

DEFAULT_ADDRESS = "me@localhost"
"""The sender address when the configuration names none."""
_SMTPS_PORT = 465


def _secret(value: object) -> str | None:
    get = getattr(value, "get_secret_value", None)
    return str(get()) if callable(get) else None


def _smtp(config: ToolkitConfig) -> MailServer | None:
    if config.smtp_host is None:
        return None
    port = config.smtp_port or (587 if config.smtp_starttls else _SMTPS_PORT)
    security = "starttls" if config.smtp_starttls else "ssl" if port == _SMTPS_PORT else "none"
    return MailServer(
        host=config.smtp_host,
        port=port,
        username=config.smtp_username,
        password=_secret(config.smtp_password),
        security=security,
    )


def mail_backend(config: ToolkitConfig) -> MailBackend:
    """The backend ``config`` describes: IMAP when ``imap_host`` is set, else the
    Maildir ``<data_dir>/mail``; either sends through SMTP when ``smtp_host`` is set and
    otherwise only files sent mail in the Sent folder.

    SMTP security follows ``smtp_starttls`` (default: STARTTLS on port 587); with it off,
    port 465 means TLS from the first byte and any other port plain text.
    """
    address = config.mail_from or (
        config.imap_username
        if config.imap_username is not None and "@" in config.imap_username
        else DEFAULT_ADDRESS
    )
    smtp = _smtp(config)
    if config.imap_host is None:
        return MaildirBackend(config.data_dir / "mail", address=address, smtp=smtp)
    imap = MailServer(
        host=config.imap_host,
        port=config.imap_port or (993 if config.imap_ssl else 143),
        username=config.imap_username,
        password=_secret(config.imap_password),
        security="ssl" if config.imap_ssl else "none",
    )
    return ImapSmtpBackend(imap=imap, smtp=smtp, address=address)


def mail_tools(config: ToolkitConfig) -> list[BaseTool]:
    """The six mail tools on the backend ``config`` describes (:func:`mail_backend`).

    Example:
        >>> tools = mail_tools(ToolkitConfig.load())
        >>> [t.spec.name for t in tools][:2]
        ['list_unread_emails', 'read_emails']
    """
    return mail_tools_for(mail_backend(config))
