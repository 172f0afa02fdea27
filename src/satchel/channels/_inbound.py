"""Inbound channels: where a person talks to an agent (Telegram, Discord, email, a local
HTTP inbox), and where the agent reaches them on its own (reminders, nudges, consent
requests).

Every channel is one :class:`InboundChannel`: it fetches new messages, replies to one,
and notifies the person it is configured to reach. The host (``satchel up``) runs one
agent turn per message it fetches, with the message's :attr:`InboundMessage.origin`,
and never needs to know which platform a message came from.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import ClassVar, Protocol, runtime_checkable

from satchel._errors import ErrorKind, SatchelError

__all__ = [
    "Action",
    "ChannelUnavailableError",
    "CursorStore",
    "InboundChannel",
    "InboundMessage",
    "SentMessage",
]


class ChannelUnavailableError(SatchelError):
    """A channel's service cannot be reached or refused the request for now (a network
    error, a 5xx, a rate limit). The host backs off and fetches again; nothing is lost,
    since a channel only moves past a message once it is acknowledged."""

    error_kind: ClassVar[ErrorKind] = "failed"


@dataclass(frozen=True, slots=True)
class Action:
    """A button offered with a notification, where the platform has buttons (a Telegram
    inline keyboard). Pressing it arrives as an :class:`InboundMessage` whose
    :attr:`~InboundMessage.action` is :attr:`data`.

    Attributes:
        label: What the button says (``"Approve"``).
        data: What comes back when it is pressed (``"consent:approve:<id>"``), at most
            64 bytes.
    """

    label: str
    data: str


@dataclass(frozen=True, slots=True)
class SentMessage:
    """A message a channel sent: enough to recognise a reply to it later.

    Attributes:
        channel: The channel's name (``"telegram"``).
        chat: Where it went (a chat id, a channel id, an email address).
        message_id: The platform's id of the sent message (a Telegram ``message_id``, a
            Discord snowflake, an email ``Message-ID``).
    """

    channel: str
    chat: str
    message_id: str


@dataclass(frozen=True, slots=True)
class InboundMessage:
    """One message a person sent to the agent.

    Attributes:
        channel: The channel's name (``"telegram"``, ``"discord"``, ``"email"``,
            ``"inbox"``).
        chat: The conversation it belongs to within the channel (a chat id, a Discord
            channel id, the sender's address): replies go back there, and each chat is
            its own conversation.
        sender: Who sent it (a user id, an email address).
        text: What they wrote (for a button press, the button's label or empty).
        message_id: The platform's id of this message, unique within the channel: the
            host answers each id at most once.
        reply_to: The platform id of the message this one answers, when the platform
            says (a Telegram reply, a Discord message reference, ``In-Reply-To``).
        action: The :attr:`Action.data` of a pressed button, else ``None``.
        received_at: When it was sent (UTC).
        meta: Platform details the reply needs (an email's subject and ``References``),
            never secrets.
    """

    channel: str
    chat: str
    sender: str
    text: str
    message_id: str
    reply_to: str | None = None
    action: str | None = None
    received_at: datetime = field(default_factory=lambda: datetime.now(UTC))
    meta: Mapping[str, str] = field(default_factory=dict[str, str])

    @property
    def origin(self) -> str:
        """Where the message came from, as consent and ``send_message`` name it
        (``telegram:123456789``)."""
        return f"{self.channel}:{self.chat}"


class CursorStore(Protocol):
    """Where a channel keeps what it must remember across restarts (the last Discord
    message id it handled), given to it by the host, which keeps it in the agent's
    database."""

    async def get(self, key: str) -> str | None:
        """The value stored under ``key``, or ``None``."""
        ...

    async def set(self, key: str, value: str) -> None:
        """Store ``value`` under ``key``, durably."""
        ...


@runtime_checkable
class InboundChannel(Protocol):
    """A channel a person talks to the agent on.

    A channel keeps its own cursor (a Telegram update offset, the last Discord message
    id, IMAP UIDs) and moves it only in :meth:`acknowledge`, so a message fetched but not
    acknowledged (the process stopped mid-turn) is fetched again; the host keeps the ids
    it has answered and answers none twice.
    """

    @property
    def name(self) -> str:
        """The channel's name, as in :attr:`InboundMessage.channel`."""
        ...

    async def fetch(self) -> Sequence[InboundMessage]:
        """Wait (a long poll of at most a few tens of seconds) for new messages and
        return them oldest first, possibly none.

        Messages from senders the configuration does not allow are returned too, for
        the host to refuse and log; :meth:`allows` says which.

        Raises:
            ChannelUnavailableError: The service cannot be reached for now.
        """
        ...

    def allows(self, message: InboundMessage) -> bool:
        """Whether the message's sender is on this channel's allow-list."""
        ...

    async def acknowledge(self, message: InboundMessage) -> None:
        """Move the channel's cursor past ``message`` (it is never fetched again)."""
        ...

    async def reply(self, message: InboundMessage, text: str) -> SentMessage:
        """Answer ``message`` where it came from (threaded where the platform threads).

        Raises:
            ChannelUnavailableError: The service cannot be reached for now.
        """
        ...

    async def send(self, chat: str, text: str, *, actions: Sequence[Action] = ()) -> SentMessage:
        """Start a message in ``chat`` (an :attr:`InboundMessage.chat` of this channel),
        not as a reply: a consent request announced where its turn came from.

        Raises:
            ChannelUnavailableError: The service cannot be reached for now.
        """
        ...

    async def notify(self, text: str, *, actions: Sequence[Action] = ()) -> SentMessage | None:
        """Tell the person this channel is configured to reach (Telegram's
        ``notify_chat``), with buttons where the platform has them; ``None`` when the
        channel has no one to notify.

        Raises:
            ChannelUnavailableError: The service cannot be reached for now.
        """
        ...

    async def aclose(self) -> None:
        """Release the channel's connections."""
        ...
