"""The host of ``satchel up``: an agent (or a team) answering people on inbound
channels.

One task per channel fetches; each message then goes, in this order, through:

1. the allow-list (:meth:`~satchel.channels.InboundChannel.allows`): a stranger's
   message is refused, logged and acknowledged, and never reaches the model;
2. the ledger (:class:`~satchel.up.UpLedger`): a message answered before (by an earlier
   run of the process) is only acknowledged;
3. the interceptors, in the order registered: one that returns ``True`` has consumed
   the message (a consent answer, see ``ChannelConsent.intercept``), which is then
   marked and acknowledged with no turn;
4. its chat's queue: one task per chat (per :attr:`InboundMessage.origin
   <satchel.channels.InboundMessage.origin>`) runs its turns one at a time, in the
   chat's own conversation, with the message's origin; the message is marked answered
   in the ledger, the reply goes back with ``channel.reply``, then the message is
   acknowledged.

Fetching goes on while turns run, so an answer to a consent request that a turn waits
for is fetched and intercepted meanwhile (interceptors run in the fetching task, never
behind the chat's queue). A channel that is unavailable is fetched again after an
exponential backoff with jitter (at most ``max_backoff`` seconds), logged once per
outage.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from functools import partial

import anyio
from anyio.abc import ObjectReceiveStream, ObjectSendStream, TaskGroup

from satchel._errors import SatchelError, SatchelUsageError, StorageError
from satchel.agent import Agent, AgentTeam
from satchel.channels import (
    ChannelUnavailableError,
    InboundChannel,
    InboundMessage,
    notify_channels,
)
from satchel.toolkit import MemoryAgenda, deliver_reminders
from satchel.up._backoff import Backoff
from satchel.up._ledger import UpLedger

__all__ = ["Host", "Interceptor"]

logger = logging.getLogger("satchel.up")

Interceptor = Callable[[InboundMessage], Awaitable[bool]]
"""Called with each allowed message before its turn; ``True`` consumes it (no turn)."""

_Item = tuple[InboundChannel, InboundMessage]
_QUEUE = 100
_REPLY_ATTEMPTS = 5
_FAILED_TURN = "Sorry, I could not answer that just now; please try again in a moment."


@dataclass(kw_only=True)
class Host:
    """Runs an agent's turns for messages from inbound channels, until cancelled.

    Attributes:
        agent: The agent that answers, or a team (its ``entry`` agent answers first).
        channels: Where messages come from and replies go.
        ledger: Answered messages and channel cursors, in the agent's database.
        entry: With a team: the agent that answers people.
        interceptors: Called before each turn; see :data:`Interceptor`.
        agenda: With one, reminders and task nudges fall due while the host runs and
            reach the person on every channel (:func:`~satchel.channels.notify_channels`).
        max_backoff: The longest wait between two fetches of an unavailable channel.
        reminder_wait: The longest wait between two looks for due reminders.

    Example:
        >>> host = Host(agent=agent, channels=[telegram], ledger=open_ledger("satchel.db"))
        >>> host.intercept(consent.intercept)
        >>> await host.run()
    """

    agent: Agent | AgentTeam
    channels: Sequence[InboundChannel]
    ledger: UpLedger
    entry: str | None = None
    interceptors: list[Interceptor] = field(default_factory=list[Interceptor])
    agenda: MemoryAgenda | None = None
    max_backoff: float = 60.0
    reminder_wait: float = 30.0
    _chats: dict[str, ObjectSendStream[_Item]] = field(
        default_factory=dict[str, ObjectSendStream[_Item]], repr=False
    )
    _busy: set[tuple[str, str]] = field(default_factory=set[tuple[str, str]], repr=False)
    _team_lock: anyio.Lock = field(default_factory=anyio.Lock, repr=False)

    def __post_init__(self) -> None:
        team = self.agent
        if isinstance(team, AgentTeam) and (self.entry is None or self.entry not in team.agents):
            raise SatchelUsageError(
                f"A team needs entry=, the agent that answers people; the team has "
                f"{sorted(team.agents)}."
            )
        names = [channel.name for channel in self.channels]
        if len(set(names)) != len(names):
            raise SatchelUsageError(f"Two channels share a name: {names}.")

    def intercept(self, interceptor: Interceptor) -> None:
        """Register ``interceptor``: it sees every allowed message before its turn."""
        self.interceptors.append(interceptor)

    @property
    def agent_names(self) -> list[str]:
        """The agents whose reminders the host delivers."""
        if isinstance(self.agent, AgentTeam):
            return list(self.agent.agents)
        return [self.agent.name]

    async def run(self) -> None:
        """Fetch from every channel and answer, until cancelled.

        Raises:
            SatchelUsageError: A channel refused its credentials (a Telegram 401).
        """
        try:
            await self._run()
        except BaseExceptionGroup as group:  # one channel's refused credentials
            refused = group.subgroup(SatchelUsageError)
            if refused is None:
                raise
            first: BaseException = refused
            while isinstance(first, BaseExceptionGroup):
                first = first.exceptions[0]  # pyright: ignore[reportUnknownMemberType]
            raise first from None

    async def _run(self) -> None:
        async with anyio.create_task_group() as group:
            if self.agenda is not None:
                notify = notify_channels(self.channels)
                group.start_soon(
                    partial(
                        deliver_reminders,
                        self.agenda,
                        self.agent_names,
                        notify=notify,
                        max_wait=self.reminder_wait,
                    )
                )
            for channel in self.channels:
                group.start_soon(self._listen, group, channel)

    async def _listen(self, group: TaskGroup, channel: InboundChannel) -> None:
        backoff = Backoff(cap=self.max_backoff)
        while True:
            try:
                messages = await channel.fetch()
            except ChannelUnavailableError as exc:
                wait = backoff.next(float(exc.details.get("retry_after", 0.0)))
                if backoff.failures == 1:
                    logger.warning(
                        "%s is unavailable (%s); fetching again with backoff",
                        channel.name,
                        exc.message,
                    )
                await anyio.sleep(wait)
                continue
            if backoff.failures:
                logger.warning("%s is back after %d failed fetches", channel.name, backoff.failures)
                backoff.reset()
            for message in messages:
                await self.receive(group, channel, message)

    async def receive(
        self, group: TaskGroup, channel: InboundChannel, message: InboundMessage
    ) -> None:
        """Take one fetched ``message``: refuse it, skip it, let an interceptor consume
        it, or queue its turn on its chat's task (started in ``group``)."""
        key = (channel.name, message.message_id)
        if key in self._busy:
            return  # fetched again while its turn runs
        if not channel.allows(message):
            logger.warning(
                "refused a message from %s on %s: not on the allow-list (message %s)",
                message.sender,
                message.origin,
                message.message_id,
            )
            await self._acknowledge(channel, message)
            return
        if await self._stored(partial(self.ledger.answered, channel.name, message.message_id)):
            logger.info("message %s on %s was answered before", message.message_id, channel.name)
            await self._acknowledge(channel, message)
            return
        for interceptor in self.interceptors:
            try:
                consumed = await interceptor(message)
            except Exception:  # a boundary: one interceptor's bug must not stop the host
                logger.exception("an interceptor failed on message %s", message.message_id)
                continue
            if consumed:
                await self._stored(partial(self.ledger.mark, channel.name, message.message_id))
                await self._acknowledge(channel, message)
                return
        self._busy.add(key)
        queue = self._chats.get(message.origin)
        if queue is None:
            queue, inbox = anyio.create_memory_object_stream[_Item](_QUEUE)
            self._chats[message.origin] = queue
            group.start_soon(self._chat, inbox)
        await queue.send((channel, message))

    async def _chat(self, inbox: ObjectReceiveStream[_Item]) -> None:
        async with inbox:
            async for channel, message in inbox:
                try:
                    await self.answer(channel, message)
                finally:
                    self._busy.discard((channel.name, message.message_id))

    async def answer(self, channel: InboundChannel, message: InboundMessage) -> None:
        """Run ``message``'s turn, mark it answered, reply and acknowledge it."""
        text = await self._turn(message)
        if not await self._stored(partial(self.ledger.mark, channel.name, message.message_id)):
            logger.info("message %s on %s was answered elsewhere", message.message_id, channel.name)
        elif text:
            await self._reply(channel, message, text)
        await self._acknowledge(channel, message)

    async def _turn(self, message: InboundMessage) -> str:
        said = message.text
        if message.action is not None and not said:
            said = f"[pressed the button {message.action!r}]"
        try:
            if isinstance(self.agent, AgentTeam):
                assert self.entry is not None
                async with self._team_lock:  # a team's wakes are one queue
                    result = await self.agent.run(
                        self.entry, said, conversation_id=message.origin, origin=message.origin
                    )
                return result.reply
            run = await self.agent.run(said, conversation_id=message.origin, origin=message.origin)
        except SatchelUsageError:
            raise
        except Exception:  # a boundary: a failed turn gets an apology, the host goes on
            logger.exception(
                "the turn for message %s on %s failed", message.message_id, message.origin
            )
            return _FAILED_TURN
        if run.stop == "needs_approval" and not run.reply:
            return f"I need approval first ({', '.join(run.pending_approvals)})."
        return run.reply

    async def _reply(self, channel: InboundChannel, message: InboundMessage, text: str) -> None:
        backoff = Backoff(cap=self.max_backoff)
        for attempt in range(1, _REPLY_ATTEMPTS + 1):
            try:
                await channel.reply(message, text)
                return
            except ChannelUnavailableError as exc:
                if attempt == _REPLY_ATTEMPTS:
                    logger.error(
                        "could not reply to message %s on %s: %s",
                        message.message_id,
                        message.origin,
                        exc.message,
                    )
                    return
                await anyio.sleep(backoff.next(float(exc.details.get("retry_after", 0.0))))
            except SatchelUsageError:
                raise
            except SatchelError as exc:
                logger.error(
                    "%s refused the reply to message %s: %s",
                    message.origin,
                    message.message_id,
                    exc.message,
                )
                return

    async def _stored(self, step: Callable[[], Awaitable[bool]]) -> bool:
        """``step`` on the ledger, tried again with backoff while the database fails (a
        message waits rather than risk being answered twice)."""
        backoff = Backoff(cap=self.max_backoff)
        while True:
            try:
                done = await step()
            except StorageError as exc:
                if backoff.failures == 0:
                    logger.error("the ledger cannot be reached (%s); trying again", exc.message)
                await anyio.sleep(backoff.next())
                continue
            if backoff.failures:
                logger.warning("the ledger is back after %d failures", backoff.failures)
            return done

    async def _acknowledge(self, channel: InboundChannel, message: InboundMessage) -> None:
        try:
            await channel.acknowledge(message)
        except ChannelUnavailableError as exc:  # fetched again later; the ledger skips it
            logger.warning(
                "could not acknowledge message %s on %s: %s",
                message.message_id,
                channel.name,
                exc.message,
            )
