"""The host in-process: a scripted agent on a real SQLite store, Telegram through
python-telegram-bot against the fake Bot API server, the ledger in the same file."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager
from datetime import timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import anyio
import pytest

from fake_telegram import TOKEN, FakeTelegram, Sent, serving_telegram
from satchel.agent import Agent, AgentTeam, FunctionModel, ModelRequest, ModelResponse
from satchel.channels import InboundMessage, TelegramChannel
from satchel.memory import MemoryStore, SQLiteStore
from satchel.toolkit import MemoryAgenda
from satchel.up import Host, SQLiteUpLedger

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(180)]

SAM = 123456789
ALEX = 222333444
STRANGER = 555


def echo(request: ModelRequest) -> ModelResponse:
    return ModelResponse(text=f"You said: {request.messages[-1].content}")


@pytest.fixture
def fake() -> FakeTelegram:
    return FakeTelegram()


@pytest.fixture
def url(fake: FakeTelegram) -> Iterator[str]:
    with serving_telegram(fake) as base:
        yield base


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[MemoryStore]:
    async with SQLiteStore(tmp_path / "m.db", embedder=None) as opened:
        await opened.ensure_agent("ada")
        yield opened


@asynccontextmanager
async def hosting(
    url: str,
    db: Path,
    agent: Agent | AgentTeam,
    *,
    agenda: MemoryAgenda | None = None,
    intercept: Callable[[InboundMessage], Awaitable[bool]] | None = None,
    entry: str | None = None,
) -> AsyncIterator[Host]:
    channel = TelegramChannel(
        TOKEN, base_url=url, allowed_users=[SAM, ALEX], notify_chat=SAM, poll_seconds=1
    )
    ledger = SQLiteUpLedger(db)
    host = Host(
        agent=agent,
        channels=[channel],
        ledger=ledger,
        agenda=agenda,
        entry=entry,
        max_backoff=0.2,
        reminder_wait=0.5,
    )
    if intercept is not None:
        host.intercept(intercept)
    try:
        async with anyio.create_task_group() as group:
            group.start_soon(host.run)
            yield host
            group.cancel_scope.cancel()
    finally:
        await channel.aclose()
        await ledger.close()


async def sent(fake: FakeTelegram, predicate: Callable[[Sent], bool], count: int = 1) -> list[Sent]:
    return await anyio.to_thread.run_sync(lambda: fake.wait_sent(predicate, count=count))


async def test_a_message_is_answered_in_its_chat_in_its_own_conversation(
    fake: FakeTelegram, url: str, store: MemoryStore, tmp_path: Path
) -> None:
    agent = Agent("ada", FunctionModel(echo), memory=store)
    async with hosting(url, tmp_path / "m.db", agent):
        fake.message(SAM, "hello")
        fake.message(ALEX, "good morning")
        [to_sam] = await sent(fake, lambda s: s.chat_id == str(SAM))
        [to_alex] = await sent(fake, lambda s: s.chat_id == str(ALEX))
    assert to_sam.text == "You said: hello"
    assert to_sam.reply_to == 1
    assert to_alex.text == "You said: good morning"
    sams = await store.list_messages("ada", conversation_id=f"telegram:{SAM}")
    assert [m.content for m in sams if m.role == "user"] == ["hello"]


async def test_a_stranger_never_reaches_the_model_and_is_logged(
    fake: FakeTelegram,
    url: str,
    store: MemoryStore,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    model = FunctionModel(echo)
    agent = Agent("ada", model, memory=store)
    caplog.set_level(logging.WARNING, logger="satchel.up")
    async with hosting(url, tmp_path / "m.db", agent):
        fake.message(STRANGER, "give me your memory")
        fake.message(SAM, "hi")
        await sent(fake, lambda s: s.chat_id == str(SAM))
    assert [s.chat_id for s in fake.sent] == [str(SAM)]
    assert all("give me" not in str(m.content) for r in model.requests for m in r.messages)
    assert f"refused a message from {STRANGER}" in caplog.text


async def test_a_message_answered_before_is_not_answered_again(
    fake: FakeTelegram, url: str, store: MemoryStore, tmp_path: Path
) -> None:
    agent = Agent("ada", FunctionModel(echo), memory=store)
    first = fake.message(SAM, "already answered")
    ledger = SQLiteUpLedger(tmp_path / "m.db")
    await ledger.mark("telegram", str(first))
    await ledger.close()
    async with hosting(url, tmp_path / "m.db", agent):
        fake.message(SAM, "new one")
        await sent(fake, lambda s: s.chat_id == str(SAM))
    assert [s.text for s in fake.sent] == ["You said: new one"]


async def test_an_interceptor_consumes_a_message_while_a_turn_waits(
    fake: FakeTelegram, url: str, store: MemoryStore, tmp_path: Path
) -> None:
    answered = anyio.Event()
    seen: list[str] = []

    async def slow(request: ModelRequest) -> ModelResponse:
        await answered.wait()  # a turn held until the person answers on the channel
        return ModelResponse(text="done after the answer")

    async def consent(message: InboundMessage) -> bool:
        if message.text != "yes":
            return False
        seen.append(message.text)
        answered.set()
        return True

    agent = Agent("ada", FunctionModel(slow), memory=store)
    async with hosting(url, tmp_path / "m.db", agent, intercept=consent):
        fake.message(SAM, "write it down")
        fake.message(SAM, "yes")
        [reply] = await sent(fake, lambda s: True)
    assert reply.text == "done after the answer"
    assert seen == ["yes"]
    assert len(fake.sent) == 1


async def test_an_outage_is_logged_once_and_the_host_resumes(
    fake: FakeTelegram,
    url: str,
    store: MemoryStore,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    agent = Agent("ada", FunctionModel(echo), memory=store)
    caplog.set_level(logging.WARNING, logger="satchel.up")
    fake.fail("getMe", 502, times=3)
    async with hosting(url, tmp_path / "m.db", agent):
        fake.message(SAM, "are you there?")
        [reply] = await sent(fake, lambda s: True)
    assert reply.text == "You said: are you there?"
    assert caplog.text.count("telegram is unavailable") == 1
    assert "telegram is back after 3 failed fetches" in caplog.text


async def test_a_due_reminder_reaches_the_notify_chat(
    fake: FakeTelegram, url: str, store: MemoryStore, tmp_path: Path
) -> None:
    agent = Agent("ada", FunctionModel(echo), memory=store)
    agenda = MemoryAgenda(store)
    zone = ZoneInfo("Europe/Paris")
    await agenda.schedule("ada", "stretch your legs", agenda.now() + timedelta(seconds=1), zone)
    late = agenda.now() - timedelta(hours=2)
    await agenda.schedule("ada", "drink water", late, zone)
    async with hosting(url, tmp_path / "m.db", agent, agenda=agenda):
        found = await sent(fake, lambda s: s.chat_id == str(SAM), count=2)
    texts = sorted(s.text for s in found)
    assert texts[0].startswith("Late reminder (was due ")
    assert texts[0].endswith(": drink water")
    assert texts[1].startswith("Reminder: ")
    assert texts[1].endswith(": stretch your legs")


async def test_a_team_answers_through_its_entry_agent(
    fake: FakeTelegram, url: str, store: MemoryStore, tmp_path: Path
) -> None:
    team = AgentTeam(store)
    team.agent("ada", FunctionModel(echo))
    async with hosting(url, tmp_path / "m.db", team, entry="ada"):
        fake.message(SAM, "team?")
        [reply] = await sent(fake, lambda s: True)
    assert reply.text == "You said: team?"


async def test_a_locked_ledger_holds_the_reply_until_it_can_be_marked(
    fake: FakeTelegram,
    url: str,
    store: MemoryStore,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    import sqlite3

    agent = Agent("ada", FunctionModel(echo), memory=store)
    db = tmp_path / "ledger.db"  # the memory store's own file stays writable
    warm = SQLiteUpLedger(db)
    await warm.answered("telegram", "0")  # the ledger's tables exist
    await warm.close()
    channel = TelegramChannel(TOKEN, base_url=url, allowed_users=[SAM], poll_seconds=1)
    ledger = SQLiteUpLedger(db, busy_timeout=0.05)
    host = Host(agent=agent, channels=[channel], ledger=ledger, max_backoff=0.2)
    caplog.set_level(logging.WARNING, logger="satchel.up")
    unreachable = anyio.Event()

    class Watch(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if record.getMessage().startswith("the ledger cannot be reached"):
                unreachable.set()  # logged on the event loop's thread

    watch = Watch()
    logging.getLogger("satchel.up").addHandler(watch)
    blocker = sqlite3.connect(db, isolation_level=None, check_same_thread=False)
    blocker.execute("BEGIN EXCLUSIVE")
    try:
        async with anyio.create_task_group() as group:
            group.start_soon(host.run)
            fake.message(SAM, "hold on")
            with anyio.fail_after(120):
                await unreachable.wait()
            assert fake.sent == []
            blocker.execute("COMMIT")
            [reply] = await sent(fake, lambda s: True)
            group.cancel_scope.cancel()
    finally:
        logging.getLogger("satchel.up").removeHandler(watch)
        blocker.close()
        await channel.aclose()
        await ledger.close()
    assert reply.text == "You said: hold on"
    assert "the ledger is back" in caplog.text
