"""The mail tools, with AgenticPal's names and parameters, on a :class:`MailBackend`."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any, cast

from pydantic import BaseModel, ConfigDict, Field, field_validator

from satchel._errors import InvalidInputError
from satchel.toolkit.mail._backend import MailBackend
from satchel.toolkit.mail._digest import build_digest
from satchel.toolkit.mail._message import MailQuery, build_message, check_addresses
from satchel.toolkit.mail._models import EmailDetails, EmailSummary, SentEmail, WeeklyDigest
from satchel.tools import BaseTool, Tool, ToolContext

__all__ = [
    "EmailList",
    "GetEmailDetails",
    "GetEmailDetailsIn",
    "ListUnreadEmails",
    "ListUnreadIn",
    "ReadEmails",
    "ReadEmailsIn",
    "SearchEmails",
    "SearchEmailsIn",
    "SendEmail",
    "SendEmailIn",
    "SummarizeWeeklyEmails",
    "SummarizeWeeklyIn",
    "mail_tools_for",
]

MAX_BODY_CHARS = 200_000
"""The longest body ``send_email`` accepts."""
_CATEGORY = "email"
_MAX_RESULTS = Field(default=10, ge=1, le=100, description="At most this many emails (1-100).")
_FOLDER = Field(default="INBOX", min_length=1, description="The folder (INBOX, Sent, ...).")


class _In(BaseModel):
    model_config = ConfigDict(extra="forbid")


class EmailList(BaseModel):
    """Emails, newest first."""

    count: int
    emails: list[EmailSummary]


class _MailTool:
    """The backend every mail tool holds."""

    def __init__(self, backend: MailBackend) -> None:
        self.backend = backend


class ListUnreadIn(_In):
    """Input of ``list_unread_emails``."""

    max_results: int = _MAX_RESULTS
    folder: str = _FOLDER


class ListUnreadEmails(_MailTool, Tool[ListUnreadIn, EmailList]):
    """List unread emails, newest first: sender, subject, date, a preview and the
    email_id to read one in full with get_email_details. Nothing is marked as read."""

    name = "list_unread_emails"
    summary = "List unread emails in the inbox, newest first."
    category = _CATEGORY
    actions = ("read", "list")
    read_only = True
    idempotent = True

    def execute(self, params: ListUnreadIn, ctx: ToolContext) -> EmailList:
        """List unread mail."""
        found = self.backend.list_emails(
            folder=params.folder, unread_only=True, limit=params.max_results
        )
        return EmailList(count=len(found), emails=found)


class ReadEmailsIn(_In):
    """Input of ``read_emails``."""

    max_results: int = _MAX_RESULTS
    folder: str = _FOLDER
    unread_only: bool = Field(default=False, description="Only messages not read yet.")


class ReadEmails(_MailTool, Tool[ReadEmailsIn, EmailList]):
    """Read the latest emails of a folder (read or not), newest first, with previews.
    Use get_email_details for a message's full text."""

    name = "read_emails"
    summary = "Read the most recent emails of the inbox or another folder."
    category = _CATEGORY
    actions = ("read", "list")
    read_only = True
    idempotent = True

    def execute(self, params: ReadEmailsIn, ctx: ToolContext) -> EmailList:
        """List recent mail."""
        found = self.backend.list_emails(
            folder=params.folder, unread_only=params.unread_only, limit=params.max_results
        )
        return EmailList(count=len(found), emails=found)


class SearchEmailsIn(_In):
    """Input of ``search_emails``."""

    query: str = Field(
        min_length=1,
        description="Words to find (all must match), optionally with from:, to:, cc: or "
        "subject: terms, e.g. 'from:ada subject:\"lunch\" friday'.",
    )
    max_results: int = _MAX_RESULTS
    folder: str = _FOLDER
    days: int | None = Field(
        default=None, ge=1, le=3650, description="Only emails of the last this many days."
    )


class SearchEmails(_MailTool, Tool[SearchEmailsIn, EmailList]):
    """Search emails by words in the sender, recipients, subject and body, with optional
    from:/to:/cc:/subject: terms and a number of days back. Newest first."""

    name = "search_emails"
    summary = "Find emails from someone or about a topic: sender, subject, words."
    category = _CATEGORY
    actions = ("read", "search")
    read_only = True
    idempotent = True

    def execute(self, params: SearchEmailsIn, ctx: ToolContext) -> EmailList:
        """Search mail."""
        since = None if params.days is None else datetime.now(UTC) - timedelta(days=params.days)
        found = self.backend.list_emails(
            folder=params.folder,
            query=MailQuery.parse(params.query),
            since=since,
            limit=params.max_results,
        )
        return EmailList(count=len(found), emails=found)


class GetEmailDetailsIn(_In):
    """Input of ``get_email_details``."""

    email_id: str = Field(min_length=1, description="The email_id a list or search gave.")


class GetEmailDetails(_MailTool, Tool[GetEmailDetailsIn, EmailDetails]):
    """Get one email in full: headers, Cc, the text body and attachment names. Does not
    mark it as read."""

    name = "get_email_details"
    summary = "Open one email in full: its whole text, recipients and attachments."
    category = _CATEGORY
    actions = ("read",)
    read_only = True
    idempotent = True

    def execute(self, params: GetEmailDetailsIn, ctx: ToolContext) -> EmailDetails:
        """Read one message."""
        return self.backend.get_email(params.email_id)


class SummarizeWeeklyIn(_In):
    """Input of ``summarize_weekly_emails``."""

    days: int = Field(default=7, ge=1, le=31, description="How many days back (default 7).")
    max_emails: int = Field(
        default=500, ge=1, le=5000, description="Look at no more than this many emails."
    )


class SummarizeWeeklyEmails(_MailTool, Tool[SummarizeWeeklyIn, WeeklyDigest]):
    """Digest the week's email: how many arrived and are unread, who wrote most, the
    subjects, and the threads still waiting for your reply."""

    name = "summarize_weekly_emails"
    summary = "Digest of recent inbox mail: who wrote, subjects, threads awaiting your reply."
    category = _CATEGORY
    actions = ("read", "summarize")
    read_only = True
    idempotent = True

    def execute(self, params: SummarizeWeeklyIn, ctx: ToolContext) -> WeeklyDigest:
        """Build the digest."""
        until = datetime.now(UTC)
        since = until - timedelta(days=params.days)
        received = self.backend.list_emails(since=since, limit=params.max_emails)
        sent: list[EmailSummary] = []
        if self.backend.sent_folder is not None:
            sent = self.backend.list_emails(
                folder=self.backend.sent_folder, since=since, limit=params.max_emails
            )
        return build_digest(received, sent, address=self.backend.address, since=since, until=until)


_LINE_BREAKS = frozenset("\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029")
"""What ``str.splitlines`` breaks on, and so what a mail header may not hold."""


class SendEmailIn(_In):
    """Input of ``send_email``."""

    to: str = Field(min_length=1, description="Recipient address(es), comma-separated.")
    subject: str = Field(max_length=998, description="The subject line.")
    body: str = Field(max_length=MAX_BODY_CHARS, description="The plain-text body.")
    cc: str | None = Field(default=None, description="Cc address(es), comma-separated.")

    @field_validator("to", "cc", mode="before")
    @classmethod
    def _joined(cls, value: Any) -> Any:
        """AgenticPal's ``send_email`` (seed 004) takes ``to`` and ``cc`` as lists of
        addresses: they are read as the comma-separated text the schema shows."""
        if isinstance(value, list):
            items = cast(list[object], value)
            if all(isinstance(v, str) for v in items):
                return ", ".join(cast(list[str], items))
        return cast(Any, value)

    @field_validator("to", "cc")
    @classmethod
    def _addresses(cls, value: str | None) -> str | None:
        if value is not None:
            check_addresses(value)
        return value

    @field_validator("subject")
    @classmethod
    def _one_line(cls, value: str) -> str:
        if any(char in _LINE_BREAKS for char in value):
            raise InvalidInputError(
                "the subject must be one line (no line or paragraph separators)"
            )
        return value


class SendEmail(_MailTool, Tool[SendEmailIn, SentEmail]):
    """Send a plain-text email from the user's address. A human approves each send
    first; a copy is kept in the Sent folder."""

    name = "send_email"
    summary = "Send an email (to, subject, body, cc); needs the user's approval."
    usage_rule = "Show the user the recipients and text of an email before sending it."
    category = _CATEGORY
    actions = ("send", "write")
    read_only = False
    destructive = True
    idempotent = False
    open_world = True

    def execute(self, params: SendEmailIn, ctx: ToolContext) -> SentEmail:
        """Send the message."""
        to = check_addresses(params.to)
        cc = check_addresses(params.cc) if params.cc else []
        message = build_message(self.backend.address, to, params.subject, params.body, cc)
        return self.backend.send_email(message)


def mail_tools_for(backend: MailBackend) -> list[BaseTool]:
    """The six mail tools on ``backend``.

    Example:
        >>> for t in mail_tools_for(MaildirBackend(path, address="ada@example.org")):
        ...     registry.register(t)
    """
    return [
        ListUnreadEmails(backend),
        ReadEmails(backend),
        SearchEmails(backend),
        GetEmailDetails(backend),
        SummarizeWeeklyEmails(backend),
        SendEmail(backend),
    ]
