"""The server, end to end through the official SDK client, run in process over real
JSON-RPC streams: both protocol eras (the ``initialize`` handshake, "legacy", and the
2026-07-28 per-request envelope the SDK client picks by default, "auto")."""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.client import ClientRequestContext

from satchel import NotFoundError, ToolContext, ToolRegistry, tool
from satchel.examples import build_registry
from satchel.mcp import (
    ClientChannel,
    ResourceContent,
    ResourceInfo,
    client_channel,
    create_server,
)

pytestmark = pytest.mark.anyio

MODES = ["legacy", "auto"]


@pytest.mark.parametrize("mode", MODES)
async def test_tools_list_serves_every_tool_with_hints_and_output_schemas(mode: str) -> None:
    server = create_server(build_registry())
    with anyio.fail_after(10):
        async with Client(server.lowlevel, mode=mode) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}

    assert set(tools) == {"word_count", "add", "notes", "echo"}
    add = tools["add"]
    assert add.annotations is not None
    assert add.annotations.read_only_hint is True
    assert add.annotations.idempotent_hint is True
    assert add.output_schema == {
        "type": "object",
        "properties": {"result": {"type": "integer"}},
        "required": ["result"],
    }
    notes = tools["notes"]
    assert notes.annotations is not None
    assert notes.annotations.destructive_hint is True  # its delete operation is
    assert notes.input_schema["properties"]["operation"]["enum"] == ["read", "write", "delete"]
    assert tools["echo"].output_schema is None


async def test_a_tool_with_a_recursive_schema_is_listed_and_called_over_mcp() -> None:
    registry = ToolRegistry()
    section = {
        "type": "object",
        "properties": {
            "heading": {"type": "string"},
            "sections": {"type": "array", "items": {"$ref": "#/$defs/Section"}},
        },
        "required": ["heading"],
    }
    registry.register_raw(
        name="outline",
        description="Count the sections of an outline.",
        parameters={
            "type": "object",
            "properties": {"root": {"$ref": "#/$defs/Section"}},
            "required": ["root"],
            "$defs": {"Section": section},
        },
        run=lambda args: str(json.dumps(args["root"]).count("heading")),
    )
    server = create_server(registry)
    root = {"heading": "a", "sections": [{"heading": "b", "sections": [{"heading": "c"}]}]}
    with anyio.fail_after(10):
        async with Client(server.lowlevel) as client:
            [listed] = (await client.list_tools()).tools
            result = await client.call_tool("outline", {"root": root})

    assert listed.input_schema["$defs"]["Section"]["properties"]["sections"]["items"] == {
        "$ref": "#/$defs/Section"
    }
    assert result.is_error is False
    assert isinstance(result.content[0], types.TextContent)
    assert result.content[0].text == "3"


@pytest.mark.parametrize("mode", MODES)
async def test_every_demo_operation_returns_structured_content_and_text(mode: str) -> None:
    server = create_server(build_registry())
    with anyio.fail_after(10):
        async with Client(server.lowlevel, mode=mode) as client:
            count = await client.call_tool("word_count", {"text": "one two three"})
            total = await client.call_tool("add", {"a": 2, "b": 40})
            echo = await client.call_tool("echo", {"text": "hello"})
            write = await client.call_tool(
                "notes", {"operation": "write", "title": "t", "content": "body"}
            )
            read = await client.call_tool("notes", {"operation": "read", "title": "t"})
            delete = await client.call_tool("notes", {"operation": "delete", "title": "t"})

    assert count.structured_content == {"count": 3}
    assert total.structured_content == {"result": 42}
    assert isinstance(total.content[0], types.TextContent)
    assert total.content[0].text == "42"
    assert echo.structured_content is None
    assert isinstance(echo.content[0], types.TextContent)
    assert echo.content[0].text == "hello"
    assert write.structured_content == {"title": "t", "content": "body", "status": "written"}
    assert read.structured_content == {"title": "t", "content": "body", "status": "read"}
    assert delete.structured_content == {"title": "t", "content": None, "status": "deleted"}
    for result in (count, total, echo, write, read, delete):
        assert result.is_error is False


@pytest.mark.parametrize("mode", MODES)
async def test_tool_errors_are_is_error_results_carrying_the_message_and_kind(mode: str) -> None:
    server = create_server(build_registry())
    with anyio.fail_after(10):
        async with Client(server.lowlevel, mode=mode) as client:
            missing = await client.call_tool("notes", {"operation": "read", "title": "nope"})
            invalid = await client.call_tool("add", {"a": "two", "b": 2})
            unknown = await client.call_tool("ad", {"a": 1})

    for result, kind in (
        (missing, "retry"),
        (invalid, "invalid_arguments"),
        (unknown, "unknown_tool"),
    ):
        assert result.is_error is True
        assert result.structured_content is None
        assert isinstance(result.content[0], types.TextContent)
        assert result.content[0].text.startswith(f"Error ({kind}): ")
        assert result.meta is not None
        assert result.meta["satchel/error"]["kind"] == kind
    assert "no note titled 'nope'" in missing.content[0].text  # type: ignore[union-attr]
    assert "'add'" in unknown.content[0].text  # type: ignore[union-attr]


async def test_calls_see_the_agent_and_the_mcp_origin() -> None:
    seen: list[ToolContext] = []

    @tool
    def whoami(ctx: ToolContext) -> str:
        """Say which agent is calling."""
        seen.append(ctx)
        return ctx.agent

    server = create_server(ToolRegistry([whoami]), agent="alice")
    with anyio.fail_after(10):
        async with Client(server.lowlevel) as client:
            result = await client.call_tool("whoami", {})

    assert result.structured_content == {"result": "alice"}
    assert seen[0].origin == "mcp"
    assert isinstance(client_channel(seen[0]), ClientChannel)


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_call_names_its_channel_in_meta_and_a_malformed_one_is_ignored(
    mode: str,
) -> None:
    seen: list[str | None] = []

    @tool
    def where(ctx: ToolContext) -> str:
        """Say where the call came from."""
        seen.append(ctx.origin)
        return ctx.origin or ""

    server = create_server(ToolRegistry([where]), agent="alice")
    metas: list[dict[str, Any]] = [
        {"satchel/origin": "discord:1234567890"},
        {"satchel/origin": "webhook:https://hooks.example.com/x"},
        {"satchel/origin": "discord 123"},
        {"satchel/origin": "no-kind"},
        {"satchel/origin": 42},
        {"satchel/origin": "discord:" + "1" * 3000},
        {},
    ]
    with anyio.fail_after(20):
        async with Client(server.lowlevel, mode=mode) as client:
            for meta in metas:
                await client.call_tool("where", {}, meta=meta)  # type: ignore[arg-type]

    assert seen == [
        "discord:1234567890",
        "webhook:https://hooks.example.com/x",
        "mcp",
        "mcp",
        "mcp",
        "mcp",
        "mcp",
    ]


# -- list_changed ----------------------------------------------------------------------


async def test_a_registry_change_sends_tools_list_changed_on_a_handshake_connection() -> None:
    registry = build_registry()
    server = create_server(registry)
    changed = anyio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            changed.set()

    with anyio.fail_after(10):
        async with Client(server.lowlevel, mode="legacy", message_handler=on_message) as client:
            assert client.server_capabilities.tools is not None
            assert client.server_capabilities.tools.list_changed is True
            await client.list_tools()  # a round trip: the server knows this connection now
            registry.register_raw(
                name="late", description="A late tool.", parameters={"type": "object"}, run=str
            )
            await changed.wait()
            names = [t.name for t in (await client.list_tools()).tools]

    assert "late" in names


async def test_a_change_from_another_thread_reaches_a_listening_modern_client() -> None:
    registry = build_registry()
    server = create_server(registry)

    def change() -> None:
        registry.unregister("echo")

    with anyio.fail_after(10):
        async with Client(server.lowlevel) as client:
            assert client.protocol_version == "2026-07-28"
            async with client.listen(tools_list_changed=True) as subscription:
                threading.Thread(target=change).start()
                event = await anext(aiter(subscription))
            names = [t.name for t in (await client.list_tools(cache_mode="bypass")).tools]

    assert type(event).__name__ == "ToolsListChanged"
    assert "echo" not in names


# -- elicitation -----------------------------------------------------------------------


def _guarded_registry(asked: list[str]) -> ToolRegistry:
    @tool(destructive=True)
    async def wipe(item: str, ctx: ToolContext) -> str:
        """Delete an item, after the user confirms.

        Args:
            item: What to delete.
        """
        channel = client_channel(ctx)
        if channel is None:
            return "not over MCP"
        asked.append(f"can_elicit={channel.can_elicit}")
        approved = await channel.confirm(f"Delete {item}?", key=f"wipe-{item}")
        if approved is None:
            return "could not ask"
        return "deleted" if approved else "kept"

    return ToolRegistry([wipe])


def _answering(action: str, asked: list[str], approve: bool = True) -> Any:
    async def callback(
        context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult:
        assert isinstance(params, types.ElicitRequestFormParams)
        asked.append(params.message)
        content: dict[str, Any] | None = {"approve": approve} if action == "accept" else None
        return types.ElicitResult(action=action, content=content)  # type: ignore[arg-type]

    return callback


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    ("action", "approve", "outcome"),
    [("accept", True, "deleted"), ("accept", False, "kept"), ("decline", True, "kept")],
)
async def test_confirm_asks_the_client_through_its_elicitation_callback(
    mode: str, action: str, approve: bool, outcome: str
) -> None:
    asked: list[str] = []
    server = create_server(_guarded_registry(asked))
    with anyio.fail_after(10):
        async with Client(
            server.lowlevel, mode=mode, elicitation_callback=_answering(action, asked, approve)
        ) as client:
            result = await client.call_tool("wipe", {"item": "the logs"})

    assert result.structured_content == {"result": outcome}
    assert "Delete the logs?" in asked
    assert "can_elicit=True" in asked


@pytest.mark.parametrize("mode", MODES)
async def test_confirm_reports_it_cannot_ask_a_client_without_elicitation(mode: str) -> None:
    asked: list[str] = []
    server = create_server(_guarded_registry(asked))
    with anyio.fail_after(10):
        async with Client(server.lowlevel, mode=mode) as client:
            result = await client.call_tool("wipe", {"item": "x"})

    assert result.structured_content == {"result": "could not ask"}
    assert asked == ["can_elicit=False"]


# -- resources ------------------------------------------------------------------------


class Blocks:
    """A resource provider over a dict, per agent."""

    def __init__(self) -> None:
        self.values = {"persona": "I am helpful.", "human": "Likes tea."}

    async def list_resources(self, ctx: ToolContext) -> Sequence[ResourceInfo]:
        return [
            ResourceInfo(uri=f"memory://{ctx.agent}/{label}", name=label, size=len(value))
            for label, value in self.values.items()
        ]

    async def read_resource(self, uri: str, ctx: ToolContext) -> ResourceContent:
        label = uri.rsplit("/", 1)[-1]
        if label not in self.values or not uri.startswith(f"memory://{ctx.agent}/"):
            raise NotFoundError(f"No block at {uri}.")
        return ResourceContent(uri=uri, text=self.values[label])


@pytest.mark.parametrize("mode", MODES)
async def test_resources_are_listed_and_read_for_the_agent(mode: str) -> None:
    server = create_server(ToolRegistry(), agent="bob", resources=Blocks())
    with anyio.fail_after(10):
        async with Client(server.lowlevel, mode=mode) as client:
            listed = await client.list_resources()
            read = await client.read_resource("memory://bob/persona")
            with pytest.raises(Exception, match="Resource not found"):
                await client.read_resource("memory://bob/nothing")

    assert [r.name for r in listed.resources] == ["persona", "human"]
    assert listed.resources[0].uri == "memory://bob/persona"
    content = read.contents[0]
    assert isinstance(content, types.TextResourceContents)
    assert content.text == "I am helpful."


@pytest.mark.filterwarnings("ignore::mcp.MCPDeprecationWarning")
async def test_a_resource_change_reaches_a_subscribed_handshake_client() -> None:
    blocks = Blocks()
    server = create_server(ToolRegistry(), resources=blocks)
    updated: list[str] = []
    got = anyio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            updated.append(message.params.uri)
            got.set()

    with anyio.fail_after(10):
        async with Client(server.lowlevel, mode="legacy", message_handler=on_message) as client:
            await client.session.subscribe_resource("memory://default/human")  # pyright: ignore[reportDeprecated]
            blocks.values["human"] = "Likes coffee now."
            server.notify_resources_changed("memory://default/persona")  # not subscribed
            server.notify_resources_changed("memory://default/human")
            await got.wait()

    assert updated == ["memory://default/human"]
