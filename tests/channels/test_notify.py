"""notify_channels: each due reminder to every channel's notify, through an outage,
with the toolkit's own text (late ones marked)."""

from __future__ import annotations

import logging
import socket
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

import pytest

from satchel.channels import (
    Action,
    ChannelUnavailableError,
    InboundMessage,
    InboxChannel,
    InboxConfig,
    SentMessage,
    notify_channels,
    reminder_text,
)
from satchel.toolkit import Reminder

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]


@dataclass
class Notebook:
    """An inbound channel that writes down what it is told (down ``failing`` times
    first); ``chat=None`` has no one to notify."""

    name: str
    chat: str | None = "1"
    failing: int = 0
    told: list[str] = field(default_factory=list[str])

    async def fetch(self) -> Sequence[InboundMessage]:
        return []

    def allows(self, message: InboundMessage) -> bool:
        return True

    async def acknowledge(self, message: InboundMessage) -> None:
        return None

    async def reply(self, message: InboundMessage, text: str) -> SentMessage:
        return await self.send(message.chat, text)

    async def send(self, chat: str, text: str, *, actions: Sequence[Action] = ()) -> SentMessage:
        self.told.append(text)
        return SentMessage(channel=self.name, chat=chat, message_id=str(len(self.told)))

    async def notify(self, text: str, *, actions: Sequence[Action] = ()) -> SentMessage | None:
        if self.failing:
            self.failing -= 1
            raise ChannelUnavailableError("down for now")
        if self.chat is None:
            return None
        return await self.send(self.chat, text)

    async def aclose(self) -> None:
        return None


def _reminder(message: str, *, late: bool = False, second: int = 15) -> Reminder:
    due = datetime(2026, 11, 27, 17, 30, second, tzinfo=UTC)
    return Reminder(
        id="r1", message=message, due=due, timezone="Europe/Paris", created_at=due, late=late
    )


async def test_every_channel_is_told_and_an_outage_is_waited_out() -> None:
    up, flaky, nobody = Notebook("a"), Notebook("b", failing=2), Notebook("c", chat=None)
    notify = notify_channels([up, flaky, nobody], backoff=0.01)
    await notify("ada", _reminder("stretch"))
    assert up.told == ["Reminder: stretch"]
    assert flaky.told == up.told
    assert nobody.told == []


async def test_a_channel_down_for_good_is_logged_and_the_others_are_told(
    caplog: pytest.LogCaptureFixture,
) -> None:
    down, up = Notebook("down", failing=10), Notebook("up")
    await notify_channels([down, up], attempts=2, backoff=0.01)("ada", _reminder("water"))
    assert up.told == ["Reminder: water"]
    assert down.told == []
    assert "could not deliver a reminder of 'ada' on down" in caplog.text


def test_a_late_reminder_says_so_and_whole_minutes_drop_the_seconds() -> None:
    late = _reminder("call mum", late=True, second=0)
    assert reminder_text(late) == "Late reminder (was due 2026-11-27 18:30 CET): call mum"


TOKEN = "notify-test-token-0123456789"


def _dentist(*, late: bool) -> Reminder:
    due = datetime(2026, 11, 27, 8, 0, 30, tzinfo=UTC)
    return Reminder(
        id="r1",
        message="Call the dentist",
        due=due,
        timezone="Europe/Paris",
        created_at=due,
        late=late,
    )


async def test_a_failing_channel_is_logged_and_the_next_is_still_told(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        busy = InboxChannel(InboxConfig(token=TOKEN, port=taken.getsockname()[1]))
        working = InboxChannel(InboxConfig(token=TOKEN, port=0))
        try:
            notify = notify_channels([busy, working], backoff=0.01)
            with caplog.at_level(logging.WARNING, logger="satchel.channels.notify"):
                await notify("ada", _dentist(late=False))
                await notify("ada", _dentist(late=True))
        finally:
            await busy.aclose()
            await working.aclose()
    assert [n.text for n in working.mailbox.notes] == [
        "Reminder: Call the dentist",
        "Late reminder (was due 2026-11-27 09:00:30 CET): Call the dentist",
    ]
    assert (
        sum(
            "could not deliver a reminder of 'ada' on inbox" in r.getMessage()
            for r in caplog.records
        )
        == 2
    )
