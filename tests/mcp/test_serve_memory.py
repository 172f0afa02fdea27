"""``satchel serve`` with its memory: the built-in tools through a real process and the
official SDK client, approvals by elicitation and by ``satchel approvals`` in another
process, memory as resources, and the database intact afterwards."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.client import ClientRequestContext

from satchel.memory import BlockKind, Permission, SQLiteStore

from .conftest import STARTUP, satchel_stdio

pytestmark = pytest.mark.anyio

MODES = ["legacy", "auto"]
AGENT = "alice"


def _answering(action: str, asked: list[str], approve: bool = True) -> Any:
    async def callback(
        context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult:
        assert isinstance(params, types.ElicitRequestFormParams)
        asked.append(params.message)
        content: dict[str, Any] | None = {"approve": approve} if action == "accept" else None
        return types.ElicitResult(action=action, content=content)  # type: ignore[arg-type]

    return callback


@asynccontextmanager
async def serving(
    db: Path, *, mode: str = "legacy", elicit: Any = None, template: str = "none"
) -> AsyncGenerator[Client]:
    """A ``satchel serve --db DB --agent alice --template TEMPLATE`` process and an SDK
    client on it. Alice starts with no blocks unless ``template`` says otherwise."""
    params = satchel_stdio("--db", str(db), "--agent", AGENT, "--template", template)
    if elicit is None:
        async with Client(params, mode=mode) as client:
            yield client
    else:
        async with Client(params, mode=mode, elicitation_callback=elicit) as client:
            yield client


def _ok(result: types.CallToolResult) -> dict[str, Any]:
    assert result.is_error is not True, result.content
    assert result.structured_content is not None
    return result.structured_content


def _error(result: types.CallToolResult) -> dict[str, Any]:
    assert result.is_error is True
    assert result.meta is not None
    return result.meta["satchel/error"]


async def _approvals(db: Path, command: str, *args: str) -> str:
    """``satchel approvals COMMAND --db DB ARGS`` in another process; its stdout."""
    done = await anyio.run_process(
        [sys.executable, "-m", "satchel", "approvals", command, "--db", str(db), *args],
        check=True,
    )
    return done.stdout.decode()


async def _decide(db: Path, verb: str, approval_id: str) -> None:
    """``satchel approvals approve|deny -- ID`` (an id may start with ``-``)."""
    await _approvals(db, verb, "--", approval_id)


async def _reopen(db: Path) -> SQLiteStore:
    return await SQLiteStore.open(db)


# -- tools ------------------------------------------------------------------------------


async def test_the_memory_tools_are_listed_with_annotations_and_an_approval_argument(
    tmp_path: Path,
) -> None:
    with anyio.fail_after(STARTUP):
        async with serving(tmp_path / "m.db") as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            instructions = client.instructions

    assert {"context", "recall", "search", "send_message"} <= set(tools)
    for name in ("context", "recall", "search", "send_message"):
        assert tools[name].annotations is not None
        assert tools[name].output_schema is not None
    assert tools["search"].annotations is not None
    assert tools["search"].annotations.read_only_hint is True
    assert tools["recall"].annotations is not None
    assert tools["recall"].annotations.destructive_hint is True
    assert tools["send_message"].annotations is not None
    assert tools["send_message"].annotations.open_world_hint is True
    for destructive in ("context", "recall"):
        assert "approval_id" in tools[destructive].input_schema["properties"]
    for harmless in ("search", "send_message"):
        assert "approval_id" not in tools[harmless].input_schema["properties"]
    assert instructions is not None
    assert '<memory agent="alice">' in instructions
    assert "When send_message is called, the turn ends." in instructions


@pytest.mark.parametrize("mode", MODES)
async def test_every_operation_of_every_builtin_tool_runs_over_mcp_and_persists(
    tmp_path: Path, mode: str
) -> None:
    db = tmp_path / "m.db"
    asked: list[str] = []
    with anyio.fail_after(STARTUP + 60):
        async with serving(db, mode=mode, elicit=_answering("accept", asked)) as client:

            async def call(name: str, **args: Any) -> dict[str, Any]:
                return _ok(await client.call_tool(name, args))

            created = await call("context", operation="set", label="persona", value="I am Alice.")
            appended = await call("context", operation="append", label="persona", content="Tea.")
            replaced = await call(
                "context", operation="replace", label="persona", old="Tea.", new="Green tea."
            )
            overwritten = await call(
                "context", operation="set", label="persona", value="I am Alice. Green tea!"
            )
            inserted = await call(
                "recall", operation="insert", content="Kyoto in April", label="trip", tags=["go"]
            )
            await call("recall", operation="append", label="trip", content="Hotel booked.")
            read = await call("recall", operation="read", label="trip")
            loaded = await call("context", operation="load", label="trip")
            listed = await call("context", operation="list")
            archived = await call("context", operation="archive", label="trip")
            await call("context", operation="set", label="scratch", value="draft")
            swapped = await call(
                "context", operation="swap", archive_label="scratch", load_label="trip"
            )
            found = await call("search", domain="archival_memory", query="draft")
            sent = await call("send_message", target={"type": "user"}, content="Hello, Ada.")
            await call("recall", operation="insert", content="forget me", label="temp")
            deleted = await call("recall", operation="delete", label="temp")
            missing = _error(
                await client.call_tool("recall", {"operation": "read", "label": "temp"})
            )
            bad = _error(await client.call_tool("context", {"operation": "levitate"}))

    assert created["block"]["label"] == "persona"
    assert appended["block"]["chars"] == len("I am Alice.\nTea.")
    assert "Replaced" in replaced["message"]
    assert overwritten["previous_value"] == "I am Alice.\nGreen tea."
    assert inserted["entry"]["label"] == "trip"
    assert read["entry"]["value"] == "Kyoto in April\nHotel booked."
    assert loaded["block"]["kind"] == "working"
    assert [b["label"] for b in listed["blocks"]] == ["persona", "trip"]
    assert archived["block"]["kind"] == "archival"
    assert {b["label"]: b["kind"] for b in swapped["blocks"]} == {
        "scratch": "archival",
        "trip": "working",
    }
    assert [r["label"] for r in found["results"]] == ["scratch"]
    assert found["results"][0]["text"] == "draft"
    assert sent["receipts"][0]["to"] == "user"
    assert deleted["entry"]["value"] == "forget me"
    assert missing["kind"] == "failed"
    assert "temp" in missing["message"]
    assert bad["kind"] == "invalid_arguments"
    # the client's human was asked once per destructive call: set x3, replace, delete
    assert len(asked) == 5
    assert all(m.startswith("Allow the assistant to run ") for m in asked)

    store = await _reopen(db)
    try:
        persona = await store.get_block(AGENT, "persona")
        trip = await store.get_block(AGENT, "trip")
        scratch = await store.get_block(AGENT, "scratch")
        labels = [b.label for b in await store.list_blocks(AGENT)]
        messages = await store.list_messages(AGENT)
    finally:
        await store.close()
    assert persona.value == "I am Alice. Green tea!"
    assert (trip.kind, trip.value) == (BlockKind.WORKING, "Kyoto in April\nHotel booked.")
    assert scratch.kind is BlockKind.ARCHIVAL
    assert "temp" not in labels
    assert any(m.content == "Hello, Ada." for m in messages)


async def test_a_new_agent_starts_with_persona_and_human_and_its_first_append_succeeds(
    tmp_path: Path,
) -> None:
    db = tmp_path / "m.db"
    with anyio.fail_after(STARTUP + 30):
        async with serving(db, template="default") as client:
            instructions = client.instructions
            appended = _ok(
                await client.call_tool(
                    "context", {"operation": "append", "label": "human", "content": "Name: Ada."}
                )
            )
            uris = {str(r.uri) for r in (await client.list_resources()).resources}
        store = await _reopen(db)
        try:
            human = await store.get_block(AGENT, "human")
            await store.configure_block(AGENT, "human", permission=Permission.ADMIN)
            await store.delete_block(AGENT, "human")
        finally:
            await store.close()
        async with serving(db, template="default") as client:  # restarted: human stays gone
            listed = _ok(await client.call_tool("context", {"operation": "list"}))

    assert appended["block"]["chars"] == len("Name: Ada.")
    assert (human.value, human.char_limit) == ("Name: Ada.", 5000)
    assert instructions is not None
    assert '<block label="persona" chars="0/5000" permission="read_write">' in instructions
    assert "<description>What you know about the person you talk with" in instructions
    assert {"memory://alice/persona", "memory://alice/human"} <= uris
    assert [b["label"] for b in listed["blocks"]] == ["persona"]


# -- approvals -------------------------------------------------------------------------


async def test_a_destructive_call_waits_for_the_approvals_cli_then_runs_exactly_once(
    tmp_path: Path,
) -> None:
    db = tmp_path / "m.db"
    delete = {"operation": "delete", "label": "temp"}
    with anyio.fail_after(STARTUP + 60):
        async with serving(db) as client:
            _ok(
                await client.call_tool(
                    "recall", {"operation": "insert", "content": "x", "label": "temp"}
                )
            )
            pending = _error(await client.call_tool("recall", delete))
            approval_id = pending["details"]["approval_id"]
            still = _error(await client.call_tool("recall", {**delete, "approval_id": approval_id}))
            listed = json.loads(await _approvals(db, "list", "--json"))
            await _decide(db, "approve", approval_id)
            ran = _ok(await client.call_tool("recall", {**delete, "approval_id": approval_id}))
            again = _error(await client.call_tool("recall", {**delete, "approval_id": approval_id}))
            other = _error(
                await client.call_tool(
                    "recall", {"operation": "delete", "label": "x", "approval_id": approval_id}
                )
            )

    assert pending["kind"] == "needs_approval"
    assert pending["details"]["status"] == "pending_confirmation"
    assert pending["details"]["arguments"] == delete
    assert "approval_id" in pending["message"]
    assert still["details"]["status"] == "pending_confirmation"  # nothing ran meanwhile
    assert [r["id"] for r in listed] == [approval_id]
    assert ran["entry"]["value"] == "x"
    assert again["kind"] == "denied"  # an approval allows one call
    assert other["kind"] == "denied"  # and only with the approved arguments
    store = await _reopen(db)
    try:
        labels = [b.label for b in await store.list_blocks(AGENT)]
    finally:
        await store.close()
    assert "temp" not in labels


async def test_a_destructive_call_denied_from_the_cli_never_runs(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    wipe = {"operation": "set", "label": "persona", "value": "wiped"}
    with anyio.fail_after(STARTUP + 60):
        async with serving(db, elicit=_answering("accept", [])) as client:
            _ok(
                await client.call_tool(
                    "context", {"operation": "set", "label": "persona", "value": "kept"}
                )
            )
        async with serving(db) as client:  # no elicitation: the CLI decides
            pending = _error(await client.call_tool("context", wipe))
            approval_id = pending["details"]["approval_id"]
            await _decide(db, "deny", approval_id)
            refused = _error(
                await client.call_tool("context", {**wipe, "approval_id": approval_id})
            )

    assert refused["kind"] == "denied"
    store = await _reopen(db)
    try:
        persona = await store.get_block(AGENT, "persona")
    finally:
        await store.close()
    assert persona.value == "kept"


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("action", "approve"), [("decline", True), ("accept", False)])
async def test_a_destructive_call_the_client_human_refuses_never_runs_and_is_recorded(
    tmp_path: Path, mode: str, action: str, approve: bool
) -> None:
    db = tmp_path / "m.db"
    asked: list[str] = []
    with anyio.fail_after(STARTUP + 60):
        async with serving(db, mode=mode, elicit=_answering(action, asked, approve)) as client:
            _ok(
                await client.call_tool(
                    "recall", {"operation": "insert", "content": "x", "label": "keep"}
                )
            )
            refused = _error(
                await client.call_tool("recall", {"operation": "delete", "label": "keep"})
            )
            kept = _ok(await client.call_tool("recall", {"operation": "read", "label": "keep"}))
        decided = json.loads(await _approvals(db, "list", "--all", "--json"))

    assert refused["kind"] == "denied"
    assert refused["details"]["status"] == "denied"
    assert kept["entry"]["value"] == "x"
    assert len(asked) == 1
    assert [r["status"] for r in decided] == ["denied"]


# -- resources -------------------------------------------------------------------------


async def test_memory_blocks_are_listed_and_read_as_resources(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    with anyio.fail_after(STARTUP):
        async with serving(db, elicit=_answering("accept", [])) as client:
            _ok(
                await client.call_tool(
                    "context", {"operation": "set", "label": "persona", "value": "I am Alice."}
                )
            )
            _ok(
                await client.call_tool(
                    "recall", {"operation": "insert", "content": "a", "label": "old"}
                )
            )
            listed = {r.uri: r for r in (await client.list_resources()).resources}
            block = await client.read_resource("memory://alice/persona")
            context = await client.read_resource("memory://alice/context")
            with pytest.raises(Exception, match="not found"):
                await client.read_resource("memory://alice/old")  # archival: not a resource

    assert set(listed) == {"memory://alice/context", "memory://alice/persona"}
    persona = listed["memory://alice/persona"]
    assert persona.size == len("I am Alice.")
    assert persona.description is not None
    assert "11 characters" in persona.description
    assert isinstance(block.contents[0], types.TextResourceContents)
    assert block.contents[0].text == "I am Alice."
    assert isinstance(context.contents[0], types.TextResourceContents)
    assert "I am Alice." in context.contents[0].text


async def test_lazy_serving_gates_invoke_tool_with_the_broker_on_the_database(
    tmp_path: Path,
) -> None:
    db = tmp_path / "m.db"
    params = satchel_stdio("--db", str(db), "--agent", AGENT, "--lazy", "--pin", "search")
    delete = {"operation": "delete", "label": "temp"}
    with anyio.fail_after(STARTUP + 60):
        async with Client(params) as client:
            names = {t.name for t in (await client.list_tools()).tools}
            insert = {"operation": "insert", "content": "x", "label": "temp"}
            _ok(
                await client.call_tool("invoke_tool", {"tool_name": "recall", "parameters": insert})
            )
            call = {"tool_name": "recall", "parameters": delete}
            pending = _error(await client.call_tool("invoke_tool", call))
            approval_id = pending["details"]["approval_id"]
            await _decide(db, "approve", approval_id)
            ran = await client.call_tool("invoke_tool", {**call, "approval_id": approval_id})

    assert {"discover_tools", "get_tool_schema", "invoke_tool", "search"} == names
    assert pending["details"]["status"] == "pending_confirmation"
    assert ran.is_error is not True
    store = await _reopen(db)
    try:
        labels = [b.label for b in await store.list_blocks(AGENT)]
    finally:
        await store.close()
    assert "temp" not in labels


async def test_a_memory_write_announces_that_the_resources_changed(tmp_path: Path) -> None:
    changed = anyio.Event()

    async def on_message(message: object) -> None:
        if isinstance(message, types.ResourceListChangedNotification):
            changed.set()

    params = satchel_stdio("--db", str(tmp_path / "m.db"), "--agent", AGENT)
    with anyio.fail_after(STARTUP):
        async with Client(params, mode="legacy", message_handler=on_message) as client:
            await client.list_tools()
            append = {"operation": "insert", "content": "note", "label": "n"}
            _ok(await client.call_tool("recall", append))
            await changed.wait()


async def test_a_memory_write_needing_consent_is_refused_then_runs_once_after_approval(
    tmp_path: Path,
) -> None:
    db = tmp_path / "m.db"
    store = await SQLiteStore.open(db)
    try:
        await store.create_block(AGENT, "rules", "Be kind.", permission=Permission.HUMAN)
    finally:
        await store.close()
    params = satchel_stdio("--db", str(db), "--agent", AGENT, "--consent-wait", "0")
    append = {"operation": "append", "label": "rules", "content": "Be brief."}
    with anyio.fail_after(STARTUP + 60):
        async with Client(params, mode="legacy") as client:
            refused = await client.call_tool("context", append)
            pending = json.loads(await _approvals(db, "list", "--json"))
            await _decide(db, "approve", pending[0]["id"])
            ran = _ok(await client.call_tool("context", append))
            again = await client.call_tool("context", append)

    assert refused.is_error is True
    assert len(pending) == 1
    assert "rules" in pending[0]["reason"]
    assert ran["block"]["chars"] == len("Be kind.\nBe brief.")
    assert again.is_error is True  # the approval allowed one write
    store = await _reopen(db)
    try:
        rules = await store.get_block(AGENT, "rules")
    finally:
        await store.close()
    assert rules.value == "Be kind.\nBe brief."
