"""Letta Agent File (``.af``) import and export.

* :func:`import_agent_file` reads a file (checked in full first: a refused file is one
  line saying why, and nothing is written) and creates the agent in a memory store:
  its blocks (label, value, description, limit as ``char_limit``, ``read_only`` as a
  read-only permission), archival passages, and messages as its conversation. The
  system prompt, tool rules, tools and MCP servers, and whatever else satchel has no
  place for, are kept in the agent's profile (:func:`load_profile`), so
  :func:`export_agent_file` gives them back in Letta's current shape.
* Code in a file is never run. :class:`AgentFileReport` lists each tool with what to do
  about it (supply an equivalent with ``--tools``) and each MCP server as a ``--mount``.
* :attr:`AgentProfile.rules` are the file's tool rules as :mod:`satchel.rules`, and
  :attr:`AgentProfile.instructions` its system prompt, ready for
  :class:`~satchel.agent.Agent`.

Example:
    >>> from satchel.agentfile import import_agent_file, load_profile
    >>> report = await import_agent_file(store, "memgpt_agent.af")  # doctest: +SKIP
    >>> profile = await load_profile(store, report.agents[0])  # doctest: +SKIP
    >>> agent = Agent(report.agents[0], model, memory=store,
    ...               instructions=profile.instructions, rules=profile.rules)  # doctest: +SKIP
"""

from satchel.agentfile._export import export_agent_file, export_document
from satchel.agentfile._import import (
    IMPORT_TEMPLATE,
    check_document,
    import_agent_file,
    import_document,
)
from satchel.agentfile._profile import PROFILE_LABEL, AgentProfile, load_profile
from satchel.agentfile._read import (
    MAX_FILE_BYTES,
    MAX_TEXT_CHARS,
    parse_agent_file,
    read_agent_file,
)
from satchel.agentfile._report import AgentFileReport, ServerSuggestion, ToolReport
from satchel.agentfile._rules import letta_rule, satchel_rule
from satchel.agentfile._schema import (
    LettaAgent,
    LettaAgentFile,
    LettaBlock,
    LettaMcpServer,
    LettaMessage,
    LettaPassage,
    LettaTool,
    LettaToolRule,
)

__all__ = [
    "IMPORT_TEMPLATE",
    "MAX_FILE_BYTES",
    "MAX_TEXT_CHARS",
    "PROFILE_LABEL",
    "AgentFileReport",
    "AgentProfile",
    "LettaAgent",
    "LettaAgentFile",
    "LettaBlock",
    "LettaMcpServer",
    "LettaMessage",
    "LettaPassage",
    "LettaTool",
    "LettaToolRule",
    "ServerSuggestion",
    "ToolReport",
    "check_document",
    "export_agent_file",
    "export_document",
    "import_agent_file",
    "import_document",
    "letta_rule",
    "load_profile",
    "parse_agent_file",
    "read_agent_file",
    "satchel_rule",
]
