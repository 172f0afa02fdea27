"""``satchel serve`` with its memory: the built-in tools through a real process and the
official SDK client, memory writes decided by the block's permission, approvals of
user tools by elicitation and by ``satchel approvals`` in another process, memory as
resources, and the database intact afterwards."""

from __future__ import annotations

import json
import os
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

from .conftest import FILE_TOOLS, STARTUP, satchel_stdio

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
    db: Path,
    *,
    mode: str = "legacy",
    elicit: Any = None,
    extra: tuple[str, ...] = (),
    template: str = "none",
) -> AsyncGenerator[Client]:
    """A ``satchel serve --db DB --agent alice --template TEMPLATE EXTRA`` process and an
    SDK client on it. Alice starts with no blocks unless ``template`` says otherwise."""
    params = satchel_stdio("--db", str(db), "--agent", AGENT, "--template", template, *extra)
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


async def test_the_memory_tools_keep_their_annotations_and_only_user_tools_take_approvals(
    tmp_path: Path,
) -> None:
    with anyio.fail_after(STARTUP):
        async with serving(tmp_path / "m.db", extra=("--tools", FILE_TOOLS)) as client:
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
    assert tools["context"].annotations is not None
    assert tools["context"].annotations.destructive_hint is True  # the client's own UI
    for memory in ("context", "recall", "search", "send_message", "touch_file"):
        assert "approval_id" not in tools[memory].input_schema["properties"]
    assert tools["delete_file"].annotations is not None
    assert tools["delete_file"].annotations.destructive_hint is True  # by its delete action
    assert "approval_id" in tools["delete_file"].input_schema["properties"]
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
    # memory writes on read_write/admin blocks run at once: nobody was asked
    assert asked == []

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


def _files(tmp_path: Path, *names: str) -> list[Path]:
    made = [tmp_path / name for name in names]
    for path in made:
        path.write_text("x")
    return made


async def test_a_destructive_user_tool_waits_for_the_approvals_cli_then_runs_exactly_once(
    tmp_path: Path,
) -> None:
    db = tmp_path / "m.db"
    [doomed, other] = _files(tmp_path, "doomed.txt", "other.txt")
    delete = {"path": str(doomed)}
    with anyio.fail_after(STARTUP + 60):
        async with serving(db, extra=("--tools", FILE_TOOLS)) as client:
            pending = _error(await client.call_tool("delete_file", delete))
            approval_id = pending["details"]["approval_id"]
            still = _error(
                await client.call_tool("delete_file", {**delete, "approval_id": approval_id})
            )
            listed = json.loads(await _approvals(db, "list", "--json"))
            await _decide(db, "approve", approval_id)
            ran = _ok(await client.call_tool("delete_file", {**delete, "approval_id": approval_id}))
            again = _error(
                await client.call_tool("delete_file", {**delete, "approval_id": approval_id})
            )
            wrong = _error(
                await client.call_tool(
                    "delete_file", {"path": str(other), "approval_id": approval_id}
                )
            )

    assert pending["kind"] == "needs_approval"
    assert pending["details"]["status"] == "pending_confirmation"
    assert pending["details"]["arguments"] == delete
    assert "approval_id" in pending["message"]
    assert still["details"]["status"] == "pending_confirmation"  # nothing ran meanwhile
    assert [(r["id"], r["agent"]) for r in listed] == [(approval_id, AGENT)]
    assert ran["result"] == f"deleted {doomed}"
    assert not doomed.exists()
    assert again["kind"] == "denied"  # an approval allows one call
    assert wrong["kind"] == "denied"  # and only with the approved arguments
    assert other.exists()


async def test_a_destructive_user_tool_denied_from_the_cli_never_runs(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    [kept] = _files(tmp_path, "kept.txt")
    delete = {"path": str(kept)}
    with anyio.fail_after(STARTUP + 60):
        async with serving(db, extra=("--tools", FILE_TOOLS)) as client:  # the CLI decides
            pending = _error(await client.call_tool("delete_file", delete))
            approval_id = pending["details"]["approval_id"]
            await _decide(db, "deny", approval_id)
            refused = _error(
                await client.call_tool("delete_file", {**delete, "approval_id": approval_id})
            )

    assert refused["kind"] == "denied"
    assert kept.exists()


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("action", "approve"), [("decline", True), ("accept", False)])
async def test_a_destructive_call_the_client_human_refuses_never_runs_and_is_recorded(
    tmp_path: Path, mode: str, action: str, approve: bool
) -> None:
    db = tmp_path / "m.db"
    [kept] = _files(tmp_path, "keep.txt")
    asked: list[str] = []
    elicit = _answering(action, asked, approve)
    with anyio.fail_after(STARTUP + 60):
        async with serving(db, mode=mode, elicit=elicit, extra=("--tools", FILE_TOOLS)) as client:
            refused = _error(await client.call_tool("delete_file", {"path": str(kept)}))
        decided = json.loads(await _approvals(db, "list", "--all", "--json"))

    assert refused["kind"] == "denied"
    assert refused["details"]["status"] == "denied"
    assert kept.exists()
    assert len(asked) == 1
    assert asked[0].startswith("Allow the assistant to run delete_file(")
    assert [r["status"] for r in decided] == ["denied"]


async def test_context_set_and_replace_on_a_read_write_block_run_at_once(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    with anyio.fail_after(STARTUP + 30):
        async with serving(db) as client:  # no elicitation, nobody at a terminal
            set_ = _ok(
                await client.call_tool(
                    "context", {"operation": "set", "label": "human", "value": "Ada, a pilot."}
                )
            )
            replaced = _ok(
                await client.call_tool(
                    "context",
                    {"operation": "replace", "label": "human", "old": "pilot", "new": "sailor"},
                )
            )
            archived = _ok(
                await client.call_tool("context", {"operation": "archive", "label": "human"})
            )
        listed = json.loads(await _approvals(db, "list", "--all", "--json"))

    assert set_["block"]["label"] == "human"
    assert "Replaced" in replaced["message"]
    assert archived["block"]["kind"] == "archival"
    assert listed == []  # nothing was asked
    store = await _reopen(db)
    try:
        human = await store.get_block(AGENT, "human")
    finally:
        await store.close()
    assert human.value == "Ada, a sailor."


async def test_approve_none_runs_destructive_user_tools_at_once(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    [doomed] = _files(tmp_path, "doomed.txt")
    with anyio.fail_after(STARTUP + 30):
        async with serving(db, extra=("--tools", FILE_TOOLS, "--approve", "none")) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            ran = _ok(await client.call_tool("delete_file", {"path": str(doomed)}))

    assert "approval_id" not in tools["delete_file"].input_schema["properties"]
    assert ran["result"] == f"deleted {doomed}"
    assert not doomed.exists()


async def test_approve_writes_holds_every_user_write_but_not_memory(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    made = tmp_path / "new.txt"
    env_params = satchel_stdio("--db", str(db), "--agent", AGENT, "--tools", FILE_TOOLS)
    env_params = env_params.model_copy(update={"env": {**os.environ, "SATCHEL_APPROVE": "writes"}})
    with anyio.fail_after(STARTUP + 30):
        async with Client(env_params, mode="legacy") as client:
            held = _error(await client.call_tool("touch_file", {"path": str(made)}))
            memory = _ok(
                await client.call_tool(
                    "context", {"operation": "set", "label": "notes", "value": "hi"}
                )
            )
            read_only = _ok(await client.call_tool("search", {"domain": "all", "query": "hi"}))

    assert held["details"]["status"] == "pending_confirmation"
    assert not made.exists()
    assert memory["block"]["label"] == "notes"
    assert "results" in read_only


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


async def test_lazy_serving_runs_memory_at_once_and_gates_destructive_user_tools(
    tmp_path: Path,
) -> None:
    db = tmp_path / "m.db"
    [doomed] = _files(tmp_path, "doomed.txt")
    params = satchel_stdio(
        "--db", str(db), "--agent", AGENT, "--lazy", "--pin", "search", "--tools", FILE_TOOLS
    )
    with anyio.fail_after(STARTUP + 60):
        async with Client(params) as client:
            names = {t.name for t in (await client.list_tools()).tools}
            found = _ok(
                await client.call_tool("discover_tools", {"query": "delete a file", "limit": 10})
            )
            edits = [
                {"operation": "set", "label": "human", "value": "Ada"},
                {"operation": "replace", "label": "human", "old": "Ada", "new": "Ada L."},
                {"operation": "insert", "content": "x", "label": "temp"},
            ]
            ran = [
                await client.call_tool(
                    "invoke_tool",
                    {"tool_name": "recall" if "content" in e else "context", "parameters": e},
                )
                for e in edits
            ]
            forget = await client.call_tool(
                "invoke_tool",
                {"tool_name": "recall", "parameters": {"operation": "delete", "label": "temp"}},
            )
            call = {"tool_name": "delete_file", "parameters": {"path": str(doomed)}}
            pending = _error(await client.call_tool("invoke_tool", call))
            approval_id = pending["details"]["approval_id"]
            existed = doomed.exists()
            await _decide(db, "approve", approval_id)
            deleted = await client.call_tool("invoke_tool", {**call, "approval_id": approval_id})

    assert {"discover_tools", "get_tool_schema", "invoke_tool", "search"} == names
    assert found["needs_approval"] == ["delete_file"]
    assert [r.is_error is True for r in ran] == [False, False, False], ran
    assert forget.is_error is not True  # archival entries are admin: delete runs at once
    assert pending["details"]["status"] == "pending_confirmation"
    assert existed
    assert deleted.is_error is not True
    assert not doomed.exists()
    store = await _reopen(db)
    try:
        human = await store.get_block(AGENT, "human")
        labels = [b.label for b in await store.list_blocks(AGENT)]
    finally:
        await store.close()
    assert human.value == "Ada L."
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


@pytest.mark.parametrize("permission", [Permission.HUMAN, Permission.PARTNER])
async def test_a_memory_write_needing_consent_is_refused_then_runs_once_after_approval(
    tmp_path: Path, permission: Permission
) -> None:
    db = tmp_path / "m.db"
    store = await SQLiteStore.open(db)
    try:
        await store.create_block(AGENT, "rules", "Be kind.", permission=permission)
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


@pytest.mark.parametrize("lazy", [False, True], ids=["direct", "lazy"])
@pytest.mark.parametrize("approve", [True, False], ids=["approved", "refused"])
async def test_memory_consent_asks_the_clients_human_directly_and_behind_the_meta_tools(
    tmp_path: Path, lazy: bool, approve: bool
) -> None:
    db = tmp_path / "m.db"
    store = await SQLiteStore.open(db)
    try:
        await store.create_block(AGENT, "rules", "Be kind.", permission=Permission.HUMAN)
    finally:
        await store.close()
    asked: list[str] = []
    append = {"operation": "append", "label": "rules", "content": "Be brief."}
    extra = ("--consent-wait", "0", *(("--lazy",) if lazy else ()))
    with anyio.fail_after(STARTUP + 60):
        async with serving(
            db, elicit=_answering("accept", asked, approve=approve), extra=extra
        ) as client:
            if lazy:
                call = {"tool_name": "context", "parameters": append}
                result = await client.call_tool("invoke_tool", call)
            else:
                result = await client.call_tool("context", append)
        listed = json.loads(await _approvals(db, "list", "--all", "--json"))

    assert len(asked) == 1
    assert "rules" in asked[0]
    assert (result.is_error is True) is not approve
    assert [(r["status"], r["origin"]) for r in listed] == [
        ("used" if approve else "denied", "mcp")
    ]
    store = await _reopen(db)
    try:
        rules = await store.get_block(AGENT, "rules")
    finally:
        await store.close()
    assert rules.value == ("Be kind.\nBe brief." if approve else "Be kind.")
