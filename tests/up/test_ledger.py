"""The host's ledger on both backends: a message is marked answered once, cursors
survive a reopen, and each channel's cursors are its own."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from postgres_server import PostgresServer
from satchel.up import ChannelCursors, PostgresUpLedger, SQLiteUpLedger, UpLedger, open_ledger

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]


@pytest.fixture
def pg_url(postgres_server: PostgresServer) -> Iterator[str]:
    made = postgres_server.create_database()
    yield made
    postgres_server.drop_database(made)


@pytest.fixture(params=["sqlite", "postgres"])
def target(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return str(tmp_path / "m.db")
    return str(request.getfixturevalue("pg_url"))


@pytest.fixture
async def ledger(target: str) -> AsyncIterator[UpLedger]:
    opened = open_ledger(target)
    yield opened
    await opened.close()


async def test_open_ledger_picks_the_backend_of_the_target(target: str) -> None:
    opened = open_ledger(target)
    expected = PostgresUpLedger if target.startswith("postgresql") else SQLiteUpLedger
    assert isinstance(opened, expected)
    await opened.close()


async def test_a_message_is_marked_answered_once(ledger: UpLedger) -> None:
    assert not await ledger.answered("telegram", "700001")
    assert await ledger.mark("telegram", "700001")
    assert await ledger.answered("telegram", "700001")
    assert not await ledger.mark("telegram", "700001")
    assert not await ledger.answered("discord", "700001")


async def test_marks_and_cursors_survive_a_reopen(target: str, ledger: UpLedger) -> None:
    await ledger.mark("email", "<a@b>")
    await ChannelCursors(ledger, "discord").set("last", "11")
    await ChannelCursors(ledger, "discord").set("last", "12")
    again = open_ledger(target)
    try:
        assert await again.answered("email", "<a@b>")
        assert await ChannelCursors(again, "discord").get("last") == "12"
        assert await ChannelCursors(again, "email").get("last") is None
    finally:
        await again.close()
