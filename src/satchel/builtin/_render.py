"""The context builder: an agent's memory, rendered as the system context a model
reads."""

from __future__ import annotations

from xml.sax.saxutils import quoteattr

from satchel.memory import Block, BlockKind, MemoryStore
from satchel.registry import BaseRegistry

__all__ = ["render_context"]

_PREAMBLE = (
    "Your memory follows. Core blocks are always here; working blocks are archival "
    "entries you loaded. Keep them accurate: they are how you remember across "
    "conversations. Each block shows its size against its limit; when a block nears its "
    "limit, summarise it or archive part of it."
)
_SECTIONS = (
    (BlockKind.CORE, "core_memory", "No core blocks."),
    (BlockKind.WORKING, "working_memory", "No working blocks are loaded."),
)


async def render_context(
    store: MemoryStore, agent: str, registry: BaseRegistry | None = None
) -> str:
    """Render ``agent``'s system context: its core blocks, the working blocks it has
    loaded, then ``registry``'s tool usage rules.

    Each block is an element whose attributes give the label (as the agent addresses
    it), size and limit, permission, and the owner when it was shared by another agent;
    its description and value follow. Values are written as they are, unescaped, so a
    model can quote them exactly in ``context replace``.

    Args:
        store: The memory store.
        agent: Whose context to render.
        registry: Tools whose usage rules to include (none when ``None``).

    Example:
        >>> print(await render_context(store, "ada", tools))  # doctest: +SKIP
        <memory agent="ada">
        ...
        <core_memory>
        <block label="persona" chars="13/2000" permission="read_write">
        ...
    """
    blocks = await store.list_blocks(agent, (BlockKind.CORE, BlockKind.WORKING))
    lines = [f"<memory agent={quoteattr(agent)}>", _PREAMBLE]
    for kind, tag, empty in _SECTIONS:
        lines.append(f"<{tag}>")
        chosen = [b for b in blocks if b.kind is kind]
        lines.extend(_block(b, agent) for b in chosen)
        if not chosen:
            lines.append(empty)
        lines.append(f"</{tag}>")
    lines.append("</memory>")
    rules = registry.usage_rules() if registry is not None else ""
    if rules:
        lines += ["<tool_rules>", rules, "</tool_rules>"]
    return "\n".join(lines) + "\n"


def _block(block: Block, agent: str) -> str:
    shared = block.agent != agent
    limit = f"/{block.char_limit}" if block.char_limit is not None else ""
    level = block.shares.get(agent, block.permission) if shared else block.permission
    attrs = [
        f"label={quoteattr(block.address_for(agent))}",
        f'chars="{block.chars}{limit}"',
        f'permission="{level.value}"',
    ]
    if shared:
        attrs.append(f"shared_from={quoteattr(block.agent)}")
    if block.pinned:
        attrs.append('pinned="true"')
    parts = [f"<block {' '.join(attrs)}>"]
    if block.description:
        parts.append(f"<description>{block.description}</description>")
    parts += ["<value>", block.value, "</value>", "</block>"]
    return "\n".join(parts)
