"""The email channel: a person writes to the agent's address, and the agent answers in
the same thread.

New mail is what is unseen in the mailbox and above the channel's cursor: the highest
UID acknowledged, kept in the host's :class:`~satchel.channels.CursorStore` under the
mailbox's UIDVALIDITY (a mailbox rebuilt by its server starts again from what is
unseen). :meth:`EmailChannel.acknowledge` moves the cursor and flags the mail
``\\Seen``, so neither a new poll nor a restart fetches it again.
"""

from __future__ import annotations

import json
import logging
import re
import smtplib
from collections.abc import Sequence
from datetime import UTC, datetime
from email.message import EmailMessage
from functools import partial
from typing import Final

import anyio
import anyio.to_thread

from satchel._errors import SatchelUsageError
from satchel.channels._email._compose import new_mail, threaded_reply
from satchel.channels._email._config import EmailConfig
from satchel.channels._email._imap import FetchedMail, ImapSession, MailboxError
from satchel.channels._email._parse import ParsedMail, parse_mail
from satchel.channels._email._smtp import check_login, submit
from satchel.channels._inbound import (
    Action,
    ChannelUnavailableError,
    CursorStore,
    InboundChannel,
    InboundMessage,
    SentMessage,
)

__all__ = ["EmailChannel", "email_channel"]

logger = logging.getLogger("satchel.channels.email")

_BATCH: Final = 20
_WORD = re.compile(r"[\w-]+")
_MAX_OFFERED: Final = 1000


class EmailChannel:
    """A mailbox a person writes to the agent at (see :class:`EmailConfig`).

    :meth:`fetch` polls the mailbox every ``poll_seconds`` for unseen mail; each is an
    :class:`~satchel.channels.InboundMessage` whose ``chat`` and ``sender`` are the From
    address, ``text`` what the person wrote (the quoted mail and the signature
    trimmed), ``message_id`` the Message-ID and ``reply_to`` the In-Reply-To, with the
    subject and References in ``meta``. Mail from others, and mail a machine sent
    (out-of-office answers, bounces, lists: RFC 3834), is fetched too and not
    :meth:`allows`-ed, so it is never answered.

    An answer to a mail that offered :class:`~satchel.channels.Action` lines (``Reply
    APPROVE or DENY``) whose first word is one of them arrives with that action's
    ``data`` in :attr:`~satchel.channels.InboundMessage.action`, as a pressed button
    would.

    Args:
        config: The ``[email]`` section.
        cursor_store: Where the cursor (and the actions offered) outlive a restart;
            without one, the ``\\Seen`` flag alone keeps a restart from answering again.

    Example:
        >>> channel = email_channel(load_channels("channels.toml").email, cursor_store)
        >>> for message in await channel.fetch():
        ...     if channel.allows(message):
        ...         await channel.reply(message, "Noted.")
        ...     await channel.acknowledge(message)
    """

    def __init__(self, config: EmailConfig, *, cursor_store: CursorStore | None = None) -> None:
        self._config = config
        self._store = cursor_store
        self._allowed = frozenset(a.lower() for a in config.allowed_senders)
        self._own = config.sender.lower()
        self._lock = anyio.Lock()
        self._session: ImapSession | None = None
        self._smtp_checked = False
        self._cursors: dict[int, int] = {}
        self._unflagged: dict[int, set[int]] = {}
        self._offered: dict[str, tuple[Action, ...]] = {}

    @property
    def name(self) -> str:
        """``"email"``."""
        return "email"

    @property
    def config(self) -> EmailConfig:
        """The channel's configuration."""
        return self._config

    async def fetch(self) -> Sequence[InboundMessage]:
        """New mail, oldest first; with none, wait ``poll_seconds`` (less when a server
        that can IDLE says mail came) and look once more.

        Raises:
            ChannelUnavailableError: The IMAP server cannot be reached for now.
            SatchelUsageError: It refused the login, or has no such mailbox.
        """
        found = await self._poll()
        if found:
            return found
        await self._wait()
        return await self._poll()

    async def _wait(self) -> None:
        async with self._lock:
            session = self._session
            if session is not None and session.idles:
                try:
                    await anyio.to_thread.run_sync(
                        session.wait, self._config.poll_seconds, abandon_on_cancel=True
                    )
                except MailboxError as exc:  # the next poll connects again, or says why not
                    logger.info("email: waiting for new mail stopped: %s", exc)
                    await self._drop()
                except anyio.get_cancelled_exc_class():
                    self._session = None  # its thread still waits: end it, and open anew
                    session.abandon()
                    raise
                return
        await anyio.sleep(self._config.poll_seconds)

    async def _poll(self) -> list[InboundMessage]:
        async with self._lock:
            session = await self._connected()
            validity = session.uidvalidity
            after = await self._cursor(validity)
            try:
                await self._flag(session)
                mails = await anyio.to_thread.run_sync(session.new_mail, after, _BATCH)
            except MailboxError as exc:
                await self._drop()
                raise self._unavailable(exc) from exc
        return [await self._message(validity, mail) for mail in mails]

    async def _connected(self) -> ImapSession:
        if self._session is not None:
            return self._session
        try:
            session = await anyio.to_thread.run_sync(ImapSession, self._config)
        except MailboxError as exc:
            raise self._unavailable(exc) from exc
        self._session = session
        if not self._smtp_checked and self._config.smtp_login:
            try:
                await anyio.to_thread.run_sync(check_login, self._config)
            except SatchelUsageError:
                await self._drop()
                raise
            except (OSError, smtplib.SMTPException) as exc:  # reachable later, perhaps
                logger.warning("email: could not check the SMTP login now: %s", exc)
        self._smtp_checked = True
        return session

    def _unavailable(self, exc: BaseException) -> ChannelUnavailableError:
        where = f"{self._config.imap_host}:{self._config.imap_port_or_default}"
        return ChannelUnavailableError(
            f"The IMAP server {where} cannot be used now ({type(exc).__name__}: {exc})."
        )

    async def _drop(self) -> None:
        session, self._session = self._session, None
        if session is not None:
            await anyio.to_thread.run_sync(session.close)

    def _cursor_key(self, validity: int) -> str:
        config = self._config
        return f"email:{config.username}@{config.imap_host}/{config.mailbox}#{validity}"

    async def _cursor(self, validity: int) -> int:
        if validity not in self._cursors:
            stored = await self._store.get(self._cursor_key(validity)) if self._store else None
            self._cursors[validity] = int(stored) if stored and stored.isdigit() else 0
        return self._cursors[validity]

    async def _flag(self, session: ImapSession) -> None:
        """Flag as seen what was acknowledged while the server could not be reached."""
        uids = self._unflagged.get(session.uidvalidity)
        if uids:
            batch = sorted(uids)  # an acknowledgement meanwhile waits for the next poll
            await anyio.to_thread.run_sync(session.mark_seen, batch)
            uids.difference_update(batch)

    async def _message(self, validity: int, mail: FetchedMail) -> InboundMessage:
        parsed = await anyio.to_thread.run_sync(
            partial(parse_mail, truncated=mail.truncated), mail.raw
        )
        meta = {
            "subject": parsed.subject,
            "references": parsed.references,
            "message_id": parsed.message_id,
            "uid": str(mail.uid),
            "uidvalidity": str(validity),
        }
        if parsed.attachments:
            meta["attachments"] = ", ".join(parsed.attachments)[:1000]
        if parsed.automatic:
            meta["automatic"] = "yes"
        return InboundMessage(
            channel=self.name,
            chat=parsed.sender,
            sender=parsed.sender,
            text=parsed.text,
            message_id=parsed.message_id or f"<{validity}.{mail.uid}@{self._config.imap_host}>",
            reply_to=parsed.in_reply_to or None,
            action=await self._action(parsed),
            received_at=datetime.now(UTC),
            meta=meta,
        )

    async def _action(self, parsed: ParsedMail) -> str | None:
        """The action an answer to an offering mail chose by its first word."""
        if not parsed.in_reply_to:
            return None
        actions = self._offered.get(parsed.in_reply_to)
        if actions is None and self._store is not None:
            stored = await self._store.get(f"email:actions:{parsed.in_reply_to}")
            actions = _actions_of(stored)
        word = _WORD.search(parsed.text)
        if not actions or word is None:
            return None
        chosen = word.group(0).casefold()
        return next((a.data for a in actions if a.label.casefold() == chosen), None)

    def allows(self, message: InboundMessage) -> bool:
        """Whether ``message`` came from an allowed sender, and not from a machine nor
        from the agent's own address."""
        return (
            message.sender.lower() in self._allowed
            and message.sender.lower() != self._own
            and message.meta.get("automatic") != "yes"
        )

    async def acknowledge(self, message: InboundMessage) -> None:
        """Move the cursor past ``message`` and flag it ``\\Seen`` (at the next poll
        when a fetch is waiting for mail or the server cannot be reached now: the cursor
        already keeps it from coming back).

        Raises:
            SatchelUsageError: ``message`` was not fetched by an email channel.
        """
        try:
            uid, validity = int(message.meta["uid"]), int(message.meta["uidvalidity"])
        except (KeyError, ValueError) as exc:
            raise SatchelUsageError(
                f"{message.origin} {message.message_id!r} was not fetched by the email channel."
            ) from exc
        if uid > await self._cursor(validity):
            self._cursors[validity] = uid
            if self._store is not None:
                await self._store.set(self._cursor_key(validity), str(uid))
        self._unflagged.setdefault(validity, set()).add(uid)
        if self._lock.locked():  # a fetch is waiting: the next poll flags it
            return
        async with self._lock:
            session = self._session
            if session is None or session.uidvalidity != validity:
                return
            try:
                await self._flag(session)
            except MailboxError as exc:
                logger.warning("email: could not flag mail %s as seen now: %s", uid, exc)
                await self._drop()

    async def reply(self, message: InboundMessage, text: str) -> SentMessage:
        """Answer ``message`` to its sender: ``Re:`` its subject, threaded by
        ``In-Reply-To`` and ``References``.

        Raises:
            ChannelUnavailableError: The SMTP server cannot be reached, or refused it.
            SatchelUsageError: It refused the login.
        """
        mail = threaded_reply(
            sender=self._config.sender,
            to=message.chat,
            subject=message.meta.get("subject", ""),
            text=text,
            message_id=message.meta.get("message_id", message.message_id),
            references=message.meta.get("references", ""),
        )
        return await self._submit(mail, message.chat)

    async def send(self, chat: str, text: str, *, actions: Sequence[Action] = ()) -> SentMessage:
        """A new mail to ``chat`` (an allowed sender, or the notify address), its
        ``actions`` as lines to answer with (``Reply APPROVE or DENY``).

        Raises:
            SatchelUsageError: ``chat`` is neither an allowed sender nor the notify
                address.
            ChannelUnavailableError: The SMTP server cannot be reached, or refused it.
        """
        notify = (self._config.notify_address or "").lower()
        if chat.lower() not in self._allowed and chat.lower() != notify:
            raise SatchelUsageError(
                f"The email channel writes only to allowed senders and notify_address, "
                f"not {chat[:200]!r}."
            )
        sent = await self._submit(
            new_mail(sender=self._config.sender, to=chat, text=text, actions=actions), chat
        )
        if actions:
            await self._remember(sent.message_id, actions)
        return sent

    async def notify(self, text: str, *, actions: Sequence[Action] = ()) -> SentMessage | None:
        """A new mail to ``notify_address``; ``None`` when there is none.

        Raises:
            ChannelUnavailableError: The SMTP server cannot be reached, or refused it.
        """
        if self._config.notify_address is None:
            return None
        return await self.send(self._config.notify_address, text, actions=actions)

    async def _submit(self, mail: EmailMessage, chat: str) -> SentMessage:
        await anyio.to_thread.run_sync(submit, self._config, mail)
        return SentMessage(channel=self.name, chat=chat, message_id=str(mail["Message-ID"]))

    async def _remember(self, message_id: str, actions: Sequence[Action]) -> None:
        if len(self._offered) >= _MAX_OFFERED:
            self._offered.pop(next(iter(self._offered)))
        self._offered[message_id] = tuple(actions)
        if self._store is not None:
            value = json.dumps([[a.label, a.data] for a in actions])
            await self._store.set(f"email:actions:{message_id}", value)

    async def aclose(self) -> None:
        """Log out of the IMAP server (once a fetch waiting in IDLE has ended, within
        ``poll_seconds``)."""
        async with self._lock:
            await self._drop()


def _actions_of(stored: str | None) -> tuple[Action, ...] | None:
    if not stored:
        return None
    try:
        pairs = json.loads(stored)
        return tuple(Action(label=str(label), data=str(data)) for label, data in pairs)
    except (ValueError, TypeError):
        return None


def email_channel(config: EmailConfig, cursor_store: CursorStore | None = None) -> InboundChannel:
    """The :class:`EmailChannel` the ``[email]`` section describes.

    Example:
        >>> config = load_channels("channels.toml")
        >>> channel = email_channel(config.email, cursor_store)
    """
    return EmailChannel(config, cursor_store=cursor_store)
