"""Exporting an agent as a Letta Agent File in Letta's current shape
(``AgentFileSchema``): its blocks, archival entries (as ``passages``), conversation,
and, for an imported agent, what its profile kept (system prompt, tool rules, tools,
MCP servers, settings), so an imported file comes back as it went in."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio

from satchel._errors import NotFoundError
from satchel._version import __version__
from satchel.agentfile._profile import PROFILE_LABEL, AgentProfile, load_profile
from satchel.agentfile._schema import LettaAgentFile
from satchel.memory import Block, BlockKind, MemoryStore, Message, Permission, validate_agent

__all__ = ["export_agent_file", "export_document"]

_AGENT_DEFAULTS: dict[str, Any] = {
    "memory_blocks": [],
    "tools": [],
    "source_ids": [],
    "tags": [],
    "agent_type": "letta_v1_agent",
    "include_base_tools": False,
    "include_multi_agent_tools": False,
    "include_base_tool_rules": False,
    "include_default_source": False,
    "files_agents": [],
    "group_ids": [],
}


async def export_agent_file(store: MemoryStore, agent: str, path: str | Path) -> LettaAgentFile:
    """Write ``agent`` (with the agents imported beside it from the same file) to
    ``path`` as a Letta Agent File; returns what was written.

    Raises:
        NotFoundError: ``store`` holds nothing of ``agent``.
    """
    document = await export_document(store, agent)
    text = json.dumps(document.model_dump(mode="json"), ensure_ascii=False, indent=2)
    await anyio.Path(path).write_text(text + "\n", encoding="utf-8")
    return document


async def export_document(store: MemoryStore, agent: str) -> LettaAgentFile:
    """``agent`` as a :class:`~satchel.agentfile.LettaAgentFile` (see
    :func:`export_agent_file`)."""
    validate_agent(agent)
    known = await store.describe_agents(agent)
    if not known:
        raise NotFoundError(f"no agent {agent!r} in this store", details={"agent": agent})
    profile = await load_profile(store, agent)
    names = [agent]
    if profile is not None:
        present = {s.name for s in await store.describe_agents()}
        names += [c for c in profile.companions if c in present and c != agent]
    profiles = {agent: profile}
    for other in names[1:]:
        profiles[other] = await load_profile(store, other)
    owned: dict[str, list[Block]] = {}
    conversations: dict[str, list[Message]] = {}
    for name in names:
        owned[name], conversations[name] = await _records(store, name)
    return _document(names, profiles, owned, conversations)


async def _records(store: MemoryStore, agent: str) -> tuple[list[Block], list[Message]]:
    blocks: list[Block] = []
    messages: list[Message] = []
    async for record in store.export_records(agent):
        if isinstance(record, Block):
            if record.agent == agent:
                blocks.append(record)
        elif record.agent == agent:
            messages.append(record)
    return blocks, messages


def _document(
    names: Sequence[str],
    profiles: dict[str, AgentProfile | None],
    owned: dict[str, list[Block]],
    conversations: dict[str, list[Message]],
) -> LettaAgentFile:
    agent_ids = {
        name: (p.letta_id if (p := profiles[name]) is not None else f"agent-{i}")
        for i, name in enumerate(names)
    }
    if len(set(agent_ids.values())) != len(agent_ids):
        agent_ids = {name: f"agent-{i}" for i, name in enumerate(names)}
    block_entries: list[dict[str, Any]] = []
    block_ids: dict[tuple[str, str], str] = {}
    passages: list[dict[str, Any]] = []
    for name in names:
        for block in owned[name]:
            if block.label == PROFILE_LABEL:
                continue
            if block.kind is BlockKind.ARCHIVAL:
                passages.append(_passage(block, agent_ids[name]))
                continue
            block_id = f"block-{len(block_entries)}"
            block_ids[(name, block.label)] = block_id
            block_entries.append(_block(block, block_id))
    tool_entries: list[dict[str, Any]] = []
    tool_ids: dict[str, str] = {}
    agents: list[dict[str, Any]] = []
    counter = [0]
    for name in names:
        profile = profiles[name]
        listed = _visible(name, names, owned, block_ids)
        if profile is not None and profile.block_order:
            order = {label: i for i, label in enumerate(profile.block_order)}
            listed.sort(key=lambda item: order.get(item[0], len(order)))
        my_tools: list[str] = []
        for tool in profile.tools if profile is not None else ():
            key = json.dumps(tool, sort_keys=True)
            if key not in tool_ids:
                tool_ids[key] = f"tool-{len(tool_entries)}"
                tool_entries.append({**tool, "id": tool_ids[key]})
            my_tools.append(tool_ids[key])
        agents.append(
            _agent(
                name,
                profile,
                agent_ids[name],
                [b for _, b in listed],
                my_tools,
                conversations[name],
                counter,
            )
        )
    first = profiles[names[0]]
    file: dict[str, Any] = dict(first.file) if first is not None else {}
    file.setdefault("metadata", {})
    file["metadata"] = {**file["metadata"], "exported_by": f"satchel {__version__}"}
    file["created_at"] = datetime.now(UTC).isoformat()
    for key in ("groups", "files", "sources", "mcp_servers"):
        file.setdefault(key, [])
    return LettaAgentFile.model_validate(
        {
            **file,
            "agents": agents,
            "blocks": block_entries,
            "tools": tool_entries,
            "passages": passages,
        }
    )


def _visible(
    name: str,
    names: Sequence[str],
    owned: dict[str, list[Block]],
    block_ids: dict[tuple[str, str], str],
) -> list[tuple[str, str]]:
    """(label, file id) of each block ``name`` sees: its own, then those shared with it
    by the other exported agents."""
    out: list[tuple[str, str]] = []
    for owner in names:
        for block in owned[owner]:
            key = (owner, block.label)
            if key in block_ids and (owner == name or name in block.shares):
                out.append((block.label, block_ids[key]))
    return out


def _letta(metadata: Any) -> dict[str, Any]:
    value = dict(metadata).get("letta") if metadata else None
    return dict(value) if isinstance(value, dict) else {}  # pyright: ignore[reportUnknownArgumentType]


def _block(block: Block, block_id: str) -> dict[str, Any]:
    return {
        **_letta(block.metadata),
        "id": block_id,
        "label": block.label,
        "value": block.value,
        "limit": block.char_limit,
        "description": block.description or None,
        "read_only": block.permission is Permission.READ_ONLY,
        "metadata": _letta(block.metadata).get("metadata", {}),
        "tags": list(block.tags) or None,
    }


def _passage(block: Block, agent_id: str) -> dict[str, Any]:
    return {
        **_letta(block.metadata),
        "id": block.label,
        "text": block.value,
        "agent_id": agent_id,
        "tags": list(block.tags),
        "created_at": block.created_at.isoformat(),
    }


def _agent(
    name: str,
    profile: AgentProfile | None,
    agent_id: str,
    blocks: list[str],
    tools: list[str],
    messages: list[Message],
    counter: list[int],
) -> dict[str, Any]:
    entries: list[dict[str, Any]] = []
    if profile is not None and profile.opening is not None:
        entries.append(dict(profile.opening))
    ordered = sorted(messages, key=lambda m: (m.created_at, _letta(m.metadata).get("position", 0)))
    entries.extend(_message(m) for m in ordered)
    for entry in entries:
        entry["id"] = f"message-{counter[0]}"
        entry["agent_id"] = agent_id
        counter[0] += 1
    base: dict[str, Any] = dict(_AGENT_DEFAULTS)
    if profile is not None:
        base.update(profile.agent)
    return {
        **base,
        "id": agent_id,
        "name": profile.name if profile is not None else name,
        "system": profile.system if profile is not None else "",
        "block_ids": blocks,
        "tool_ids": tools,
        "tool_rules": list(profile.tool_rules) if profile is not None else [],
        "messages": entries,
        "in_context_message_ids": [e["id"] for e in entries],
    }


def _message(message: Message) -> dict[str, Any]:
    letta = _letta(message.metadata)
    meta = dict(message.metadata)
    letta.pop("position", None)
    content = letta.pop("content", None)
    if content is None:
        text = "" if meta.get("content_from_calls") else message.content
        content = [{"type": "text", "text": text}] if text else []
    role = letta.pop("role", message.role)
    entry: dict[str, Any] = {
        **letta,
        "type": "message",
        "role": role,
        "content": content,
        "created_at": message.created_at.isoformat(),
    }
    if "tool_calls" not in letta and meta.get("tool_calls"):
        calls: list[Any] = list(meta["tool_calls"])
        entry["tool_calls"] = [_openai_call(_letta({"letta": call})) for call in calls]
    if message.role == "tool":
        entry["tool_call_id"] = meta.get("tool_call_id")
        entry["name"] = meta.get("name")
    return entry


def _openai_call(call: dict[str, Any]) -> dict[str, Any]:
    """A tool call satchel recorded, in OpenAI's form (as Letta keeps them)."""
    return {
        "id": call.get("id"),
        "type": "function",
        "function": {
            "name": call.get("name"),
            "arguments": json.dumps(call.get("arguments") or {}, ensure_ascii=False),
        },
    }
