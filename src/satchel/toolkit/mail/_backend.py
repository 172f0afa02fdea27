"""The mail backend protocol the tools run on, and the errors both backends share."""

from __future__ import annotations

from datetime import datetime
from email.message import EmailMessage
from typing import Protocol, runtime_checkable

from satchel._errors import ToolFailed, ToolRetry
from satchel.toolkit.mail._message import MailQuery
from satchel.toolkit.mail._models import EmailDetails, EmailSummary, SentEmail

__all__ = ["MailBackend", "split_email_id", "unknown_email", "unreachable"]


@runtime_checkable
class MailBackend(Protocol):
    """Where mail is read from and sent through. Methods block (they run in a worker
    thread under the tools) and must be safe to call from several threads at once (the
    Maildir backend takes a lock; the IMAP backend opens a connection per call).

    ``email_id`` values are ``"<folder>:<key>"``: a backend gives them out and takes them
    back, and nobody else needs to look inside.
    """

    @property
    def address(self) -> str:
        """The user's own address: the From of what is sent, and how the digest tells
        the user's messages from others'."""
        ...

    @property
    def sent_folder(self) -> str | None:
        """The folder sent mail is filed in, or ``None`` when the backend keeps none."""
        ...

    def list_emails(
        self,
        *,
        folder: str = "INBOX",
        unread_only: bool = False,
        since: datetime | None = None,
        query: MailQuery | None = None,
        limit: int = 10,
    ) -> list[EmailSummary]:
        """Messages of ``folder``, newest first, at most ``limit``.

        Raises:
            ToolRetry: No such folder.
            ToolFailed: The server cannot be reached or refused the login.
        """
        ...

    def get_email(self, email_id: str) -> EmailDetails:
        """One message in full; reading it does not mark it as seen.

        Raises:
            ToolRetry: No message has that id.
        """
        ...

    def send_email(self, message: EmailMessage) -> SentEmail:
        """Send ``message`` (its From, To, Cc and Message-ID set) and keep a copy in the
        Sent folder where the backend has one.

        Raises:
            ToolFailed: The message could not be handed over; nothing was sent.
        """
        ...

    def close(self) -> None:
        """Release connections (a backend may reconnect on the next call)."""
        ...


def split_email_id(email_id: str) -> tuple[str, str]:
    """``(folder, key)`` of an id a backend gave out.

    Raises:
        ToolRetry: The id does not have the ``folder:key`` shape.
    """
    folder, sep, key = email_id.rpartition(":")
    if not sep or not folder or not key:
        raise unknown_email(email_id)
    return folder, key


def unknown_email(email_id: str) -> ToolRetry:
    """The error for an id that names no message."""
    return ToolRetry(
        f"No email has the id {email_id!r}. Take ids from list_unread_emails, read_emails "
        "or search_emails (they look like 'INBOX:1234').",
        details={"email_id": email_id},
    )


def unreachable(server: str, exc: BaseException) -> ToolFailed:
    """The error for a mail server that cannot be reached or refuses us."""
    return ToolFailed(
        f"The mail server {server} could not be used ({type(exc).__name__}: {exc}). "
        "Nothing was changed; check the server settings or try again later.",
        details={"server": server, "reason": str(exc)},
    )
