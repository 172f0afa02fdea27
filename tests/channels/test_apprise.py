"""``[notify] urls``: reminders through apprise to a real loopback JSON webhook (apprise's
``json://``), failures logged without stopping the others, and the URLs held as secrets."""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from satchel import SatchelUsageError
from satchel.channels import (
    Action,
    AppriseNotifier,
    ChannelUnavailableError,
    NotifyConfig,
    notify_channels,
    parse_channels,
)
from satchel.toolkit import Reminder

pytestmark = pytest.mark.anyio


class _Hook:
    def __init__(self, status: int) -> None:
        self.bodies: list[dict[str, Any]] = []
        hook = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", "0"))
                hook.bodies.append(json.loads(self.rfile.read(length)))
                self.send_response(status)
                self.send_header("content-length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


@pytest.fixture
def hook() -> Iterator[_Hook]:
    made = _Hook(200)
    yield made
    made.server.shutdown()
    made.server.server_close()


@pytest.fixture
def broken() -> Iterator[_Hook]:
    made = _Hook(500)
    yield made
    made.server.shutdown()
    made.server.server_close()


def _config(*ports: int) -> NotifyConfig:
    return NotifyConfig.model_validate(
        {"urls": [f"json://127.0.0.1:{port}/hook" for port in ports], "title": "ada"}
    )


async def test_a_reminder_reaches_every_url(hook: _Hook) -> None:
    notifier = AppriseNotifier(_config(hook.port, hook.port))
    reminder = Reminder(
        id="r1",
        message="Water the plants",
        due=datetime(2026, 11, 27, 8, tzinfo=UTC),
        timezone="UTC",
        created_at=datetime(2026, 11, 27, tzinfo=UTC),
    )
    await notify_channels([notifier])("ada", reminder)
    assert [(b["title"], b["message"]) for b in hook.bodies] == [
        ("ada", "Reminder: Water the plants")
    ] * 2


async def test_actions_are_listed_under_the_text(hook: _Hook) -> None:
    await AppriseNotifier(_config(hook.port)).notify("Approve?", actions=[Action("Yes", "y")])
    assert hook.bodies[0]["message"] == "Approve?\nYes"


async def test_a_failing_url_raises_unavailable_and_the_notifier_logs_it(
    broken: _Hook, hook: _Hook, caplog: pytest.LogCaptureFixture
) -> None:
    failing = AppriseNotifier(_config(broken.port))
    with pytest.raises(ChannelUnavailableError):
        await failing.notify("x")
    working = AppriseNotifier(_config(hook.port))
    with caplog.at_level(logging.WARNING, logger="satchel.channels.notify"):
        reminder = Reminder(
            id="r1",
            message="m",
            due=datetime(2026, 11, 27, 8, tzinfo=UTC),
            timezone="UTC",
            created_at=datetime(2026, 11, 27, tzinfo=UTC),
        )
        await notify_channels([failing, working], backoff=0.01)("ada", reminder)
    assert [b["message"] for b in hook.bodies] == ["Reminder: m"]
    assert any(
        "could not deliver a reminder of 'ada' on notify" in r.getMessage() for r in caplog.records
    )


def test_the_urls_are_secrets_read_from_the_environment() -> None:
    config = parse_channels(
        '[notify]\nurls = ["ntfy://${TOPIC}", "json://127.0.0.1/x"]\n',
        environ={"TOPIC": "secret-topic-42"},
    )
    assert config.notify is not None
    assert config.notify.urls[0].get_secret_value() == "ntfy://secret-topic-42"
    assert "secret-topic-42" not in repr(config)


@pytest.mark.parametrize(
    ("toml", "words"),
    [
        ('[notify]\nurls = ["not a url"]\n', ["notify.urls.0", "scheme://"]),
        ("[notify]\nurls = []\n", ["notify.urls"]),
        ('[notify]\nurls = ["json://h"]\nsound = 1\n', ["notify.sound"]),
    ],
)
def test_a_bad_notify_section_is_one_error(toml: str, words: list[str]) -> None:
    with pytest.raises(SatchelUsageError) as caught:
        parse_channels(toml, environ={})
    for word in words:
        assert word in caught.value.message


def test_a_url_apprise_does_not_know_is_named_by_position_not_text() -> None:
    config = NotifyConfig.model_validate({"urls": ["json://h/x", "nosuchservice://tok3n"]})
    with pytest.raises(SatchelUsageError, match="URL 2") as caught:
        AppriseNotifier(config)
    assert "tok3n" not in caught.value.message
