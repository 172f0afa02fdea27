"""``satchel up`` as a real process: Telegram through the fake Bot API server, the
model through the fake OpenAI-compatible server (the real SDK), the memory and the
ledger in one SQLite file. It answers a person in their chat, ignores a stranger,
delivers a reminder set "in 3 seconds" and an overdue task's one nudge to
``notify_chat``, stops cleanly on SIGTERM, and after a restart that is given every
update again answers none of them twice."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import anyio
import pytest

from agent.fake_openai import FakeOpenAI, completion, serving
from fake_telegram import TOKEN, FakeTelegram, Sent, serving_telegram
from satchel.memory import SQLiteStore
from satchel.toolkit import MemoryAgenda

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(420)]

SAM = 123456789
STRANGER = 555
_REMIND = re.compile(r"remind me to (\w+) in (\d+) seconds")


def model(body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    """Echo the person; schedule a reminder when asked; "Done." after a tool call."""
    last = body["messages"][-1]
    if last["role"] == "tool":
        return 200, completion("Done.")
    text = str(last["content"])
    asked = _REMIND.search(text)
    if asked:
        reminder = {"operation": "schedule", "message": asked[1], "when": f"in {asked[2]} seconds"}
        return 200, completion(calls=[("schedule_reminder", reminder)])
    return 200, completion(f"Hello from ada: {text}")


def start_up(db: Path, channels: Path, openai_url: str, log: Path) -> subprocess.Popen[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "SATCHEL_"))}
    env.update(
        OPENAI_API_KEY="test-key",
        SATCHEL_TELEGRAM_TOKEN=TOKEN,
        SATCHEL_TIMEZONE="UTC",
        XDG_DATA_HOME=os.environ["XDG_DATA_HOME"],
    )
    command = [
        sys.executable, "-m", "satchel", "up", "--channels", str(channels),
        "--model", "openai:fake-model", "--base-url", openai_url, "--db", str(db),
        "--agent", "ada",
    ]  # fmt: skip
    with log.open("ab") as out:
        return subprocess.Popen(command, stdout=out, stderr=out, env=env)


def stop(process: subprocess.Popen[bytes], log: Path) -> None:
    process.send_signal(signal.SIGTERM)
    code = process.wait(timeout=120)
    assert code == 0, log.read_text()
    assert "satchel up: stopped." in log.read_text()


async def sent(fake: FakeTelegram, predicate: Callable[[Sent], bool], count: int = 1) -> list[Sent]:
    return await anyio.to_thread.run_sync(
        lambda: fake.wait_sent(predicate, count=count, timeout=240)
    )


async def test_up_answers_reminds_nudges_ignores_strangers_and_never_answers_twice(
    tmp_path: Path,
) -> None:
    db, log = tmp_path / "m.db", tmp_path / "up.log"
    async with SQLiteStore(db, embedder=None) as store:
        await store.ensure_agent("ada")
        agenda = MemoryAgenda(store)
        due = agenda.now() - timedelta(hours=1)
        await agenda.create_task("ada", "file the taxes", "", [], due, zone=ZoneInfo("UTC"))
    telegram, openai = FakeTelegram(), FakeOpenAI(model)
    with serving_telegram(telegram) as telegram_url, serving(openai) as openai_url:
        channels = tmp_path / "channels.toml"
        channels.write_text(
            f'[telegram]\nbase_url = "{telegram_url}"\nallowed_users = [{SAM}]\n'
            f"notify_chat = {SAM}\npoll_seconds = 2\n"
        )
        process = start_up(db, channels, openai_url, log)
        try:
            telegram.message(STRANGER, "let me in")
            telegram.message(SAM, "hello")
            [hello] = await sent(telegram, lambda s: s.text == "Hello from ada: hello")
            assert (hello.chat_id, hello.reply_to) == (str(SAM), 1)

            telegram.message(SAM, "remind me to stretch in 3 seconds")
            await sent(telegram, lambda s: s.text == "Done.")
            [ring] = await sent(telegram, lambda s: s.text.endswith(": stretch"))
            assert ring.chat_id == str(SAM)
            assert ring.text.startswith("Reminder: ")

            [nudge] = await sent(telegram, lambda s: "file the taxes" in s.text)
            assert nudge.chat_id == str(SAM)
            assert "Gentle nudge" in nudge.text
        finally:
            stop(process, log)

        telegram.unconfirm()  # as if stopped before the next poll confirmed anything
        process = start_up(db, channels, openai_url, log)
        try:
            telegram.message(SAM, "remind me to breathe in 2 seconds")
            await sent(telegram, lambda s: s.text.endswith(": breathe"))
            telegram.message(SAM, "still there?")
            await sent(telegram, lambda s: s.text == "Hello from ada: still there?")
        finally:
            stop(process, log)

    texts = [s.text for s in telegram.sent]
    assert texts.count("Hello from ada: hello") == 1
    assert sum(t.endswith(": stretch") for t in texts) == 1
    assert sum("file the taxes" in t for t in texts) == 1
    assert all(s.chat_id == str(SAM) for s in telegram.sent)
    asked = [str(r["messages"][-1]["content"]) for r in openai.requests]
    assert not any("let me in" in text for text in asked)
    assert asked.count("hello") == 1
    assert f"refused a message from {STRANGER}" in log.read_text()


def noting_model(body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    """Write "note: X" to the human block (which needs the person's consent)."""
    last = body["messages"][-1]
    if last["role"] == "tool":
        return 200, completion(f"Done: {str(last['content'])[:60]}")
    text = str(last["content"])
    if text.startswith("note: "):
        args = {"operation": "append", "label": "human", "content": text.removeprefix("note: ")}
        return 200, completion(calls=[("context", args)])
    return 200, completion(f"Hello from ada: {text}")


async def test_up_asks_consent_in_the_chat_and_writes_once_after_the_persons_yes(
    tmp_path: Path,
) -> None:
    from satchel.memory import Permission

    db, log = tmp_path / "m.db", tmp_path / "up.log"
    async with SQLiteStore(db, embedder=None) as store:
        await store.create_block("ada", "human", "Sam.", permission=Permission.HUMAN)
    telegram, openai = FakeTelegram(), FakeOpenAI(noting_model)
    with serving_telegram(telegram) as telegram_url, serving(openai) as openai_url:
        channels = tmp_path / "channels.toml"
        channels.write_text(
            f'[telegram]\nbase_url = "{telegram_url}"\nallowed_users = [{SAM}]\n'
            f"notify_chat = {SAM}\npoll_seconds = 2\n"
        )
        process = start_up(db, channels, openai_url, log)
        try:
            telegram.message(SAM, "note: likes green tea")
            [asked] = await sent(telegram, lambda s: bool(s.buttons))
            assert asked.chat_id == str(SAM)
            assert "likes green tea" in asked.text
            telegram.message(STRANGER, "yes", reply_to=asked.message_id)  # not theirs to give
            telegram.message(SAM, "yes", reply_to=asked.message_id)
            [done] = await sent(telegram, lambda s: s.text.startswith("Done"))
            assert done.chat_id == str(SAM)
        finally:
            stop(process, log)
    async with SQLiteStore(db, embedder=None) as store:
        human = await store.get_block("ada", "human")
    assert human.value.count("likes green tea") == 1
    assert f"refused a message from {STRANGER}" in log.read_text()
