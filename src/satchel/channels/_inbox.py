"""The local HTTP inbox (``[inbox]`` in the channels file): an :class:`InboundChannel`
for scripts, phone shortcuts and webhooks, served by uvicorn on loopback.

A script posts a message with the inbox's token and gets its id (or waits for the
reply); ``satchel up`` fetches it like any channel's message and answers it with
:meth:`InboxChannel.reply`; reminders and consent requests the agent sends on its own
(:meth:`~InboxChannel.notify`, :meth:`~InboxChannel.send`) wait at ``GET
/notifications`` for a phone shortcut to pick up. The routes are in
:mod:`satchel.channels._inbox_app`.

What the inbox holds lives in memory: a message posted but not answered when the
process stops is not answered after a restart (its poster sees it pending, then
``404``), and the notifications start again from ``seq`` 1.

uvicorn runs on asyncio, so the inbox does too.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
from collections.abc import Generator, Sequence
from typing import Final

import uvicorn

from satchel.channels._inbound import (
    Action,
    ChannelUnavailableError,
    InboundMessage,
    SentMessage,
)
from satchel.channels._inbox_app import Mailbox, inbox_app
from satchel.channels._inbox_config import InboxConfig

__all__ = ["InboxChannel", "inbox_channel"]

logger = logging.getLogger("satchel.channels.inbox")

NOTIFY_CHAT: Final = "notify"
"""The :attr:`SentMessage.chat` of what :meth:`InboxChannel.notify` sends."""


class _QuietServer(uvicorn.Server):
    """uvicorn inside a process that handles its own signals (``satchel up``/``serve``)."""

    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None]:
        yield


class InboxChannel:
    """The local HTTP inbox as an :class:`~satchel.channels.InboundChannel`.

    It starts listening on the first :meth:`start`, :meth:`fetch` or :meth:`notify`
    and stops in :meth:`aclose`.

    Args:
        config: The ``[inbox]`` section.
        poll: The longest a :meth:`fetch` waits for a message, in seconds.

    Example:
        >>> inbox = InboxChannel(InboxConfig(token="a-long-enough-token", port=0))
        >>> url = await inbox.start()  # doctest: +SKIP
        >>> messages = await inbox.fetch()  # doctest: +SKIP
    """

    def __init__(self, config: InboxConfig, *, poll: float = 25.0) -> None:
        self.config = config
        self.poll = poll
        self.mailbox = Mailbox(config.allowed_senders)
        self.url: str | None = None
        """``http://host:port`` once listening."""
        self._server: _QuietServer | None = None
        self._task: asyncio.Task[None] | None = None

    @property
    def name(self) -> str:
        """``"inbox"``."""
        return "inbox"

    async def start(self) -> str:
        """Listen (once; later calls return at once) and return the inbox's base URL.

        Raises:
            ChannelUnavailableError: The address cannot be listened on (a busy port).
        """
        if self.url is not None:
            return self.url
        host, port = self.config.host, self.config.port
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind((host, port))
            sock.listen(128)
        except OSError as exc:
            sock.close()
            raise ChannelUnavailableError(
                f"the inbox cannot listen on {host}:{port}: {exc.strerror or exc}"
            ) from exc
        app = inbox_app(
            self.mailbox, self.config.token.get_secret_value(), max_wait=self.config.max_wait
        )
        config = uvicorn.Config(
            app,
            http="h11",
            lifespan="off",
            log_config=None,
            access_log=False,
            timeout_graceful_shutdown=2,
        )
        self._server = _QuietServer(config)
        shown = f"[{host}]" if ":" in host else host
        self.url = f"http://{shown}:{sock.getsockname()[1]}"
        self._task = asyncio.get_running_loop().create_task(self._serve(self._server, sock))
        logger.info("the inbox listens at %s", self.url)
        return self.url

    @staticmethod
    async def _serve(server: uvicorn.Server, sock: socket.socket) -> None:
        try:
            await server.serve(sockets=[sock])
        except Exception:  # a boundary: the inbox stops, the process goes on
            logger.exception("the inbox stopped")
        finally:
            sock.close()

    async def fetch(self) -> Sequence[InboundMessage]:
        """Wait up to :attr:`poll` seconds for posted messages; return them oldest first.

        Raises:
            ChannelUnavailableError: The inbox cannot listen.
        """
        await self.start()
        return await self.mailbox.take(self.poll)

    def allows(self, message: InboundMessage) -> bool:
        """Whether the message's sender is allowed (a post from another is refused with
        ``403`` before it is queued, so every fetched message is)."""
        return self.mailbox.allows(message.sender)

    async def acknowledge(self, message: InboundMessage) -> None:
        """Nothing to move: a fetched message is never fetched again by this process."""

    async def reply(self, message: InboundMessage, text: str) -> SentMessage:
        """Make ``text`` the reply its poster waits for or reads at ``GET
        /messages/{id}``."""
        if not self.mailbox.answer(message.message_id, text):
            logger.warning(
                "the inbox no longer knows message %s; reply dropped", message.message_id
            )
        return SentMessage(channel=self.name, chat=message.chat, message_id=message.message_id)

    async def send(self, chat: str, text: str, *, actions: Sequence[Action] = ()) -> SentMessage:
        """Add a notification for ``chat`` to ``GET /notifications``."""
        await self.start()
        note = self.mailbox.note(text, chat, actions)
        return SentMessage(channel=self.name, chat=chat, message_id=f"n{note.seq}")

    async def notify(self, text: str, *, actions: Sequence[Action] = ()) -> SentMessage:
        """Add a notification to ``GET /notifications``, where the person picks it up."""
        await self.start()
        note = self.mailbox.note(text, None, actions)
        return SentMessage(channel=self.name, chat=NOTIFY_CHAT, message_id=f"n{note.seq}")

    async def aclose(self) -> None:
        """Stop listening."""
        server, task = self._server, self._task
        self._server = self._task = None
        self.url = None
        if server is None or task is None:
            return
        server.should_exit = True
        with contextlib.suppress(asyncio.CancelledError):
            await task


def inbox_channel(config: InboxConfig) -> InboxChannel:
    """The inbox of the ``[inbox]`` section ``config``; it listens once started.

    Example:
        >>> channel = inbox_channel(load_channels("channels.toml").inbox)  # doctest: +SKIP
    """
    return InboxChannel(config)
