"""Telegram as an inbound channel: the Bot API's ``getUpdates`` long poll, replies
with ``sendMessage``, buttons as an inline keyboard.

Built on ``python-telegram-bot``'s :class:`telegram.Bot` rather than hand-written
HTTP: it is light (pure Python, and its only dependency is httpx, which satchel
already uses), it is kept in step with the Bot API, it parses the wire format into
typed objects (updates, callback queries, replies), it accepts a custom ``base_url``
(a local Bot API server, or the tests' fake one), and it maps the API's errors to
classes (``RetryAfter`` with the server's ``retry_after``, ``InvalidToken`` for 401,
``NetworkError``/``TimedOut``), which this module maps once more into satchel's tree
at the boundary. Only :class:`telegram.Bot` is used, not its ``Application``
framework: the host (``satchel up``) owns the loop.

How the Bot API's state maps to :class:`~satchel.channels.InboundChannel`:

* ``getUpdates`` with ``offset`` confirms every update below it, server side, so the
  cursor lives at Telegram: a restarted process is given again whatever the last one
  fetched but never confirmed (the host's ledger then answers none twice). Each poll
  asks from past the newest update fetched so far, since the host keeps fetching
  while a turn runs (a consent answer may arrive meanwhile).
* An :class:`~satchel.channels.InboundMessage`'s ``message_id`` is the update's
  ``update_id`` (unique per bot, where Telegram's own ``message_id`` is unique per
  chat only); ``reply_to`` and :class:`~satchel.channels.SentMessage` carry Telegram
  message ids, as a reply to an announcement names them.
* A pressed button (``callback_query``) becomes a message whose ``action`` is the
  button's data; it is answered (``answerCallbackQuery``) when fetched, so the
  person's client stops its spinner.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import Final

from telegram import (
    Bot,
    CallbackQuery,
    InlineKeyboardButton,
    InlineKeyboardMarkup,
    Message,
    ReplyParameters,
    Update,
)
from telegram.error import InvalidToken, NetworkError, RetryAfter, TelegramError
from telegram.request import HTTPXRequest

from satchel._errors import SatchelUsageError, ToolFailed
from satchel._redact import strip_userinfo
from satchel.channels._inbound import (
    Action,
    ChannelUnavailableError,
    InboundMessage,
    SentMessage,
)

__all__ = ["TELEGRAM_API", "TELEGRAM_MAX_CHARS", "TelegramChannel"]

logger = logging.getLogger("satchel.channels.telegram")

TELEGRAM_API: Final = "https://api.telegram.org"
"""The Bot API's base URL (``/bot<token>/<method>`` follows it)."""

TELEGRAM_MAX_CHARS: Final = 4096
"""The most characters one Telegram message holds; a longer text goes in several."""

_UPDATES: Final = ("message", "callback_query")
_QUOTING_LOGGERS: Final = (
    "httpx",
    "telegram",
    "telegram.Bot",
    "telegram.BaseRequest",
    "telegram.HTTPXRequest",
)
"""Loggers that write the Bot API's URLs (``/bot<token>/``) or the token itself."""


class _HideToken(logging.Filter):
    """Writes ``<token>`` for the bot token in the records of :data:`_QUOTING_LOGGERS`
    (httpx logs every request URL at INFO, python-telegram-bot its base URL at DEBUG),
    while its channel is open."""

    def __init__(self, token: str) -> None:
        super().__init__()
        self.token = token

    def filter(self, record: logging.LogRecord) -> bool:
        text = record.getMessage()
        if self.token in text:
            record.msg, record.args = text.replace(self.token, "<token>"), None
        return True


class TelegramChannel:
    """A Telegram bot as an :class:`~satchel.channels.InboundChannel`.

    Args:
        token: The bot token (``123456:ABC...``); never logged.
        base_url: The Bot API server.
        allowed_users: Telegram user ids that may talk to the agent; everyone else is
            refused by the host.
        notify_chat: The chat reminders, nudges and consent requests go to; ``None``:
            :meth:`notify` sends nothing.
        poll_seconds: How long one ``getUpdates`` waits for an update.
        name: The channel's name in origins (``telegram:<chat>``).

    Example:
        >>> channel = TelegramChannel(os.environ["SATCHEL_TELEGRAM_TOKEN"],
        ...                           allowed_users=[123456789], notify_chat=123456789)
        >>> for message in await channel.fetch():
        ...     await channel.reply(message, "Hello!")
    """

    def __init__(
        self,
        token: str,
        *,
        base_url: str = TELEGRAM_API,
        allowed_users: Iterable[int] = (),
        notify_chat: int | None = None,
        poll_seconds: int = 25,
        name: str = "telegram",
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.allowed_users = frozenset(int(user) for user in allowed_users)
        self.notify_chat = notify_chat
        self.poll_seconds = poll_seconds
        self._name = name
        self._secret = token
        self._hide = _HideToken(token)
        for logger_name in _QUOTING_LOGGERS:
            logging.getLogger(logger_name).addFilter(self._hide)
        self._bot = Bot(
            token,
            base_url=f"{self.base_url}/bot",
            base_file_url=f"{self.base_url}/file/bot",
            request=HTTPXRequest(connection_pool_size=8, read_timeout=15.0),
            get_updates_request=HTTPXRequest(connection_pool_size=1, read_timeout=10.0),
        )
        self._ready = False
        self._offset: int | None = None

    def __repr__(self) -> str:
        return f"TelegramChannel(base_url={strip_userinfo(self.base_url)!r})"

    @property
    def name(self) -> str:
        """The channel's name (``"telegram"``)."""
        return self._name

    async def start(self) -> None:
        """Check the token (``getMe``); :meth:`fetch` does it on first use.

        Raises:
            SatchelUsageError: The server refused the token (401) or is not a Bot API
                server (404).
            ChannelUnavailableError: The server cannot be reached for now.
        """
        if self._ready:
            return
        try:
            await self._bot.initialize()
        except TelegramError as exc:
            raise self._mapped(exc, "getMe") from exc
        self._ready = True
        logger.info("telegram: polling as @%s", self._bot.username)

    async def fetch(self) -> Sequence[InboundMessage]:
        """Long-poll ``getUpdates`` for messages and button presses, oldest first.

        Raises:
            SatchelUsageError: The token is refused.
            ChannelUnavailableError: Telegram cannot be reached, answers 5xx, or asks
                to wait (429).
        """
        await self.start()
        try:
            updates = await self._bot.get_updates(
                offset=self._offset,
                timeout=self.poll_seconds,
                allowed_updates=list(_UPDATES),
            )
        except TelegramError as exc:
            raise self._mapped(exc, "getUpdates") from exc
        messages: list[InboundMessage] = []
        for update in updates:
            self._offset = max(self._offset or 0, update.update_id + 1)
            message = await self._message(update)
            if message is not None:
                messages.append(message)
        return messages

    async def _message(self, update: Update) -> InboundMessage | None:
        """The inbound message an update holds; ``None`` for one without text."""
        if update.callback_query is not None:
            return await self._pressed(update.update_id, update.callback_query)
        message = update.message
        if message is None or message.from_user is None:
            return None
        text = message.text or message.caption
        if text is None:
            return None
        replied = message.reply_to_message
        return InboundMessage(
            channel=self._name,
            chat=str(message.chat.id),
            sender=str(message.from_user.id),
            text=text,
            message_id=str(update.update_id),
            reply_to=None if replied is None else str(replied.message_id),
            received_at=message.date.astimezone(UTC),
            meta={"message_id": str(message.message_id)},
        )

    async def _pressed(self, update_id: int, query: CallbackQuery) -> InboundMessage | None:
        shown = query.message
        if query.data is None or shown is None:
            return None
        try:
            await self._bot.answer_callback_query(query.id)
        except TelegramError as exc:  # the press still counts; only the spinner stays
            logger.warning("telegram: could not answer a button press: %s", type(exc).__name__)
        label = ""
        if isinstance(shown, Message) and shown.reply_markup is not None:
            for row in shown.reply_markup.inline_keyboard:
                for button in row:
                    if button.callback_data == query.data:
                        label = button.text
        return InboundMessage(
            channel=self._name,
            chat=str(shown.chat.id),
            sender=str(query.from_user.id),
            text=label,
            message_id=str(update_id),
            reply_to=str(shown.message_id),
            action=query.data,
            received_at=datetime.now(UTC),
        )

    def allows(self, message: InboundMessage) -> bool:
        """Whether the sender's user id is in ``allowed_users``."""
        return message.sender.isdigit() and int(message.sender) in self.allowed_users

    async def acknowledge(self, message: InboundMessage) -> None:
        """Nothing to do at once: the next ``getUpdates`` confirms every update fetched
        (its ``offset`` is past them)."""

    async def reply(self, message: InboundMessage, text: str) -> SentMessage:
        """Answer ``message`` in its chat, as a reply to it (a button press: to the
        message the button was on).

        Raises:
            ChannelUnavailableError: Telegram cannot be reached or asks to wait.
            ToolFailed: Telegram refused the message (the bot was blocked, no such chat).
        """
        to = message.meta.get("message_id") or message.reply_to
        return await self._send(message.chat, text, reply_to=to)

    async def send(self, chat: str, text: str, *, actions: Sequence[Action] = ()) -> SentMessage:
        """Send ``text`` to ``chat``, with ``actions`` as an inline keyboard.

        Raises:
            ChannelUnavailableError: Telegram cannot be reached or asks to wait.
            ToolFailed: Telegram refused the message.
        """
        return await self._send(chat, text, actions=actions)

    async def notify(self, text: str, *, actions: Sequence[Action] = ()) -> SentMessage | None:
        """Send ``text`` to ``notify_chat``; ``None`` when there is none.

        Raises:
            ChannelUnavailableError: Telegram cannot be reached or asks to wait.
            ToolFailed: Telegram refused the message.
        """
        if self.notify_chat is None:
            return None
        return await self._send(str(self.notify_chat), text, actions=actions)

    async def _send(
        self,
        chat: str,
        text: str,
        *,
        reply_to: str | None = None,
        actions: Sequence[Action] = (),
    ) -> SentMessage:
        """Send ``text`` in pieces of at most 4096 characters; the buttons go with the
        last piece, which is the message returned."""
        pieces = [
            text[start : start + TELEGRAM_MAX_CHARS]
            for start in range(0, max(len(text), 1), TELEGRAM_MAX_CHARS)
        ]
        keyboard = None
        if actions:
            keyboard = InlineKeyboardMarkup(
                [[InlineKeyboardButton(a.label, callback_data=a.data) for a in actions]]
            )
        sent: Message | None = None
        for index, piece in enumerate(pieces):
            last = index == len(pieces) - 1
            try:
                sent = await self._bot.send_message(
                    chat,
                    piece or " ",
                    reply_parameters=None
                    if reply_to is None or index
                    else ReplyParameters(int(reply_to), allow_sending_without_reply=True),
                    reply_markup=keyboard if last else None,
                )
            except TelegramError as exc:
                raise self._mapped(exc, "sendMessage") from exc
        assert sent is not None
        return SentMessage(channel=self._name, chat=chat, message_id=str(sent.message_id))

    def _mapped(self, exc: TelegramError, method: str) -> Exception:
        """``exc`` in satchel's tree."""
        where = strip_userinfo(self.base_url)
        said = exc.message.replace(self._secret, "<token>")  # PTB quotes the token
        if isinstance(exc, InvalidToken):
            return SatchelUsageError(
                f"Telegram at {where} refused the bot token (401 Unauthorized, or no Bot "
                "API there): check SATCHEL_TELEGRAM_TOKEN and [telegram] base_url."
            )
        if isinstance(exc, RetryAfter):
            with warnings.catch_warnings():  # an int now, a timedelta in PTB 23
                warnings.simplefilter("ignore")
                seconds = exc.retry_after
            wait = seconds if isinstance(seconds, int) else seconds.total_seconds()
            return ChannelUnavailableError(
                f"Telegram asks to wait {wait:g} s before {method}",
                details={"retry_after": float(wait), "method": method},
            )
        if isinstance(exc, NetworkError):  # also TimedOut, and 5xx answers
            return ChannelUnavailableError(
                f"Telegram at {where} cannot be reached for {method}: {said}",
                details={"method": method},
            )
        return ToolFailed(f"Telegram refused {method}: {said}", details={"method": method})

    async def aclose(self) -> None:
        """Close the bot's HTTP connections."""
        try:
            if self._ready:
                self._ready = False
                await self._bot.shutdown()
        except TelegramError as exc:
            logger.debug("telegram: shutdown: %s", type(exc).__name__)
        finally:
            for logger_name in _QUOTING_LOGGERS:
                logging.getLogger(logger_name).removeFilter(self._hide)
