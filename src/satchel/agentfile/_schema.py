"""The shape of a Letta Agent File (``.af``), as pydantic models.

The fields satchel maps are typed (a value of the wrong type is refused with the field's
path); every other field is kept as it came (``extra="allow"``), so an export gives back
what satchel has no place for. The shape follows Letta's current ``AgentFileSchema``:
top-level lists of agents, groups, blocks, files, sources, tools and MCP servers, with
file-local ids (``agent-0``, ``block-3``) that the lists refer to each other by.
``passages`` (archival memory) is not part of Letta's schema; satchel reads and writes
it as an extension, which Letta ignores.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, StrictStr

__all__ = [
    "LettaAgent",
    "LettaAgentFile",
    "LettaBlock",
    "LettaMcpServer",
    "LettaMessage",
    "LettaPassage",
    "LettaTool",
    "LettaToolRule",
]


class _Entry(BaseModel):
    model_config = ConfigDict(extra="allow", strict=True)

    def rest(self, *mapped: str) -> dict[str, Any]:
        """The fields of this entry satchel does not map (``mapped`` are), dropped when
        ``None`` or empty, for keeping in metadata."""
        data = self.model_dump(mode="json", exclude=set(mapped))
        return {k: v for k, v in data.items() if v not in (None, [], {})}


class LettaBlock(_Entry):
    """A memory block: ``label``, ``value``, ``limit`` (characters), ``description``
    and ``read_only``."""

    id: StrictStr
    label: StrictStr
    value: StrictStr = ""
    limit: StrictInt | None = None
    description: StrictStr | None = None
    read_only: StrictBool | None = False


class LettaToolRule(_Entry):
    """A tool rule; ``type`` says which (``exit_loop``, ``run_first``, ...)."""

    tool_name: StrictStr
    type: StrictStr
    children: list[StrictStr] | None = None
    child_output_mapping: dict[str, StrictStr] | None = None
    default_child: StrictStr | None = None
    require_output_mapping: StrictBool | None = None
    max_count_limit: StrictInt | None = None
    args: dict[str, Any] | None = None
    prompt_template: StrictStr | None = None


class LettaTool(_Entry):
    """A tool: its JSON schema (``name``, ``description``, ``parameters``) and, for a
    custom tool, its source code (never run by satchel)."""

    id: StrictStr
    name: StrictStr | None = None
    description: StrictStr | None = None
    tool_type: StrictStr | None = None
    source_type: StrictStr | None = None
    source_code: StrictStr | None = None
    json_schema: dict[str, Any] | None = None


class LettaMcpServer(_Entry):
    """An MCP server the agent's tools came from (no credentials: Letta strips them)."""

    id: StrictStr
    server_type: StrictStr
    server_name: StrictStr
    server_url: StrictStr | None = None
    stdio_config: dict[str, Any] | None = None


class LettaMessage(_Entry):
    """One message of an agent's history; ``content`` is text or a list of parts."""

    id: StrictStr
    role: StrictStr
    content: StrictStr | list[dict[str, Any]] | None = None
    name: StrictStr | None = None
    tool_calls: list[dict[str, Any]] | None = None
    tool_call_id: StrictStr | None = None
    created_at: datetime | None = Field(default=None, strict=False)


class LettaPassage(_Entry):
    """An archival passage (satchel's extension to the file): text and tags."""

    id: StrictStr | None = None
    text: StrictStr
    agent_id: StrictStr | None = None
    tags: list[StrictStr] | None = None
    created_at: datetime | None = Field(default=None, strict=False)


class LettaAgent(_Entry):
    """One agent: its system prompt, the ids of its blocks and tools, its tool rules
    and its messages."""

    id: StrictStr
    name: StrictStr
    system: StrictStr | None = None
    block_ids: list[StrictStr] | None = None
    tool_ids: list[StrictStr] | None = None
    tool_rules: list[LettaToolRule] | None = None
    messages: list[LettaMessage] = Field(default_factory=list[LettaMessage])
    memory_blocks: list[dict[str, Any]] | None = None


class LettaAgentFile(_Entry):
    """A whole agent file."""

    agents: list[LettaAgent]
    groups: list[dict[str, Any]] = Field(default_factory=list[dict[str, Any]])
    blocks: list[LettaBlock] = Field(default_factory=list[LettaBlock])
    files: list[dict[str, Any]] = Field(default_factory=list[dict[str, Any]])
    sources: list[dict[str, Any]] = Field(default_factory=list[dict[str, Any]])
    tools: list[LettaTool] = Field(default_factory=list[LettaTool])
    mcp_servers: list[LettaMcpServer] = Field(default_factory=list[LettaMcpServer])
    passages: list[LettaPassage] = Field(default_factory=list[LettaPassage])
    metadata: dict[str, Any] | None = None
    created_at: StrictStr | None = None
