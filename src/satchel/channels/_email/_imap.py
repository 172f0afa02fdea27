"""One IMAP connection to the mailbox the agent reads (``imapclient``), blocking: the
channel runs each call in a worker thread, one at a time.

Unlike the mail toolkit, which opens a connection per tool call, the channel keeps one
open between polls (a poll every few seconds would otherwise log in every few seconds)
and drops it on the first error, to open a new one on the next poll. Between polls it
waits in IDLE where the server can, so new mail is seen when it comes. Reading uses
``BODY.PEEK`` of the first :data:`MAX_FETCH_BYTES` only: a huge mail is read in part,
never whole, and nothing is marked as seen until the channel acknowledges it.
"""

from __future__ import annotations

import imaplib
import logging
import ssl
from dataclasses import dataclass
from typing import Any, Final, cast

from satchel._errors import SatchelUsageError
from satchel.channels._email._config import EmailConfig

__all__ = ["MAX_FETCH_BYTES", "FetchedMail", "ImapSession", "MailboxError"]

logger = logging.getLogger("satchel.channels.email")

MAX_FETCH_BYTES: Final = 256 * 1024
"""How much of one mail is read: its headers and text fit many times over."""

_SEEN = b"\\Seen"
_IDLE_MAX = 25 * 60
_SIZE = b"RFC822.SIZE"
_PART = f"BODY.PEEK[]<0.{MAX_FETCH_BYTES}>"

MailboxError = (OSError, imaplib.IMAP4.error)
"""What a failing IMAP server or network raises (``imapclient``'s errors are
``imaplib``'s)."""


@dataclass(frozen=True, slots=True)
class FetchedMail:
    """One new mail as the server holds it.

    Attributes:
        uid: Its UID in the mailbox.
        raw: Its bytes, at most :data:`MAX_FETCH_BYTES`.
        truncated: The mail is bigger than ``raw``.
    """

    uid: int
    raw: bytes
    truncated: bool


class ImapSession:
    """A logged-in connection with the mailbox selected.

    Raises:
        SatchelUsageError: The server refused the login, or has no such mailbox (the
            configuration must change).
        OSError, IMAPClientError: The server cannot be reached or failed.
    """

    def __init__(self, config: EmailConfig) -> None:
        # imported here: ``satchel.channels`` loads without it until a mailbox is read
        from imapclient import IMAPClient  # pyright: ignore[reportMissingTypeStubs]
        from imapclient.exceptions import LoginError  # pyright: ignore[reportMissingTypeStubs]

        self._client: Any = IMAPClient(
            config.imap_host,
            port=config.imap_port_or_default,
            ssl=config.imap_tls == "ssl",
            ssl_context=ssl.create_default_context(),
            timeout=config.timeout,
        )
        try:
            if config.imap_tls == "starttls":
                self._client.starttls(ssl.create_default_context())
            try:
                self._client.login(config.username, config.password.get_secret_value())
            except LoginError as exc:
                raise SatchelUsageError(
                    f"The IMAP server {config.imap_host}:{config.imap_port_or_default} "
                    f"refused the login of {config.username!r}: check email.username and "
                    "the password (SATCHEL_EMAIL_PASSWORD)."
                ) from exc
            self.uidvalidity = self._select(config.mailbox)
            self.idles = bool(self._client.has_capability("IDLE"))
        except BaseException:
            self.close()
            raise

    def _select(self, mailbox: str) -> int:
        try:
            info = cast(dict[bytes, Any], self._client.select_folder(mailbox))
        except imaplib.IMAP4.abort:
            raise
        except imaplib.IMAP4.error as exc:
            names = [cast(str, f[2]) for f in cast(list[Any], self._client.list_folders())]
            raise SatchelUsageError(
                f"The IMAP server has no mailbox {mailbox!r} (email.mailbox); it has "
                f"{', '.join(names[:50]) or 'none'}."
            ) from exc
        return int(info.get(b"UIDVALIDITY", 0))

    def new_mail(self, after: int, limit: int) -> list[FetchedMail]:
        """The oldest ``limit`` unseen mails whose UID is above ``after``."""
        self._client.noop()
        found = cast(list[int], self._client.search(["UNSEEN", "UID", f"{after + 1}:*"]))
        uids = sorted(uid for uid in found if uid > after)[:limit]
        if not uids:
            return []
        data = cast(dict[int, dict[bytes, Any]], self._client.fetch(uids, [_SIZE, _PART]))
        mails: list[FetchedMail] = []
        for uid in uids:
            item = data.get(uid, {})
            raw = next(
                (v for k, v in item.items() if k.startswith(b"BODY[]") and isinstance(v, bytes)),
                b"",
            )
            size = item.get(_SIZE)
            truncated = isinstance(size, int) and size > len(raw)
            mails.append(FetchedMail(uid=uid, raw=raw, truncated=truncated))
        return mails

    def wait(self, seconds: float) -> None:
        """Wait (IDLE, RFC 2177) until the server says the mailbox changed, at most
        ``seconds`` (and under the 29 minutes after which servers end an IDLE)."""
        self._client.idle()
        try:
            self._client.idle_check(timeout=min(seconds, _IDLE_MAX))
        finally:
            self._client.idle_done()

    def mark_seen(self, uids: list[int]) -> None:
        """Flag ``uids`` as ``\\Seen``."""
        self._client.add_flags(uids, [_SEEN], silent=True)

    def abandon(self) -> None:
        """Shut the socket, from another thread than one waiting in :meth:`wait`, which
        then ends with an error nobody reads."""
        try:
            self._client.shutdown()
        except MailboxError as exc:
            logger.debug("shutting an abandoned IMAP connection: %s", exc)

    def close(self) -> None:
        """Log out (or just drop the socket when the server is gone)."""
        try:
            self._client.logout()
        except MailboxError:
            try:
                self._client.shutdown()
            except MailboxError as exc:
                logger.debug("closing the IMAP connection: %s", exc)
