"""Mail on real accounts: IMAP to read (``imapclient``), SMTP to send
(:mod:`satchel.toolkit.mail._smtp`).

Each call opens its own IMAP connection and closes it: a backend holds no socket
between calls, so a server that restarted or a connection that idled out never breaks
the next call. Reading uses ``BODY.PEEK`` and never marks a message as seen.
"""

from __future__ import annotations

import email
import logging
import re
import ssl
from collections.abc import Generator
from contextlib import contextmanager
from datetime import datetime
from email.message import EmailMessage, Message
from email.policy import compat32
from typing import Any, cast

from imapclient import IMAPClient  # pyright: ignore[reportMissingTypeStubs]
from imapclient.exceptions import IMAPClientError  # pyright: ignore[reportMissingTypeStubs]

from satchel._errors import ToolFailed, ToolRetry
from satchel.toolkit.mail._backend import split_email_id, unknown_email, unreachable
from satchel.toolkit.mail._message import (
    MailQuery,
    details_of,
    message_date,
    receipt_of,
    summary_of,
)
from satchel.toolkit.mail._models import EmailDetails, EmailSummary, SentEmail
from satchel.toolkit.mail._smtp import MailServer, submit

__all__ = ["ImapSmtpBackend"]

logger = logging.getLogger("satchel.toolkit.mail")

_INBOX = "INBOX"
_SEEN = b"\\Seen"
_BODY = b"BODY[]"
_APPENDUID = re.compile(rb"APPENDUID \d+ (\d+)")
_DATE_FETCH = "BODY.PEEK[HEADER.FIELDS (DATE)]"
_DATE_KEY = b"BODY[HEADER.FIELDS"
_SPECIALS = re.compile(r"[(){}%*\]\x00-\x1f\x7f]")
_CRITERIA = {"from": "FROM", "to": "TO", "cc": "CC", "subject": "SUBJECT"}


class ImapSmtpBackend:
    """Mail on an IMAP server, sent through an SMTP server.

    Args:
        imap: The IMAP server (its ``username`` and ``password`` are required).
        smtp: The SMTP server, or ``None`` to only file sent mail in ``sent_folder``
            (nothing is delivered).
        address: The user's address (From of sent mail).
        sent_folder: The IMAP folder a copy of each sent message is appended to, or
            ``None`` when the provider files sent mail itself (Gmail does).

    Example:
        >>> backend = ImapSmtpBackend(
        ...     imap=MailServer(host="imap.fastmail.com", port=993, username=u, password=p),
        ...     smtp=MailServer(host="smtp.fastmail.com", port=465, username=u, password=p),
        ...     address="ada@example.org",
        ... )
    """

    def __init__(
        self,
        *,
        imap: MailServer,
        smtp: MailServer | None,
        address: str,
        sent_folder: str | None = "Sent",
    ) -> None:
        self.imap = imap
        self.smtp = smtp
        self._address = address
        self.sent_folder = sent_folder

    @property
    def address(self) -> str:
        """The user's own address."""
        return self._address

    @contextmanager
    def _client(self) -> Generator[Any]:
        server = self.imap
        try:
            context = ssl.create_default_context()
            client: Any = IMAPClient(
                server.host,
                port=server.port,
                ssl=server.security == "ssl",
                ssl_context=context,
                timeout=server.timeout,
            )
        except (OSError, IMAPClientError) as exc:
            raise unreachable(server.label, exc) from exc
        try:
            if server.security == "starttls":
                client.starttls(context)
            client.login(server.username or "", server.password or "")
            yield client
        except (OSError, IMAPClientError) as exc:
            raise unreachable(server.label, exc) from exc
        finally:
            try:
                client.logout()
            except (OSError, IMAPClientError):
                client.shutdown()

    def _select(self, client: Any, folder: str) -> None:
        try:
            client.select_folder(folder, readonly=True)
        except IMAPClientError as exc:
            names = [
                cast(str, f[2]) for f in cast(list[tuple[Any, Any, Any]], client.list_folders())
            ]
            raise ToolRetry(
                f"No mail folder is named {folder!r}; the folders are {', '.join(names)}.",
                details={"folder": folder, "folders": names},
            ) from exc

    def list_emails(
        self,
        *,
        folder: str = _INBOX,
        unread_only: bool = False,
        since: datetime | None = None,
        query: MailQuery | None = None,
        limit: int = 10,
    ) -> list[EmailSummary]:
        """Messages of ``folder``, newest first by their Date headers (see
        :class:`MailBackend`)."""
        criteria: list[Any] = []
        if unread_only:
            criteria.append("UNSEEN")
        if since is not None:
            criteria += ["SINCE", since.date()]
        if query is not None:
            for name, value in query.fields:
                if term := _searchable(value):
                    criteria += [_CRITERIA[name], term]
            for word in query.words:
                if term := _searchable(word):
                    criteria += ["TEXT", term]
        with self._client() as client:
            self._select(client, folder)
            uids = cast(list[int], client.search(criteria or ["ALL"], charset="UTF-8"))
            if len(uids) > limit:
                uids = self._newest(client, uids, since, limit)
            found: list[EmailSummary] = []
            for uid, msg, unread in self._fetch(client, uids):
                summary = summary_of(f"{folder}:{uid}", folder, msg, unread=unread)
                if since is None or (summary.date is not None and summary.date >= since):
                    found.append(summary)
        found.sort(key=_newest_first)
        return found[:limit]

    def _newest(
        self, client: Any, uids: list[int], since: datetime | None, limit: int
    ) -> list[int]:
        """The ``limit`` newest of ``uids`` by their Date headers (one small fetch), so
        only those are fetched whole."""
        data = cast(dict[int, dict[bytes, Any]], client.fetch(uids, [_DATE_FETCH]))
        dated: list[tuple[float, int]] = []
        for uid, item in data.items():
            raw = next((v for k, v in item.items() if k.startswith(_DATE_KEY)), b"")
            when = _header_date(raw if isinstance(raw, bytes) else b"")
            if since is not None and (when is None or when < since):
                continue
            dated.append((when.timestamp() if when is not None else 0.0, uid))
        dated.sort(reverse=True)
        return [uid for _, uid in dated[:limit]]

    def _fetch(self, client: Any, uids: list[int]) -> list[tuple[int, Message, bool]]:
        data = cast(dict[int, dict[bytes, Any]], client.fetch(uids, ["FLAGS", "BODY.PEEK[]"]))
        out: list[tuple[int, Message, bool]] = []
        for uid, item in data.items():
            raw = item.get(_BODY)
            if not isinstance(raw, bytes):
                continue
            flags = cast(tuple[bytes, ...], item.get(b"FLAGS", ()))
            msg = email.message_from_bytes(raw, policy=compat32)
            out.append((uid, msg, _SEEN not in flags))
        return out

    def get_email(self, email_id: str) -> EmailDetails:
        """One message in full (see :class:`MailBackend`)."""
        folder, key = split_email_id(email_id)
        if not key.isdigit():
            raise unknown_email(email_id)
        with self._client() as client:
            try:
                self._select(client, folder)
            except ToolRetry as exc:
                raise unknown_email(email_id) from exc
            fetched = self._fetch(client, [int(key)])
        if not fetched:
            raise unknown_email(email_id)
        _, msg, unread = fetched[0]
        return details_of(email_id, folder, msg, unread=unread)

    def send_email(self, message: EmailMessage) -> SentEmail:
        """Send through SMTP, then append a copy to the Sent folder (see
        :class:`MailBackend`). A copy that cannot be filed leaves ``saved_as`` empty; it
        is no error, since the message went out. Without SMTP, filing the copy is all a
        send does, so a copy that cannot be filed is a failure.

        Raises:
            ToolFailed: SMTP refused the message, or, without SMTP, the copy could not
                be filed (nothing happened).
        """
        if self.smtp is not None:
            submit(self.smtp, message)
        saved: str | None = None
        if self.sent_folder is not None:
            saved = self._file_sent(message, self.sent_folder, sent=self.smtp is not None)
        elif self.smtp is None:
            raise ToolFailed(
                "Nothing was sent: no SMTP server is configured and there is no Sent "
                "folder to file the message in. Configure SMTP to send mail.",
            )
        return receipt_of(message, saved)

    def _file_sent(self, message: EmailMessage, folder: str, *, sent: bool) -> str | None:
        try:
            with self._client() as client:
                reply = client.append(folder, message.as_bytes(), flags=[_SEEN])
        except ToolFailed as exc:
            if not sent:  # filing was the whole send: say that nothing happened
                raise ToolFailed(
                    f"Nothing was sent: no SMTP server is configured, and the copy could "
                    f"not be filed in {folder!r} either ({exc.message}).",
                    details={"folder": folder},
                ) from exc
            logger.warning("sent, but could not file a copy in %r: %s", folder, exc.message)
            return None
        match = _APPENDUID.search(reply if isinstance(reply, bytes) else b"")
        return f"{folder}:{int(match.group(1))}" if match else None

    def close(self) -> None:
        """Nothing to release (connections last one call)."""


def _searchable(value: str) -> str:
    """``value`` without IMAP's atom specials and control characters: imapclient quotes
    a search value only for spaces, quotes and backslashes, and a bare ``(`` or ``*``
    would be read as search syntax. Matching is by substring, so dropping them only
    widens a search for text that had them."""
    return " ".join(_SPECIALS.sub(" ", value).split())


def _header_date(raw: bytes) -> datetime | None:
    return message_date(email.message_from_bytes(raw, policy=compat32))


def _newest_first(summary: EmailSummary) -> float:
    return -summary.date.timestamp() if summary.date is not None else 0.0
