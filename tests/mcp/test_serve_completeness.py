"""``satchel serve`` answers the rest of MCP: resource subscriptions with
``notifications/resources/updated`` (also for another process's writes), resource
templates, the ``memory`` prompt, progress notifications while the first call builds the
embedding model, and the one line a person sees when starting it on a terminal."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
import warnings
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError
from mcp.shared.subscriptions import ResourceUpdated

from satchel.memory import SQLiteStore

from .conftest import STARTUP, satchel_stdio

pytestmark = pytest.mark.anyio

AGENT = "alice"
PERSONA = "memory://alice/persona"
HUMAN = "memory://alice/human"
CONTEXT = "memory://alice/context"


async def _seed(db: Path) -> None:
    store = await SQLiteStore.open(db, embedder=None)
    try:
        await store.create_block(AGENT, "persona", "I am Alice.")
        await store.create_block(AGENT, "human", "Bob.")
    finally:
        await store.close()


class _Updates:
    """The URIs of ``notifications/resources/updated`` a client received, in order."""

    def __init__(self) -> None:
        self.uris: list[str] = []
        self._changed = anyio.Event()

    async def handler(self, message: object) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            self.uris.append(message.params.uri)
            self._changed.set()

    async def wait_for(self, uri: str) -> None:
        while uri not in self.uris:
            await self._changed.wait()
            self._changed = anyio.Event()


@asynccontextmanager
async def _client(
    db: Path,
    updates: _Updates | None = None,
    *,
    mode: str = "legacy",
    env: dict[str, str] | None = None,
) -> AsyncGenerator[Client]:
    params = satchel_stdio("--db", str(db), "--agent", AGENT)
    if env is not None:
        params = StdioServerParameters(
            command=params.command, args=params.args, env={**os.environ, **env}
        )
    handler = updates.handler if updates is not None else None
    async with Client(params, mode=mode, message_handler=handler) as client:
        yield client


async def _subscribe(client: Client, uri: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # deprecated for 2026-07-28 servers only
        await client.subscribe_resource(uri)  # pyright: ignore[reportDeprecated]


async def _unsubscribe(client: Client, uri: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        await client.unsubscribe_resource(uri)  # pyright: ignore[reportDeprecated]


def _append(label: str, content: str) -> dict[str, Any]:
    return {"operation": "append", "label": label, "content": content}


# -- subscriptions ------------------------------------------------------------------


async def test_a_subscribed_block_that_changes_gets_resources_updated_and_others_do_not(
    tmp_path: Path,
) -> None:
    db = tmp_path / "m.db"
    await _seed(db)
    updates = _Updates()
    with anyio.fail_after(STARTUP + 30):
        async with _client(db, updates) as client:
            capabilities = client.server_capabilities
            await _subscribe(client, PERSONA)
            await _subscribe(client, CONTEXT)
            result = await client.call_tool("context", _append("human", "Likes tea."))
            await updates.wait_for(CONTEXT)  # the context changes with any block
            result2 = await client.call_tool("context", _append("persona", "I am kind."))
            await updates.wait_for(PERSONA)

    assert result.is_error is not True
    assert result2.is_error is not True
    assert capabilities is not None
    assert capabilities.resources is not None
    assert capabilities.resources.subscribe is True
    assert HUMAN not in updates.uris  # never subscribed
    assert updates.uris.index(CONTEXT) < updates.uris.index(PERSONA)


async def test_an_unsubscribed_block_gets_no_more_updates(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    await _seed(db)
    updates = _Updates()
    with anyio.fail_after(STARTUP + 30):
        async with _client(db, updates) as client:
            await _subscribe(client, PERSONA)
            await _subscribe(client, HUMAN)
            await _unsubscribe(client, PERSONA)
            await client.call_tool("context", _append("persona", "I am kind."))
            await client.call_tool("context", _append("human", "Likes tea."))
            await updates.wait_for(HUMAN)  # the persona write came first

    assert PERSONA not in updates.uris


async def test_a_change_by_another_process_reaches_a_subscriber(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    await _seed(db)
    updates = _Updates()
    with anyio.fail_after(STARTUP + 60):
        async with _client(db, updates) as client:
            await _subscribe(client, PERSONA)
            await anyio.run_process(
                [sys.executable, "-m", "satchel", "memory", "append", "persona", "From the CLI.",
                 "--db", str(db), "--agent", AGENT],
                check=True,
            )  # fmt: skip
            await updates.wait_for(PERSONA)
            read = await client.read_resource(PERSONA)

    assert isinstance(read.contents[0], types.TextResourceContents)
    assert read.contents[0].text.endswith("From the CLI.")


async def test_a_2026_client_listening_to_a_block_hears_it_change(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    await _seed(db)
    heard: list[str] = []
    with anyio.fail_after(STARTUP + 30):
        async with (
            _client(db, mode="auto") as client,
            client.listen(resource_subscriptions=[PERSONA]) as subscription,
        ):
            await client.call_tool("context", _append("human", "Likes tea."))
            await client.call_tool("context", _append("persona", "I am kind."))
            async for event in subscription:
                if isinstance(event, ResourceUpdated):
                    heard.append(event.uri)
                    break

    assert heard == [PERSONA]


# -- templates and prompts ----------------------------------------------------------


async def test_resource_templates_and_the_memory_prompt_are_served(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    await _seed(db)
    with anyio.fail_after(STARTUP):
        async with _client(db) as client:
            templates = (await client.list_resource_templates()).resource_templates
            prompts = (await client.list_prompts()).prompts
            before = await client.get_prompt("memory")
            await client.call_tool("context", _append("persona", "I am kind."))
            after = await client.get_prompt("memory")
            with pytest.raises(MCPError) as unknown:
                await client.get_prompt("no-such-prompt")
            capabilities = client.server_capabilities

    assert [t.uri_template for t in templates] == ["memory://{agent}/{label}"]
    assert [p.name for p in prompts] == ["memory"]
    assert capabilities is not None
    assert capabilities.prompts is not None
    first, second = before.messages[0].content, after.messages[0].content
    assert isinstance(first, types.TextContent)
    assert isinstance(second, types.TextContent)
    assert '<memory agent="alice">' in first.text
    assert "I am Alice." in first.text
    assert "I am kind." not in first.text
    assert "I am kind." in second.text  # rendered at each get, not at startup
    assert unknown.value.error.code == types.INVALID_PARAMS
    assert "Unknown prompt 'no-such-prompt'" in unknown.value.error.message
    assert "memory" in unknown.value.error.message


# -- progress -----------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_the_first_call_on_a_fresh_model_cache_reports_progress(
    tmp_path: Path, mode: str
) -> None:
    db = tmp_path / "m.db"
    reports: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        reports.append((progress, total, message))

    env = {"SATCHEL_CACHE_DIR": str(tmp_path / "cache"), "SATCHEL_EMBED_QUANTIZE": "1"}
    insert = {"operation": "insert", "content": "Ada works as a marine biologist."}
    with anyio.fail_after(STARTUP + 120):
        async with _client(db, mode=mode, env=env) as client:
            first = await client.call_tool("recall", insert, progress_callback=on_progress)
            seen = len(reports)
            second = await client.call_tool("recall", insert, progress_callback=on_progress)

    assert first.is_error is not True
    assert second.is_error is not True
    assert seen == 2
    assert len(reports) == 2
    (start, start_total, start_message), (end, end_total, _) = reports
    assert start_message is not None
    assert "building the int8 embedding model" in start_message
    assert (start, start_total, end, end_total) == (0, 1, 1, 1)
    assert any((tmp_path / "cache" / "models").glob("*.onnx"))


# -- the terminal hint --------------------------------------------------------------


def _stderr_of_serve(tmp_path: Path, *, on_a_terminal: bool) -> str:
    """Run ``satchel serve`` with stdin a terminal (a pty) or a pipe, its input ended at
    once, and return what it wrote to stderr."""
    command = [sys.executable, "-m", "satchel", "serve", "--db", str(tmp_path / "m.db")]
    if not on_a_terminal:
        done = subprocess.run(command, input="", capture_output=True, text=True, timeout=STARTUP)
        return done.stderr
    leader, follower = pty.openpty()
    try:
        os.write(leader, b"\x04")  # Ctrl-D at the start of a line: the end of input
        done = subprocess.run(
            command, stdin=follower, capture_output=True, text=True, timeout=STARTUP
        )
    finally:
        os.close(follower)
        os.close(leader)
    return done.stderr


def test_serve_started_on_a_terminal_says_it_waits_for_a_client(tmp_path: Path) -> None:
    err = _stderr_of_serve(tmp_path, on_a_terminal=True)

    lines = [line for line in err.splitlines() if "waiting for an MCP client" in line]
    assert len(lines) == 1
    assert "stdin" in lines[0]
    assert "satchel install --help" in lines[0]


def test_serve_on_a_pipe_prints_no_terminal_hint(tmp_path: Path) -> None:
    err = _stderr_of_serve(tmp_path, on_a_terminal=False)

    assert "waiting for an MCP client" not in err
