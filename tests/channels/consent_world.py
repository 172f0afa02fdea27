"""What the consent-on-a-channel tests run on: a real :class:`~satchel.Agent` whose
model speaks OpenAI's wire format from a local server (``tests/agent/fake_openai.py``),
a real SQLite memory store and approval store, and :class:`ChatChannel`, a small
in-memory :class:`~satchel.channels.InboundChannel` (the Telegram channel is tested on
its own fake Bot API server)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from anyio.abc import ObjectReceiveStream, ObjectSendStream

from agent.fake_openai import FakeOpenAI, completion, serving
from satchel import ToolRegistry, tool
from satchel.agent import Agent, RunResult
from satchel.agent._model_clients import OpenAIModel
from satchel.channels import Action, ChannelConsent, InboundMessage, SentMessage
from satchel.consent import (
    AnsweredConsent,
    PermissionBroker,
    SQLiteApprovalStore,
    with_approval,
)
from satchel.mcp import MemoryConsent
from satchel.memory import ConsentHandler, Permission, SQLiteStore

NOTES = "Plans."
"""The starting text of the ``notes`` block, which needs a human's consent to change."""


def reply(body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    """The scripted model: ``wipe PATH`` calls the destructive ``wipe`` tool, any other
    message appends itself to the ``notes`` block; after a tool result, the reply quotes
    that result (so the turn's reply shows what the held call did)."""
    last = body["messages"][-1]
    if last["role"] == "user":
        verb, _, rest = str(last["content"]).partition(" ")
        if verb == "wipe":
            return 200, completion(calls=[("wipe", {"path": rest})])
        append = {"operation": "append", "label": "notes", "content": last["content"]}
        return 200, completion(calls=[("context", append)])
    return 200, completion(f"Result: {last['content']}")


@contextmanager
def model_server() -> Iterator[str]:
    """The scripted model's server; yields its base URL."""
    with serving(FakeOpenAI(reply)) as url:
        yield url


@dataclass
class Sent:
    """One message the channel sent."""

    chat: str
    text: str
    actions: tuple[Action, ...]
    message: SentMessage
    reply_to: str | None = None


@dataclass
class ChatChannel:
    """An in-memory inbound channel named ``telegram``: it sends into a list (and a
    stream a test waits on), allows the senders in ``allowed``, and reaches
    ``notify_chat``."""

    allowed: set[str]
    notify_chat: str | None = "7"
    name: str = "telegram"
    sent: list[Sent] = field(default_factory=list[Sent])
    _count: int = 0
    _send: ObjectSendStream[Sent] | None = None
    _receive: ObjectReceiveStream[Sent] | None = None

    def __post_init__(self) -> None:
        self._send, self._receive = anyio.create_memory_object_stream[Sent](100)

    def _record(self, chat: str, text: str, actions: Sequence[Action], to: str | None) -> Sent:
        self._count += 1
        message = SentMessage(self.name, chat, f"s{self._count}")
        item = Sent(chat, text, tuple(actions), message, to)
        self.sent.append(item)
        assert self._send is not None
        self._send.send_nowait(item)
        return item

    async def next_sent(self) -> Sent:
        """The next message the channel sends (waits for it)."""
        assert self._receive is not None
        with anyio.fail_after(60):
            return await self._receive.receive()

    async def fetch(self) -> Sequence[InboundMessage]:
        return []

    def allows(self, message: InboundMessage) -> bool:
        return message.sender in self.allowed

    async def acknowledge(self, message: InboundMessage) -> None:
        return None

    async def reply(self, message: InboundMessage, text: str) -> SentMessage:
        return self._record(message.chat, text, (), message.message_id).message

    async def send(self, chat: str, text: str, *, actions: Sequence[Action] = ()) -> SentMessage:
        return self._record(chat, text, actions, None).message

    async def notify(self, text: str, *, actions: Sequence[Action] = ()) -> SentMessage | None:
        if self.notify_chat is None:
            return None
        return self._record(self.notify_chat, text, actions, None).message

    async def aclose(self) -> None:
        return None


class DictState:
    """A :class:`~satchel.channels.CursorStore` in a dict (the host keeps one in the
    agent's database; a test shares one dict across a "restart")."""

    def __init__(self, values: dict[str, str] | None = None) -> None:
        self.values = values if values is not None else {}

    async def get(self, key: str) -> str | None:
        return self.values.get(key)

    async def set(self, key: str, value: str) -> None:
        self.values[key] = value


@dataclass
class World:
    """Everything a test drives."""

    agent: Agent
    store: SQLiteStore
    broker: PermissionBroker
    channel: ChatChannel
    consent: ChannelConsent
    wiped: list[str]

    async def turn(self, text: str, chat: str = "42") -> RunResult:
        """One turn, as ``satchel up`` runs it for a message from ``chat``."""
        origin = f"telegram:{chat}"
        return await self.agent.run(text, conversation_id=origin, origin=origin)

    async def notes(self) -> str:
        return (await self.store.get_block("ada", "notes")).value

    def message(
        self,
        text: str,
        *,
        sender: str = "7",
        chat: str = "42",
        reply_to: str | None = None,
        action: str | None = None,
    ) -> InboundMessage:
        """A message the person (``sender``) sends in ``chat``."""
        self.channel._count += 1  # pyright: ignore[reportPrivateUsage]
        return InboundMessage(
            channel="telegram",
            chat=chat,
            sender=sender,
            text=text,
            message_id=f"in{self.channel._count}",  # pyright: ignore[reportPrivateUsage]
            reply_to=reply_to,
            action=action,
        )


@asynccontextmanager
async def world(
    db: Path,
    url: str,
    *,
    handler: str = "memory-consent",
    wait: float = 60.0,
    state: DictState | None = None,
    channel: ChatChannel | None = None,
) -> AsyncIterator[World]:
    """A world on the database ``db`` and the model at ``url``; ``handler`` picks the
    memory store's consent handler (``memory-consent``: :class:`MemoryConsent`, as
    ``satchel serve`` has; ``answered``: :class:`AnsweredConsent`, as ``satchel run``
    and ``satchel up`` have, where a write with no one to answer fails with
    ``ConsentRequiredError``; ``broker``: the broker itself)."""
    wiped: list[str] = []

    @tool(destructive=True)
    def wipe(path: str) -> str:
        """Delete a file."""
        wiped.append(path)
        return f"wiped {path}"

    async with PermissionBroker(SQLiteApprovalStore(db), poll_interval=0.05) as broker:
        handlers: dict[str, ConsentHandler] = {
            "memory-consent": MemoryConsent(broker),
            "answered": AnsweredConsent(broker),
            "broker": broker,
        }
        consent_handler = handlers[handler]
        async with SQLiteStore(db, embedder=None, consent=consent_handler) as store:
            if await store.list_blocks("ada") == []:
                await store.create_block("ada", "notes", NOTES, permission=Permission.HUMAN)
            async with OpenAIModel("fake-model", base_url=url, api_key="test-key") as model:
                agent = Agent(
                    "ada",
                    model,
                    memory=store,
                    tools=with_approval(ToolRegistry([wipe]), broker),
                    broker=broker,
                )
                chat = channel or ChatChannel(allowed={"7"})
                consent = ChannelConsent(broker, [chat], wait=wait, state=state)
                async with consent.running():
                    yield World(agent, store, broker, chat, consent, wiped)
