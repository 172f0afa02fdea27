"""Consent answered where it was asked: :class:`ChannelConsent` announces each approval
request in the chat its turn came from (``telegram:123456789``), with Approve and Deny
buttons where the platform has them, and takes the person's answer there.

How the pieces meet in ``satchel up``:

* the host runs each inbound message as a turn with its origin, so a held memory write
  or tool call files its request with that origin;
* while :meth:`ChannelConsent.running` is entered, the broker's
  :meth:`~satchel.consent.PermissionBroker.answer_wait` tells the approval gate and the
  memory consent handlers that someone answers requests from these channels, so the
  held call waits for the answer (:attr:`ChannelConsent.wait` seconds, after which the
  request expires as a refusal) instead of being refused at once;
* the host fetches on while turns run and gives every allowed message to
  :meth:`ChannelConsent.intercept` first: a reply to an announcement, a button press or
  ``approve <id>`` / ``deny <id>`` resolves the request (binding unchanged: that agent,
  that tool or block, that operation, those arguments), the held call runs once, and
  its turn goes on with the result.

The announcement's message id maps to its request in memory and, given a
:class:`~satchel.channels.CursorStore` (the host keeps one in the agent's database), on
disk, so a reply after a restart still resolves its request. A request nobody answers
expires as a refusal, as everywhere else.

Requests whose origin is not a chat of these channels (a turn started by a reminder, a
team member's wake-up) go to every channel's :meth:`~InboundChannel.notify`; the call
that asked goes its usual way, and an approval given there is used by its next try.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Final

import anyio
from anyio.abc import ObjectReceiveStream

from satchel._errors import SatchelError, SatchelUsageError
from satchel.channels._consent_text import (
    APPROVE_DATA,
    DENY_DATA,
    announcement,
    answer_buttons,
    command,
    verdict,
    what_is_asked,
)
from satchel.channels._inbound import CursorStore, InboundChannel, InboundMessage, SentMessage
from satchel.consent import ApprovalError, ApprovalRequest, Decision, PermissionBroker

__all__ = ["ChannelConsent"]

logger = logging.getLogger("satchel.channels")

DEFAULT_CONSENT_WAIT: Final = 300.0
"""Seconds a held call waits for the person's answer on a channel by default."""

_QUEUE: Final = 100
_DRAIN_SECONDS: Final = 5.0
_STATE_KEY: Final = "consent:{channel}:{chat}:{message_id}"


class ChannelConsent:
    """Announces approval requests on inbound channels and resolves them from the
    person's answers there (see the module docstring).

    Args:
        broker: The broker the agent's held calls file their requests with.
        channels: The inbound channels, by name (``{"telegram": channel}``) or as a
            sequence (named by :attr:`InboundChannel.name`).
        wait: Seconds a call held for consent from one of these channels waits for the
            person's answer; the request expires then, as a refusal.
        state: Where announcements are remembered across restarts (the host's
            :class:`~satchel.channels.CursorStore`); in memory only when ``None``.

    Raises:
        SatchelUsageError: ``wait`` is not positive.

    Example:
        >>> consent = ChannelConsent(broker, {"telegram": telegram}, state=cursors)
        >>> host.intercept(consent.intercept)
        >>> async with consent.running():
        ...     await host.serve()
    """

    def __init__(
        self,
        broker: PermissionBroker,
        channels: Mapping[str, InboundChannel] | Sequence[InboundChannel],
        *,
        wait: float = DEFAULT_CONSENT_WAIT,
        state: CursorStore | None = None,
    ) -> None:
        if not wait > 0:
            raise SatchelUsageError(f"wait must be a positive number of seconds, got {wait!r}.")
        self.broker = broker
        self.channels: dict[str, InboundChannel] = (
            dict(channels) if isinstance(channels, Mapping) else {c.name: c for c in channels}
        )
        self.wait = float(wait)
        self.state = state
        self._announced: dict[str, str] = {}  # _STATE_KEY -> request id
        self._by_chat: dict[str, list[str]] = {}  # origin -> request ids announced there

    # -- who answers where -------------------------------------------------------

    def answer_wait(self, origin: str) -> float | None:
        """How long a call held for consent from ``origin`` waits for the person's
        answer: :attr:`wait` for a chat of one of these channels, else ``None``."""
        channel, _, chat = origin.partition(":")
        return self.wait if chat and channel in self.channels else None

    @asynccontextmanager
    async def running(self) -> AsyncGenerator[ChannelConsent]:
        """While inside, announce every new request the broker files, and make the
        calls held for consent from these channels wait for the answer. On exit,
        announcements under way get a few seconds to finish."""
        send, receive = anyio.create_memory_object_stream[ApprovalRequest](_QUEUE)
        async with anyio.create_task_group() as group:
            group.start_soon(self._drain, receive)

            def offer(request: ApprovalRequest) -> None:
                try:
                    send.send_nowait(request)
                except anyio.WouldBlock:
                    logger.warning("too many approval requests to announce; %s is not", request.id)
                except anyio.ClosedResourceError:
                    pass

            unsubscribe = self.broker.subscribe(offer)
            unanswer = self.broker.add_answerer(self.answer_wait)
            try:
                yield self
            finally:
                unanswer()
                unsubscribe()
                await send.aclose()
                group.cancel_scope.deadline = anyio.current_time() + _DRAIN_SECONDS

    async def _drain(self, receive: ObjectReceiveStream[ApprovalRequest]) -> None:
        async with receive:
            async for request in receive:
                await self.announce(request)

    # -- announcing ----------------------------------------------------------------

    async def announce(self, request: ApprovalRequest) -> list[SentMessage]:
        """Announce ``request`` in the chat it came from, or through every channel's
        :meth:`~InboundChannel.notify` when its origin is not a chat of these channels;
        nothing once it is no longer pending. A failed send is logged, never raised:
        the request stands (and expires) either way.

        Returns:
            The announcements sent.
        """
        current = await self.broker.get(request.id)
        if current is None or current.status != "pending":
            return []
        text, actions = announcement(current), answer_buttons(current.id)
        name, _, chat = current.origin.partition(":")
        sent: list[SentMessage] = []
        home = self.channels.get(name) if chat else None
        targets = [(name, home)] if home is not None else list(self.channels.items())
        for channel_name, channel in targets:
            try:
                if home is not None:
                    message = await channel.send(chat, text, actions=actions)
                else:
                    message = await channel.notify(text, actions=actions)
            except SatchelError as exc:
                logger.warning(
                    "could not announce approval request %s on %s: %s",
                    current.id,
                    channel_name,
                    exc.message,
                )
                continue
            if message is not None:
                await self._remember(message, current.id)
                sent.append(message)
        if sent:
            logger.info("announced approval request %s on %s", current.id, current.origin)
        return sent

    async def _remember(self, message: SentMessage, request_id: str) -> None:
        key = _STATE_KEY.format(
            channel=message.channel, chat=message.chat, message_id=message.message_id
        )
        self._announced[key] = request_id
        self._by_chat.setdefault(f"{message.channel}:{message.chat}", []).append(request_id)
        if self.state is not None:
            try:
                await self.state.set(key, request_id)
            except SatchelError as exc:
                logger.warning("could not remember announcement of %s: %s", request_id, exc.message)

    async def _announced_as(self, message: InboundMessage) -> str | None:
        """The request the message replies to, if it replies to an announcement."""
        if message.reply_to is None:
            return None
        key = _STATE_KEY.format(
            channel=message.channel, chat=message.chat, message_id=message.reply_to
        )
        found = self._announced.get(key)
        if found is None and self.state is not None:
            found = await self.state.get(key)
        return found

    # -- answering -----------------------------------------------------------------

    async def intercept(self, message: InboundMessage) -> bool:
        """Take ``message`` if it answers an approval request: a button press, a reply
        of yes or no to an announcement, ``approve <id>`` / ``deny <id>``, or a plain
        yes or no in a chat with exactly one request waiting. Only from a sender the
        channel :meth:`~InboundChannel.allows` (a stranger's message is left to the
        host, which refuses it). The request is resolved ``by="<channel>:<sender>"``
        and the answer confirmed in the chat; an unknown, expired or already answered
        request gets a short answer.

        Returns:
            ``True`` when the message was an answer (consumed: no turn runs for it);
            ``False`` for anything else, ambiguous text included.
        """
        channel = self.channels.get(message.channel)
        if channel is None or not channel.allows(message):
            return False
        answer = await self._answer_in(message)
        if answer is None:
            return False
        request_id, approve = answer
        decision = Decision.approve_once() if approve else Decision.deny()
        by = f"{message.channel}:{message.sender}"
        try:
            decided = await self.broker.resolve(request_id, decision, by=by)
        except ApprovalError as exc:
            text = await self._stale(request_id, exc)
        else:
            logger.info("approval request %s %s by %s", request_id, decided.status, by)
            agent, what = decided.agent, what_is_asked(decided)
            text = (
                f"Approved: agent {agent!r} may {what} (request {request_id})."
                if approve
                else f"Denied: agent {agent!r} may not {what} (request {request_id}); nothing runs."
            )
        try:
            await channel.reply(message, text)
        except SatchelError as exc:
            logger.warning("could not confirm the answer to %s: %s", request_id, exc.message)
        return True

    async def _answer_in(self, message: InboundMessage) -> tuple[str, bool] | None:
        """The request ``message`` answers and whether it approves, or ``None``."""
        if message.action is not None:
            for start, approve in ((APPROVE_DATA, True), (DENY_DATA, False)):
                if message.action.startswith(start) and len(message.action) > len(start):
                    return message.action[len(start) :], approve
            return None
        commanded = command(message.text)
        if commanded is not None:
            return commanded
        said = verdict(message.text)
        if said is None:
            return None
        replied = await self._announced_as(message)
        if replied is not None:
            return replied, said
        if message.reply_to is not None:
            return None  # a yes to some other message of the chat
        waiting = await self._waiting_in(message.origin)
        return (waiting[0], said) if len(waiting) == 1 else None

    async def _waiting_in(self, origin: str) -> list[str]:
        """The requests announced in the chat ``origin`` that still wait."""
        still: list[str] = []
        for request_id in self._by_chat.get(origin, []):
            current = await self.broker.get(request_id)
            if current is not None and current.status == "pending":
                still.append(request_id)
        self._by_chat[origin] = still
        return still

    async def _stale(self, request_id: str, error: ApprovalError) -> str:
        if error.reason == "unknown":
            return f"There is no approval request {request_id}."
        current = await self.broker.get(request_id)
        if current is None or current.status == "expired":
            return f"Request {request_id} has expired; nothing ran."
        by = f" by {current.decided_by}" if current.decided_by else ""
        return f"Request {request_id} was already answered ({current.status}{by})."
