"""The records the mail tools return: summaries, full messages, a sent receipt and the
weekly digest."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "DigestSender",
    "DigestThread",
    "EmailDetails",
    "EmailSummary",
    "SentEmail",
    "WeeklyDigest",
]


class EmailSummary(BaseModel):
    """One message as a list shows it: who, what, when, and a short preview."""

    model_config = ConfigDict(frozen=True)

    email_id: str = Field(description="The id to pass to get_email_details.")
    folder: str = Field(description="The folder holding the message (INBOX, Sent, ...).")
    sender: str = Field(description="The From header, as written.")
    to: list[str] = Field(default_factory=list[str], description="The To addresses.")
    subject: str = Field(description="The subject line ('' when there is none).")
    date: datetime | None = Field(description="The Date header, time-zone aware.")
    snippet: str = Field(description="The first characters of the text body.")
    unread: bool = Field(description="Not yet marked as seen.")
    message_id: str | None = Field(default=None, description="The Message-ID header.")
    in_reply_to: str | None = Field(default=None, description="The In-Reply-To header.")


class EmailDetails(EmailSummary):
    """One message in full: every summary field plus Cc, the text body and the names of
    its attachments."""

    cc: list[str] = Field(default_factory=list[str], description="The Cc addresses.")
    body: str = Field(description="The plain-text body (HTML reduced to text).")
    references: list[str] = Field(
        default_factory=list[str], description="The Message-IDs of the thread so far."
    )
    attachments: list[str] = Field(
        default_factory=list[str], description="File names of the attachments."
    )


class SentEmail(BaseModel):
    """What ``send_email`` sent."""

    message_id: str = Field(description="The new message's Message-ID.")
    sender: str
    to: list[str]
    cc: list[str] = Field(default_factory=list[str])
    subject: str
    saved_as: str | None = Field(
        default=None, description="The email_id of the copy kept in the Sent folder."
    )


class DigestSender(BaseModel):
    """How many of the week's messages one sender wrote."""

    sender: str
    count: int
    unread: int


class DigestThread(BaseModel):
    """A conversation whose last message came from someone else and has no reply yet."""

    subject: str
    last_from: str
    last_date: datetime | None
    messages: int
    email_id: str = Field(description="The thread's latest message (for get_email_details).")


class WeeklyDigest(BaseModel):
    """A digest of the messages received over the last days, built without a model."""

    since: datetime
    until: datetime
    total: int = Field(description="Messages received in the period.")
    unread: int
    senders: list[DigestSender] = Field(description="Senders, most messages first.")
    subjects: list[str] = Field(description="Subjects, newest first (repeats once).")
    threads_needing_reply: list[DigestThread]
    sent: int = Field(description="Messages you sent in the period.")
