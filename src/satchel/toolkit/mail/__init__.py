"""Mail tools on open standards: a local Maildir by default, IMAP and SMTP for real
accounts.

The tools keep AgenticPal's names and parameters: ``list_unread_emails``,
``read_emails``, ``search_emails``, ``get_email_details``, ``summarize_weekly_emails``
and ``send_email`` (destructive: ``satchel serve`` and the meta-tools hold each send for
a human's approval). Credentials come from the configuration, never from tool arguments.

Example:
    >>> backend = MaildirBackend(Path("~/mail").expanduser(), address="ada@example.org")
    >>> registry = ToolRegistry()
    >>> for t in mail_tools_for(backend):
    ...     registry.register(t)
"""

from satchel.toolkit.mail._backend import MailBackend
from satchel.toolkit.mail._config import DEFAULT_ADDRESS, mail_backend, mail_tools
from satchel.toolkit.mail._digest import build_digest, thread_key
from satchel.toolkit.mail._imap import ImapSmtpBackend
from satchel.toolkit.mail._maildir import MaildirBackend
from satchel.toolkit.mail._message import MailQuery
from satchel.toolkit.mail._models import (
    DigestSender,
    DigestThread,
    EmailDetails,
    EmailSummary,
    SentEmail,
    WeeklyDigest,
)
from satchel.toolkit.mail._smtp import MailServer
from satchel.toolkit.mail._tools import EmailList, mail_tools_for

__all__ = [
    "DEFAULT_ADDRESS",
    "DigestSender",
    "DigestThread",
    "EmailDetails",
    "EmailList",
    "EmailSummary",
    "ImapSmtpBackend",
    "MailBackend",
    "MailQuery",
    "MailServer",
    "MaildirBackend",
    "SentEmail",
    "WeeklyDigest",
    "build_digest",
    "mail_backend",
    "mail_tools",
    "mail_tools_for",
    "thread_key",
]
