"""The server's prompts, resource templates, resource watching and progress, through the
official SDK client in process, in both protocol eras where they apply."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from satchel import ToolContext, ToolRegistry, tool
from satchel.mcp import (
    PromptArgument,
    PromptContent,
    PromptInfo,
    PromptMessage,
    ResourceContent,
    ResourceInfo,
    create_server,
)
from satchel.mcp.server._feed import ChangeFeed
from satchel.mcp.server._watch import ResourceWatch

pytestmark = pytest.mark.anyio

MODES = ["legacy", "auto"]


class Greetings:
    """A prompt provider: ``greet`` needs a ``name``."""

    async def list_prompts(self, ctx: ToolContext) -> Sequence[PromptInfo]:
        return [
            PromptInfo(
                name="greet",
                description="Greets someone.",
                arguments=(PromptArgument(name="name", required=True),),
            )
        ]

    async def get_prompt(
        self, name: str, arguments: Mapping[str, str], ctx: ToolContext
    ) -> PromptContent:
        return PromptContent(
            messages=(PromptMessage(text=f"{ctx.agent} greets {arguments['name']}."),)
        )


class Notes:
    """A resource provider with version tags and no templates."""

    def __init__(self) -> None:
        self.values = {"a": "one", "b": "two"}
        self.versions = {"a": 1, "b": 1}

    async def list_resources(self, ctx: ToolContext) -> Sequence[ResourceInfo]:
        return [ResourceInfo(uri=f"note://{k}", name=k) for k in self.values]

    async def read_resource(self, uri: str, ctx: ToolContext) -> ResourceContent:
        return ResourceContent(uri=uri, text=self.values[uri.removeprefix("note://")])

    async def resource_versions(self, ctx: ToolContext) -> Mapping[str, str]:
        return {f"note://{k}": str(v) for k, v in self.versions.items()}

    def write(self, key: str, value: str) -> None:
        """A change the server is not told about (as by another process)."""
        self.values[key] = value
        self.versions[key] += 1


@pytest.mark.parametrize("mode", MODES)
async def test_prompts_are_listed_and_rendered_with_their_arguments(mode: str) -> None:
    server = create_server(ToolRegistry(), agent="ada", prompts=Greetings())
    with anyio.fail_after(10):
        async with Client(server.lowlevel, mode=mode) as client:
            listed = (await client.list_prompts()).prompts
            got = await client.get_prompt("greet", {"name": "Bo"})
            with pytest.raises(MCPError) as missing:
                await client.get_prompt("greet")
            with pytest.raises(MCPError) as unknown:
                await client.get_prompt("wave")

    assert [p.name for p in listed] == ["greet"]
    assert listed[0].arguments is not None
    assert [(a.name, a.required) for a in listed[0].arguments] == [("name", True)]
    content = got.messages[0].content
    assert isinstance(content, types.TextContent)
    assert content.text == "ada greets Bo."
    assert missing.value.error.code == types.INVALID_PARAMS
    assert "needs the argument(s) name" in missing.value.error.message
    assert unknown.value.error.code == types.INVALID_PARAMS
    assert unknown.value.error.message == "Unknown prompt 'wave'; the prompts are: greet."


@pytest.mark.parametrize("mode", MODES)
async def test_a_provider_without_templates_lists_none(mode: str) -> None:
    server = create_server(ToolRegistry(), resources=Notes())
    with anyio.fail_after(10):
        async with Client(server.lowlevel, mode=mode) as client:
            templates = await client.list_resource_templates()

    assert templates.resource_templates == []


@pytest.mark.filterwarnings("ignore::mcp.MCPDeprecationWarning")
async def test_a_change_the_server_was_not_told_of_reaches_a_subscriber_by_the_timer() -> None:
    notes = Notes()
    server = create_server(ToolRegistry(), resources=notes, watch_interval=0.05)
    updated: list[str] = []
    got = anyio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            updated.append(message.params.uri)
            got.set()

    with anyio.fail_after(10):
        async with Client(server.lowlevel, mode="legacy", message_handler=on_message) as client:
            await client.session.subscribe_resource("note://b")  # pyright: ignore[reportDeprecated]
            notes.write("a", "uno")  # not subscribed
            notes.write("b", "dos")
            await got.wait()

    assert updated == ["note://b"]


async def test_a_tool_reports_progress_to_a_client_that_asked_and_only_forward() -> None:
    # Over JSON-RPC ("legacy" here; a real process speaks JSON-RPC in both eras, see
    # test_serve_completeness). The SDK's in-process 2026 dispatcher sends no
    # progressToken, so the server cannot tell that progress was asked for.
    seen: list[bool] = []

    @tool
    async def crunch(count: int, ctx: ToolContext) -> int:
        """Crunch ``count`` items."""
        seen.append(ctx.progress is not None)
        for done in range(1, count + 1):
            await ctx.report_progress(done, count, f"item {done}")
        await ctx.report_progress(1, count, "backwards: dropped")
        return count

    server = create_server(ToolRegistry([crunch]))
    reports: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        reports.append((progress, total, message))

    with anyio.fail_after(10):
        async with Client(server.lowlevel, mode="legacy") as client:
            await client.call_tool("crunch", {"count": 3}, progress_callback=on_progress)
            await client.call_tool("crunch", {"count": 2})

    assert reports == [(1, 3, "item 1"), (2, 3, "item 2"), (3, 3, "item 3")]
    assert seen == [True, False]


async def test_a_uri_stays_watched_until_its_last_subscriber_leaves() -> None:
    watch = ResourceWatch(Notes(), ChangeFeed(), interval=None)
    await watch.add("ada", "note://b")
    await watch.add("ada", "note://b")
    watch.remove("ada", "note://b")
    still = watch.subscribed
    watch.remove("ada", "note://b")
    watch.remove("ada", "note://b")  # one too many: ignored

    assert still == 1
    assert watch.subscribed == 0
