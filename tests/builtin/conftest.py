"""Fixtures for the built-in tool tests: a real SQLite store on a temporary file, the
four tools bound to it, and a helper to call them as an agent."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from fake_services import FakeServices, running_services
from satchel.builtin import Delivery, Endpoint, MessageRouter, OutgoingMessage, memory_toolset
from satchel.embed import MiniLMEmbedder
from satchel.memory import ConsentRequest, SQLiteStore
from satchel.registry import ToolRegistry
from satchel.tools import ToolContext, ToolResult


@dataclass
class Inbox:
    """A user callback that keeps what it is handed."""

    messages: list[OutgoingMessage] = field(default_factory=list[OutgoingMessage])

    async def __call__(self, message: OutgoingMessage) -> None:
        self.messages.append(message)


@dataclass
class Consent:
    """A consent handler with a fixed answer that records what it was asked."""

    answer: bool
    asked: list[ConsentRequest] = field(default_factory=list[ConsentRequest])

    async def __call__(self, request: ConsentRequest) -> bool:
        self.asked.append(request)
        return self.answer


@dataclass
class VirtualTime:
    """A clock and a sleep for :class:`~satchel.builtin.Delivery` that wait no real
    time: a sleep moves the clock on and records how long was asked for."""

    now: float = 1_000.0
    waits: list[float] = field(default_factory=list[float])

    def clock(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.waits.append(seconds)
        self.now += seconds
        await anyio.lowlevel.checkpoint()

    def delivery(self, **options: Any) -> Delivery:
        return Delivery(clock=self.clock, sleep=self.sleep, **options)


@dataclass
class Kit:
    """A store with the built-in tools bound to it."""

    store: SQLiteStore
    tools: ToolRegistry
    router: MessageRouter
    inbox: Inbox
    time: VirtualTime = field(default_factory=VirtualTime)

    def set_endpoint(self, kind: str, endpoint: Endpoint) -> None:
        """Deliver ``kind`` through ``endpoint``, and make the tools again so that
        ``send_message`` offers it."""
        self.router.set_endpoint(kind, endpoint)
        self.tools = memory_toolset(self.store, router=self.router)

    async def call(self, tool: str, args: dict[str, Any], agent: str = "ada") -> ToolResult:
        return await self.tools.call(tool, args, ToolContext(agent=agent, origin="test"))

    async def ok(self, tool: str, args: dict[str, Any], agent: str = "ada") -> dict[str, Any]:
        result = await self.call(tool, args, agent)
        assert result.ok, result.to_text()
        out = result.structured()
        assert out is not None
        return out

    async def error(self, tool: str, args: dict[str, Any], agent: str = "ada") -> Any:
        result = await self.call(tool, args, agent)
        assert result.error is not None, result.to_text()
        return result.error


async def make_kit(path: Path, **store_options: Any) -> Kit:
    store_options.setdefault("embedder", None)
    store = await SQLiteStore.open(path, **store_options)
    inbox = Inbox()
    router = MessageRouter(store, user=inbox, groups={"team": ["ada", "bob", "cy"]})
    return Kit(store=store, tools=memory_toolset(store, router=router), router=router, inbox=inbox)


@pytest.fixture
async def kit(tmp_path: Path) -> AsyncIterator[Kit]:
    made = await make_kit(tmp_path / "memory.db")
    yield made
    await made.store.close()


@pytest.fixture(scope="session")
def minilm() -> MiniLMEmbedder:
    return MiniLMEmbedder()


@pytest.fixture
def services() -> Iterator[FakeServices]:
    with running_services() as state:
        yield state
