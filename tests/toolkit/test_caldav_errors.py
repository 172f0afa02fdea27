"""A CalDAV server that cannot be reached gives a structured ``failed`` result, never
an exception out of the registry, and names the server, not the password."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from satchel.registry import ToolRegistry
from satchel.toolkit import ToolkitConfig, productivity_toolkit

pytestmark = pytest.mark.anyio


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("add_calendar_event", {"title": "X", "start_time": "tomorrow at 3pm"}),
        ("list_calendar_events", {}),
        ("create_task", {"title": "X"}),
        ("list_tasks", {}),
    ],
)
async def test_a_server_that_is_down_gives_a_failed_result(
    tmp_path: Path, name: str, args: dict[str, object]
) -> None:
    url = f"http://127.0.0.1:{closed_port()}/"
    config = ToolkitConfig(
        data_dir=tmp_path,
        timezone="UTC",
        calendar_url=url,
        calendar_username="ada",
        calendar_password="hunter2-secret",  # pyright: ignore[reportArgumentType]
    )
    tools: ToolRegistry = productivity_toolkit(config)
    result = await tools.call(name, args)
    assert result.error is not None
    assert result.error.kind == "failed"
    assert url in result.error.message
    assert "hunter2" not in result.to_text()


async def test_the_password_stays_out_of_the_configs_repr() -> None:
    config = ToolkitConfig(calendar_password="hunter2-secret")  # pyright: ignore[reportArgumentType]
    assert "hunter2" not in repr(config)


@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("add_calendar_event", {"title": "X", "start_time": "tomorrow at 3pm"}),
        ("list_tasks", {}),
    ],
)
async def test_a_password_inside_the_calendar_url_never_reaches_the_model(
    tmp_path: Path, name: str, args: dict[str, object], caplog: pytest.LogCaptureFixture
) -> None:
    port = closed_port()
    config = ToolkitConfig(
        data_dir=tmp_path,
        timezone="UTC",
        calendar_url=f"http://ada:PW-s3cret@127.0.0.1:{port}/dav/",
    )
    tools: ToolRegistry = productivity_toolkit(config)
    with caplog.at_level("DEBUG"):
        result = await tools.call(name, args)
    assert result.error is not None
    assert result.error.kind == "failed"
    assert f"http://127.0.0.1:{port}/dav/" in result.error.message  # the server is named
    assert "PW-s3cret" not in result.to_text()
    assert "ada:" not in result.to_text()
    assert "PW-s3cret" not in caplog.text
