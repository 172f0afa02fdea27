"""What an imported agent keeps of its agent file beyond blocks and messages: its
profile.

The profile is one read-only archival block per agent, labelled :data:`PROFILE_LABEL`,
with an empty value (so search never finds it) and everything in its metadata: the
system prompt (the agent's instructions), its tool rules and tools in Letta's form, the
message that opened its history, and the agent's settings satchel has no place for
(model, embedding, ...). The first agent of a file also keeps the file's own lists
(groups, sources, files, MCP servers) and the names of the other agents imported with
it. :func:`~satchel.agentfile.export_agent_file` reads it back.
"""

from __future__ import annotations

import logging
from collections.abc import Collection
from typing import Any, Final

from pydantic import BaseModel, ConfigDict, Field

from satchel._errors import NotFoundError
from satchel.agentfile._rules import satchel_rules
from satchel.agentfile._schema import LettaToolRule
from satchel.memory import MemoryStore
from satchel.rules import AllowedChildren, Conditional, ToolRule

__all__ = ["PROFILE_FORMAT", "PROFILE_LABEL", "PROFILE_TAG", "AgentProfile", "load_profile"]

logger = logging.getLogger("satchel.agentfile")

PROFILE_LABEL: Final = "agent-file:profile"
"""The label of the block an imported agent's profile is kept in (reserved: an agent
file with a block of this label is refused)."""

PROFILE_TAG: Final = "agent-file"
"""The tag of the profile block."""

PROFILE_FORMAT: Final = "letta-agent-file/1"
"""Written into every profile, so a later satchel can read an older one."""


class AgentProfile(BaseModel):
    """An imported agent's profile (see the module docstring).

    Attributes:
        format: :data:`PROFILE_FORMAT`.
        letta_id: The agent's id in the file (``agent-0``).
        name: The agent's name in the file.
        system: Its system prompt: the agent's instructions.
        tool_rules: Its tool rules, in Letta's form (:attr:`rules` as satchel's).
        tools: Its tools, in Letta's form: JSON schema, type, source code (never run).
        agent: The agent's other fields, as the file had them.
        opening: The system message that opened its history, if any (Letta's rendered
            context; not a turn of the conversation).
        block_order: Its blocks' labels in the file's order.
        companions: The satchel names of the other agents imported from the same
            file (first agent only); exported with it.
        file: The file's own fields satchel has no place for (first agent only):
            groups, files, sources, MCP servers, metadata.
    """

    model_config = ConfigDict(extra="allow", frozen=True)

    format: str = PROFILE_FORMAT
    letta_id: str
    name: str
    system: str = ""
    tool_rules: list[dict[str, Any]] = Field(default_factory=list[dict[str, Any]])
    tools: list[dict[str, Any]] = Field(default_factory=list[dict[str, Any]])
    agent: dict[str, Any] = Field(default_factory=dict[str, Any])
    opening: dict[str, Any] | None = None
    block_order: list[str] = Field(default_factory=list[str])
    companions: list[str] = Field(default_factory=list[str])
    file: dict[str, Any] = Field(default_factory=dict[str, Any])

    @property
    def instructions(self) -> str:
        """The system prompt, for :class:`~satchel.agent.Agent`'s ``instructions``."""
        return self.system

    @property
    def rules(self) -> list[ToolRule]:
        """The tool rules satchel runs (Letta types without a satchel rule left out)."""
        parsed = [LettaToolRule.model_validate(r, strict=False) for r in self.tool_rules]
        return satchel_rules(parsed, f"agent {self.name!r}")

    def rules_for(self, tools: Collection[str]) -> list[ToolRule]:
        """The :attr:`rules` whose every tool is among ``tools`` (the agent's tools):
        a rule about a tool the agent lacks would hold its turn open
        (:class:`~satchel.rules.RequiredBeforeExit`) or offer it nothing
        (:class:`~satchel.rules.Init`), so it is left out and logged."""
        have = set(tools)
        kept: list[ToolRule] = []
        for rule in self.rules:
            missing = sorted(_named_tools(rule) - have)
            if missing:
                logger.info(
                    "agent %r: rule %r left out, no tool %s", self.name, rule, ", ".join(missing)
                )
            else:
                kept.append(rule)
        return kept

    @property
    def tool_schemas(self) -> list[dict[str, Any]]:
        """Each tool's JSON schema (``name``, ``description``, ``parameters``)."""
        return [
            dict(t["json_schema"]) for t in self.tools if isinstance(t.get("json_schema"), dict)
        ]


def _named_tools(rule: ToolRule) -> set[str]:
    """Every tool ``rule`` names."""
    names: set[str] = set()
    for attribute in ("tool", "default"):
        value = getattr(rule, attribute, None)
        if isinstance(value, str):
            names.add(value)
    if isinstance(rule, AllowedChildren):
        names.update(rule.children)
    if isinstance(rule, Conditional):
        names.update(rule.choices.values())
    return names


async def load_profile(store: MemoryStore, agent: str) -> AgentProfile | None:
    """The profile of ``agent``, or ``None`` when it was not imported from an agent
    file.

    Example:
        >>> profile = await load_profile(store, "memgpt_agent")  # doctest: +SKIP
        >>> Agent("memgpt_agent", model, memory=store, instructions=profile.instructions,
        ...       rules=profile.rules)  # doctest: +SKIP
    """
    try:
        block = await store.get_block(agent, PROFILE_LABEL)
    except NotFoundError:
        return None
    if block.agent != agent:  # a shared block of another agent's
        return None
    return AgentProfile.model_validate(dict(block.metadata))
