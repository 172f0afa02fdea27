"""Reminders to the channels: each channel's person is told, a channel that fails is
logged and the others are still told."""

from __future__ import annotations

import logging
import socket
from datetime import UTC, datetime

import pytest

from satchel.channels import InboxChannel, InboxConfig, notify_channels
from satchel.toolkit import Reminder

pytestmark = pytest.mark.anyio

TOKEN = "notify-test-token-0123456789"


def _reminder(*, late: bool) -> Reminder:
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
            notify = notify_channels([busy, working])
            with caplog.at_level(logging.ERROR, logger="satchel.channels.notify"):
                await notify("ada", _reminder(late=False))
                await notify("ada", _reminder(late=True))
        finally:
            await busy.aclose()
            await working.aclose()
    assert [n.text for n in working.mailbox.notes] == [
        "Reminder: Call the dentist",
        "Late reminder (was due 2026-11-27 09:00:30 CET): Call the dentist",
    ]
    assert sum("could not tell inbox" in r.getMessage() for r in caplog.records) == 2
