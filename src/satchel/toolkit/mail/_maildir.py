"""The default mail backend: a local Maildir (stdlib :mod:`mailbox`), no server.

The Maildir root is the INBOX; other folders are Maildir++ subfolders (``Sent``).
Sending files the message in ``Sent`` (marked seen), after handing it to an SMTP server
when one is configured; with none, nothing is delivered: the backend for trying the
tools out, and for mail that another program (fetchmail, offlineimap, mbsync) keeps in
sync.
"""

from __future__ import annotations

import mailbox
import os
import threading
from collections.abc import Iterator
from datetime import datetime
from email.message import EmailMessage, Message
from email.parser import BytesHeaderParser, BytesParser
from email.policy import compat32
from pathlib import Path

from satchel._errors import SatchelUsageError, ToolRetry
from satchel.toolkit.mail._backend import split_email_id, unknown_email
from satchel.toolkit.mail._message import (
    MailQuery,
    details_of,
    message_date,
    receipt_of,
    summary_of,
)
from satchel.toolkit.mail._models import EmailDetails, EmailSummary, SentEmail
from satchel.toolkit.mail._smtp import MailServer, submit

__all__ = ["MaildirBackend"]

_INBOX = "INBOX"
_COLON = mailbox.Maildir.colon


class MaildirBackend:
    """Mail in a local Maildir.

    Args:
        path: The Maildir (created, with a ``Sent`` folder, when missing).
        address: The user's address (From of sent mail).
        sent_folder: The folder sent messages are filed in.
        smtp: An SMTP server to deliver sent mail through first; ``None`` only files it.

    Raises:
        SatchelUsageError: ``path`` cannot be made a Maildir.

    Example:
        >>> backend = MaildirBackend(data_dir / "mail", address="ada@example.org")
        >>> backend.list_emails(unread_only=True)  # doctest: +SKIP
    """

    def __init__(
        self,
        path: Path,
        *,
        address: str,
        sent_folder: str = "Sent",
        smtp: MailServer | None = None,
    ) -> None:
        self.path = Path(path)
        self.smtp = smtp
        self._address = address
        self.sent_folder = sent_folder
        self._lock = threading.Lock()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._root = mailbox.Maildir(self.path, create=True)
            if sent_folder not in self._root.list_folders():
                self._root.add_folder(sent_folder)
        except OSError as exc:
            raise SatchelUsageError(f"Cannot use {self.path} as a Maildir: {exc}") from exc

    @property
    def address(self) -> str:
        """The user's own address."""
        return self._address

    def _folder(self, name: str) -> mailbox.Maildir:
        if name.upper() == _INBOX:
            return self._root
        try:
            return self._root.get_folder(name)
        except mailbox.NoSuchMailboxError as exc:
            folders = [_INBOX, *sorted(self._root.list_folders())]
            raise ToolRetry(
                f"No mail folder is named {name!r}; the folders are {', '.join(folders)}.",
                details={"folder": name, "folders": folders},
            ) from exc

    def add(
        self, message: EmailMessage | bytes, *, folder: str = _INBOX, seen: bool = False
    ) -> str:
        """File a message (delivery into the local Maildir); returns its ``email_id``."""
        box = self._folder(folder)
        item = mailbox.MaildirMessage(message)
        if seen:
            item.set_subdir("cur")
            item.add_flag("S")
        with self._lock:
            key = box.add(item)
        return f"{_INBOX if box is self._root else folder}:{key}"

    def list_emails(
        self,
        *,
        folder: str = _INBOX,
        unread_only: bool = False,
        since: datetime | None = None,
        query: MailQuery | None = None,
        limit: int = 10,
    ) -> list[EmailSummary]:
        """Messages of ``folder``, newest first (see :class:`MailBackend`).

        Flags come from the file names and dates from the headers; only messages a
        query's words must be looked for in, and the ``limit`` chosen, are parsed whole.
        """
        box = self._folder(folder)
        name = _INBOX if box is self._root else folder
        where = self.path if box is self._root else self.path / f".{folder}"
        chosen: list[tuple[float, str, Path, bool]] = []
        for key, path, unread in _entries(where):
            if unread_only and not unread:
                continue
            head = _read(path, headers_only=True)
            if head is None:
                continue
            when = message_date(head)
            if since is not None and (when is None or when < since):
                continue
            if query is not None:
                whole = _read(path) if query.words else head
                if whole is None or not query.matches(whole):
                    continue
            chosen.append((when.timestamp() if when is not None else 0.0, key, path, unread))
        chosen.sort(key=lambda c: c[0], reverse=True)
        found: list[EmailSummary] = []
        for _, key, path, unread in chosen[:limit]:
            msg = _read(path)
            if msg is not None:
                found.append(summary_of(f"{name}:{key}", name, msg, unread=unread))
        return found

    def get_email(self, email_id: str) -> EmailDetails:
        """One message in full (see :class:`MailBackend`)."""
        folder, key = split_email_id(email_id)
        try:
            box = self._folder(folder)
        except ToolRetry as exc:
            raise unknown_email(email_id) from exc
        with self._lock:
            try:
                msg = box[key]
            except KeyError as exc:
                raise unknown_email(email_id) from exc
        return details_of(email_id, folder, msg, unread="S" not in msg.get_flags())

    def send_email(self, message: EmailMessage) -> SentEmail:
        """Deliver ``message`` through :attr:`smtp` when set, then file it in the Sent
        folder (see :class:`MailBackend`)."""
        if self.smtp is not None:
            submit(self.smtp, message)
        saved = self.add(message, folder=self.sent_folder, seen=True)
        return receipt_of(message, saved)

    def close(self) -> None:
        """Nothing to release."""


def _entries(where: Path) -> Iterator[tuple[str, Path, bool]]:
    """``(key, path, unread)`` of each message file of a Maildir folder.

    Read from the file names (``new/KEY`` and ``cur/KEY:2,FLAGS``, the Maildir
    convention) rather than through :mod:`mailbox`, whose Python 3.11 API gives a
    message's flags only with the whole message parsed (``Maildir.get_flags`` came in
    3.13): listing a large folder then costs one header read per message.
    """
    for sub in ("new", "cur"):
        try:
            names = os.listdir(where / sub)
        except FileNotFoundError:
            continue
        for file in names:
            if file.startswith("."):
                continue
            key, _, info = file.partition(_COLON)
            flags = info[2:] if info.startswith("2,") else ""
            yield key, where / sub / file, "S" not in flags


def _read(path: Path, *, headers_only: bool = False) -> Message | None:
    """The message in ``path`` (``None`` when it moved away meanwhile)."""
    parser = BytesHeaderParser(policy=compat32) if headers_only else BytesParser(policy=compat32)
    try:
        with path.open("rb") as handle:
            return parser.parse(handle)
    except FileNotFoundError:
        return None
