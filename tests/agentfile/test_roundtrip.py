"""Every shared Letta Agent File imports (or is refused in one line), its blocks and
messages are searchable, and its export imports again unchanged, on both backends
(issue 31 item 1)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from memory.conftest import StoreFactory
from satchel.agentfile import (
    export_agent_file,
    import_agent_file,
    import_document,
    load_profile,
    parse_agent_file,
    read_agent_file,
)
from satchel.memory import BlockKind, Domain, Permission
from satchel.rules import AllowedChildren, Conditional, Init, Terminal

from .conftest import SHARED_FILES, shared_file
from .helpers import snapshot

pytestmark = pytest.mark.anyio

if not SHARED_FILES:
    pytest.skip("the shared data folder beside the checkout is absent", allow_module_level=True)


@pytest.mark.parametrize("path", SHARED_FILES, ids=lambda p: p.stem)
async def test_every_shared_file_round_trips_unchanged(
    make_store: StoreFactory, path: Path, tmp_path: Path
) -> None:
    store = await make_store()
    report = await import_agent_file(store, path, name="first")
    exported = tmp_path / "out.af"
    await export_agent_file(store, "first", exported)
    again = await import_agent_file(store, exported, name="second")
    assert len(again.agents) == len(report.agents)
    assert (again.blocks, again.messages, again.rules) == (
        report.blocks,
        report.messages,
        report.rules,
    )
    for one, two in zip(report.agents, again.agents, strict=True):
        assert await snapshot(store, two) == await snapshot(store, one)
    # and the second export is the first one's content
    twice = tmp_path / "twice.af"
    await export_agent_file(store, "second", twice)
    first, second = _without_times(exported), _without_times(twice)
    assert second == first


def _without_times(path: Path) -> dict[str, Any]:
    document = json.loads(path.read_text())
    document.pop("created_at")
    return document


@pytest.mark.parametrize("path", SHARED_FILES, ids=lambda p: p.stem)
async def test_shared_file_blocks_keep_label_limit_description_and_read_only(
    make_store: StoreFactory, path: Path
) -> None:
    store = await make_store()
    document = read_agent_file(path)
    report = await import_agent_file(store, path)
    first = report.agents[0]
    listed = set(document.agents[0].block_ids or ())
    for entry in document.blocks:
        if entry.id not in listed:
            continue
        block = await store.get_block(first, entry.label)
        assert block.value == entry.value
        assert block.char_limit == entry.limit
        assert block.description == (entry.description or "")
        expected = Permission.READ_ONLY if entry.read_only else Permission.READ_WRITE
        assert block.permission is expected
        assert block.kind is BlockKind.CORE
    profile = await load_profile(store, first)
    assert profile is not None
    assert profile.instructions == (document.agents[0].system or "")


async def test_a_shared_file_block_and_message_are_searchable(make_store: StoreFactory) -> None:
    store = await make_store()
    report = await import_agent_file(store, shared_file("evie.af"))
    hits = await store.search(report.agents[0], "Letta Cloud long-term memory", limit=5)
    assert any(hit.label == "about_me" for hit in hits)
    sleeper = report.agents[1]
    said = await store.search(sleeper, "first login", domains=Domain.CONVERSATIONS, limit=5)
    assert said
    assert "last_login" in said[0].text


async def test_blocks_several_agents_list_are_shared_with_the_others(
    make_store: StoreFactory,
) -> None:
    store = await make_store()
    main, sleeper = (await import_agent_file(store, shared_file("evie.af"))).agents
    shared = await store.get_block(sleeper, "persona")
    assert shared.agent == main
    assert shared.shares == {sleeper: Permission.READ_WRITE}
    read_only = await store.get_block(sleeper, "guardrails")
    assert read_only.shares == {sleeper: Permission.READ_ONLY}
    own = await store.get_block(sleeper, "memory_persona")
    assert own.agent == sleeper


async def test_tool_rules_become_satchel_rules(make_store: StoreFactory) -> None:
    store = await make_store()
    report = await import_agent_file(store, shared_file("outreach_workflow_agent.af"))
    profile = await load_profile(store, report.agents[0])
    assert profile is not None
    assert profile.rules == [
        Init("retrieve_candidate"),
        AllowedChildren("retrieve_candidate", ["evaluate_candidate"]),
        Conditional(
            "evaluate_candidate", {"True": "send_email", "False": "reject"}, default="reject"
        ),
        Terminal("reject"),
        Terminal("send_email"),
    ]
    assert report.rules == 5


async def test_custom_tool_code_is_reported_never_run(make_store: StoreFactory) -> None:
    store = await make_store()
    report = await import_agent_file(store, shared_file("customer_service.af"))
    tools = {tool.name: tool for tool in report.tools}
    assert tools["cancel_order"].source_lines > 0
    assert "--tools" in tools["cancel_order"].advice
    assert "search" in tools["conversation_search"].advice
    assert tools["cancel_order"].parameters["type"] == "object"


def _document(**agent: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"id": "agent-0", "name": "ada", "system": "Be kind."}
    return {"agents": [{**base, **agent}], "blocks": [], "tools": []}


CALLS = [
    {
        "id": "message-0",
        "role": "system",
        "content": [{"type": "text", "text": "rendered context"}],
        "created_at": "2026-01-01T00:00:00+00:00",
    },
    {
        "id": "message-1",
        "role": "user",
        "content": [{"type": "text", "text": "What is the weather in Lyon?"}],
        "created_at": "2026-01-01T00:00:01+00:00",
    },
    {
        "id": "message-2",
        "role": "assistant",
        "content": [],
        "tool_calls": [
            {
                "id": "call-1",
                "type": "function",
                "function": {"name": "weather", "arguments": '{"city": "Lyon"}'},
            }
        ],
        "created_at": "2026-01-01T00:00:02+00:00",
    },
    {
        "id": "message-3",
        "role": "tool",
        "content": [{"type": "text", "text": "sunny"}],
        "tool_call_id": "call-1",
        "name": "weather",
        "created_at": "2026-01-01T00:00:03+00:00",
    },
    {
        "id": "message-4",
        "role": "assistant",
        "content": [
            {"type": "reasoning", "reasoning": "easy", "signature": "s"},
            {"type": "text", "text": "It is sunny in Lyon."},
        ],
        "created_at": "2026-01-01T00:00:04+00:00",
    },
]


async def test_messages_with_tool_calls_are_recorded_as_satchel_records_them(
    make_store: StoreFactory,
) -> None:
    store = await make_store()
    document = parse_agent_file(json.dumps(_document(messages=CALLS)))
    report = await import_document(store, document)
    assert report.messages == 4
    stored = await store.list_messages("ada")
    assert [m.role for m in stored] == ["user", "assistant", "tool", "assistant"]
    call = stored[1]
    assert call.metadata["tool_calls"] == [
        {"id": "call-1", "name": "weather", "arguments": {"city": "Lyon"}}
    ]
    assert call.metadata["content_from_calls"] is True
    assert stored[2].metadata["tool_call_id"] == "call-1"
    assert stored[3].content == "It is sunny in Lyon."


async def test_messages_and_passages_round_trip(make_store: StoreFactory, tmp_path: Path) -> None:
    store = await make_store()
    passages = [
        {"id": "passage-0", "text": "Ada's cat is called Turing.", "tags": ["pets"]},
        {"id": "passage-1", "text": "Ada moved to Lyon in 2024.", "agent_id": "agent-0"},
    ]
    raw = {**_document(messages=CALLS), "passages": passages}
    await import_document(store, parse_agent_file(json.dumps(raw)))
    hits = await store.search("ada", "cat name", domains=Domain.ARCHIVAL_MEMORY, limit=3)
    assert hits[0].label == "passage-0"
    assert hits[0].tags == ("pets",)
    out = tmp_path / "ada.af"
    await export_agent_file(store, "ada", out)
    await import_agent_file(store, out, name="ada2")
    assert await snapshot(store, "ada2") == await snapshot(store, "ada")
    written = json.loads(out.read_text())
    messages = written["agents"][0]["messages"]
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "tool", "assistant"]
    assert messages[2]["tool_calls"][0]["function"]["name"] == "weather"
    assert messages[4]["content"][0]["type"] == "reasoning"
    assert sorted(p["text"] for p in written["passages"]) == sorted(p["text"] for p in passages)


async def test_a_native_agent_exports_and_imports(make_store: StoreFactory, tmp_path: Path) -> None:
    store = await make_store()
    await store.create_block("bo", "human", "Bo likes tea.", char_limit=500)
    await store.create_block("bo", "notes", "archived", kind=BlockKind.ARCHIVAL)
    await store.add_message("bo", "user", "hello", created_at=datetime(2026, 1, 1, tzinfo=UTC))
    out = tmp_path / "bo.af"
    await export_agent_file(store, "bo", out)
    report = await import_agent_file(store, out, name="bo2")
    assert (report.blocks, report.passages, report.messages) == (1, 1, 1)
    human = await store.get_block("bo2", "human")
    assert (human.value, human.char_limit) == ("Bo likes tea.", 500)


async def test_import_reports_progress_up_to_every_record(make_store: StoreFactory) -> None:
    store = await make_store()
    messages = [{"id": f"message-{i}", "role": "user", "content": f"note {i}"} for i in range(300)]
    document = parse_agent_file(json.dumps(_document(messages=messages)))
    seen: list[tuple[int, int]] = []
    report = await import_document(store, document, progress=lambda d, t: seen.append((d, t)))
    assert report.messages == 300
    assert seen[-1] == (301, 301)  # the messages and the profile
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)


async def test_block_tags_map_both_ways(make_store: StoreFactory, tmp_path: Path) -> None:
    store = await make_store()
    raw = _document(block_ids=["block-0"])
    raw["blocks"] = [{"id": "block-0", "label": "human", "value": "Ada", "tags": ["me", "me"]}]
    await import_document(store, parse_agent_file(json.dumps(raw)))
    assert (await store.get_block("ada", "human")).tags == ("me",)
    out = tmp_path / "ada.af"
    await export_agent_file(store, "ada", out)
    assert json.loads(out.read_text())["blocks"][0]["tags"] == ["me"]
