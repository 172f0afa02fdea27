"""What an import did and what it leaves to the person: tools to supply, servers to
mount. Plain data, printed by ``satchel agent import`` and returned by
:func:`~satchel.agentfile.import_agent_file`."""

from __future__ import annotations

import re
import shlex
from typing import Any, Final, Literal, cast

from pydantic import BaseModel, ConfigDict, Field

from satchel._errors import InvalidInputError
from satchel.agentfile._schema import LettaMcpServer, LettaTool

__all__ = ["AgentFileReport", "ServerSuggestion", "ToolReport", "server_suggestion", "tool_report"]

_BUILTINS: Final[dict[str, str]] = {
    "send_message": "satchel's send_message",
    "conversation_search": "satchel's search (domain conversations)",
    "archival_memory_search": "satchel's search (domain archival_memory)",
    "archival_memory_insert": "satchel's recall (insert)",
    "core_memory_append": "satchel's context (append)",
    "core_memory_replace": "satchel's context (replace)",
    "memory_insert": "satchel's context (append)",
    "memory_replace": "satchel's context (replace)",
    "memory_rethink": "satchel's context (set)",
    "memory": "satchel's context",
    "memory_apply_patch": "satchel's context (replace)",
    "memory_finish_edits": "ending the turn (a Terminal rule)",
}


class ToolReport(BaseModel):
    """One tool of the file, listed with its schema; its code is never run.

    Attributes:
        name: The tool's name.
        tool_type: Letta's type (``custom``, ``letta_core``, ``letta_builtin``, ...).
        source_type: The language of its source (``python``, ``json``), if any.
        source_lines: Lines of source code in the file (not run).
        description: Its description.
        parameters: Its JSON schema's ``parameters``.
        advice: What covers it in satchel, or how to supply an equivalent.
    """

    model_config = ConfigDict(frozen=True)

    name: str
    tool_type: str | None = None
    source_type: str | None = None
    source_lines: int = 0
    description: str = ""
    parameters: dict[str, Any] = Field(default_factory=dict[str, Any])
    advice: str


class ServerSuggestion(BaseModel):
    """An MCP server of the file, as a ``--mount`` option to bring its tools back.

    Attributes:
        name: The server's name in the file.
        server_type: ``sse``, ``stdio`` or ``streamable_http``.
        mount: The ``--mount`` value (``PREFIX=URL`` or ``PREFIX=COMMAND ARGS``), or
            ``None`` when the file says too little (credentials are never in a file).
    """

    model_config = ConfigDict(frozen=True)

    name: str
    server_type: str
    mount: str | None


class AgentFileReport(BaseModel):
    """What :func:`~satchel.agentfile.import_agent_file` wrote and found.

    Attributes:
        agents: The satchel agents created, the first being the file's first agent.
        blocks: Memory blocks written.
        passages: Archival passages written.
        messages: Conversation messages written.
        rules: Tool rules satchel runs.
        kept_rules: Tool rules of a Letta type satchel has no rule for (kept for export).
        tools: The tools, each with what to do about it.
        servers: The MCP servers, as ``--mount`` suggestions.
        kept: What the file holds that satchel keeps only for export (``groups``,
            ``sources``, ``files``), with counts.
    """

    model_config = ConfigDict(frozen=True)

    agents: list[str]
    blocks: int = 0
    passages: int = 0
    messages: int = 0
    rules: int = 0
    kept_rules: int = 0
    tools: list[ToolReport] = Field(default_factory=list[ToolReport])
    servers: list[ServerSuggestion] = Field(default_factory=list[ServerSuggestion])
    kept: dict[str, int] = Field(default_factory=dict[str, int])


_TOOL_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


def tool_name(tool: LettaTool) -> str:
    """The tool's name (its own, else its schema's).

    Raises:
        InvalidInputError: It has none, or one satchel's tool names do not allow.
    """
    name: object = tool.name
    if name is None and tool.json_schema is not None:
        name = tool.json_schema.get("name")
    if not isinstance(name, str) or not _TOOL_NAME.match(name):
        raise InvalidInputError(
            f"tool {tool.id!r} has the name {str(name)[:80]!r}: a tool name is 1-64 letters, "
            "digits, '_' or '-'"
        )
    return name


def tool_report(tool: LettaTool) -> ToolReport:
    """What :class:`ToolReport` says of ``tool``."""
    name = tool_name(tool)
    schema = tool.json_schema or {}
    raw_parameters: object = schema.get("parameters")
    parameters: dict[str, Any] = (
        dict(cast(dict[str, Any], raw_parameters)) if isinstance(raw_parameters, dict) else {}
    )
    lines = len(tool.source_code.splitlines()) if tool.source_code else 0
    kind = tool.tool_type or "custom"
    if name in _BUILTINS and kind.startswith("letta"):
        advice = f"Letta built-in: {_BUILTINS[name]} does this."
    elif kind.startswith("letta_files"):
        advice = "Letta file tool: satchel's sources give the same (open, grep, search files)."
    elif kind.startswith("letta"):
        advice = "Letta built-in with no satchel equivalent: mount an MCP server that has one."
    elif lines:
        advice = (
            f"{lines} lines of {tool.source_type or 'source'} not run: supply an equivalent "
            f"tool named {name!r} with --tools MODULE:ATTR (a ToolRegistry)."
        )
    else:
        advice = f"No code in the file: supply a tool named {name!r} with --tools MODULE:ATTR."
    description = tool.description
    if description is None and isinstance(schema.get("description"), str):
        description = str(schema["description"])
    return ToolReport(
        name=name,
        tool_type=tool.tool_type,
        source_type=tool.source_type,
        source_lines=lines,
        description=(description or "")[:2000],
        parameters=parameters,
        advice=advice,
    )


def server_suggestion(server: LettaMcpServer) -> ServerSuggestion:
    """The ``--mount`` that brings ``server``'s tools in (prefix: its name, with what a
    tool name cannot hold turned to ``_``).

    Raises:
        InvalidInputError: Its ``stdio_config`` is of the wrong shape.
    """
    prefix = re.sub(r"[^A-Za-z0-9_]", "_", server.server_name)[:32].strip("_") or "server"
    mount: str | None = None
    kind: Literal["url", "stdio", "none"] = "none"
    if server.server_url:
        kind = "url"
    elif server.stdio_config is not None:
        kind = "stdio"
    if kind == "url" and server.server_url is not None:
        mount = f"{prefix}={server.server_url}"
    elif kind == "stdio" and server.stdio_config is not None:
        command: object = server.stdio_config.get("command")
        args: object = server.stdio_config.get("args") or []
        if not isinstance(command, str) or not isinstance(args, list):
            raise InvalidInputError(
                f"MCP server {server.server_name[:60]!r}: stdio_config needs a 'command' "
                "string and an 'args' list"
            )
        words: list[str] = [command]
        for arg in args:  # pyright: ignore[reportUnknownVariableType]
            if not isinstance(arg, str):
                raise InvalidInputError(
                    f"MCP server {server.server_name[:60]!r}: its args must be strings"
                )
            words.append(arg)
        mount = f"{prefix}={shlex.join(words)}"
    return ServerSuggestion(name=server.server_name, server_type=server.server_type, mount=mount)
