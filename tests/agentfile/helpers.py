"""What the agent file tests compare: an agent's blocks, messages, rules and tools in a
form that leaves out ids and times, which an import makes anew."""

from __future__ import annotations

from typing import Any

from satchel.agentfile import PROFILE_LABEL, load_profile
from satchel.memory import Block, MemoryStore, Message


async def snapshot(store: MemoryStore, agent: str) -> dict[str, Any]:
    """The agent's blocks (by label), messages (in order), rules and tools."""
    blocks: dict[str, tuple[Any, ...]] = {}
    messages: list[tuple[Any, ...]] = []
    async for record in store.export_records(agent):
        if isinstance(record, Block) and record.label != PROFILE_LABEL:
            blocks[record.label] = (
                record.value,
                record.description,
                record.char_limit,
                record.permission,
                record.kind,
                tuple(sorted(record.shares.values())),
            )
        elif isinstance(record, Message):
            messages.append(
                (record.created_at, record.role, record.content, record.metadata.get("tool_calls"))
            )
    messages.sort(key=lambda m: m[0])
    profile = await load_profile(store, agent)
    return {
        "blocks": blocks,
        "messages": [m[1:] for m in messages],
        "rules": profile.rules if profile else None,
        "letta_rules": profile.tool_rules if profile else None,
        "tools": sorted(t["name"] for t in profile.tools) if profile else None,
        "schemas": profile.tool_schemas if profile else None,
        "system": profile.system if profile else None,
    }
