"""The options of ``satchel serve`` as typer declarations, one alias each, so the
command's signature stays a list of names (:mod:`satchel.cli._serve_command`)."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from satchel.consent import ApprovalPolicy

__all__ = [
    "AllowUnauthenticatedOption",
    "ApproveOption",
    "ChainsOption",
    "CompatChoice",
    "CompatOption",
    "ConsentWaitOption",
    "ConsoleOption",
    "GlobalLabelOption",
    "HttpOption",
    "LearnOption",
    "LogLevelOption",
    "MirrorOption",
    "MountHeaderOption",
    "PersonOption",
    "PinOption",
    "ProjectRootOption",
    "ServeAgentOption",
    "ServeDbOption",
    "ServeLazyOption",
    "ServeMountOption",
    "ServeToolsOption",
    "TokenOption",
]

HttpOption = Annotated[
    str | None,
    typer.Option(
        "--http",
        metavar="HOST:PORT",
        help="Serve streamable HTTP on HOST:PORT (port 0: any free port) instead of stdio.",
    ),
]

TokenOption = Annotated[
    str | None,
    typer.Option(
        "--token",
        envvar="SATCHEL_TOKEN",
        help="With --http: the bearer token every request must carry (else HTTP 401); "
        "an empty one is refused.",
    ),
]

AllowUnauthenticatedOption = Annotated[
    bool,
    typer.Option(
        "--allow-unauthenticated",
        help="With --http on an address other than loopback: serve without --token "
        "(anyone who can reach it can call the tools).",
    ),
]

ConsoleOption = Annotated[
    bool,
    typer.Option(
        "--console/--no-console",
        help="With --http: also serve the memory console at /console (same token; "
        "browsers log in with it).",
    ),
]

ServeToolsOption = Annotated[
    list[str] | None,
    typer.Option(
        "--tools",
        "-t",
        metavar="MODULE:ATTR",
        help="A ToolRegistry to serve (or a function returning one); repeatable.",
    ),
]

ChainsOption = Annotated[
    list[Path] | None,
    typer.Option(
        "--chains",
        metavar="FILE",
        help="Chains of the served tools from a TOML, YAML or JSON file; repeatable.",
    ),
]

ServeLazyOption = Annotated[
    bool,
    typer.Option("--lazy", help="Serve only the three meta-tools (plus --pin tools)."),
]

PinOption = Annotated[
    list[str] | None,
    typer.Option("--pin", metavar="NAME", help="With --lazy: also serve this tool directly."),
]

LearnOption = Annotated[
    bool,
    typer.Option(
        "--learn/--no-learn",
        envvar="SATCHEL_LEARN",
        help="With --lazy: learn which tool serves which request (kept in --db).",
    ),
]

ServeMountOption = Annotated[
    list[str] | None,
    typer.Option(
        "--mount",
        metavar="PREFIX=COMMAND|PREFIX=URL",
        help="Bring another MCP server's tools in as PREFIX_name; repeatable.",
    ),
]

MountHeaderOption = Annotated[
    list[str] | None,
    typer.Option(
        "--mount-header",
        metavar="PREFIX:NAME=VALUE",
        help="Send an HTTP header to the URL mounted as PREFIX (${VAR} in VALUE is "
        "read from the environment); repeatable.",
    ),
]

ServeAgentOption = Annotated[
    str,
    typer.Option(
        "--agent",
        envvar="SATCHEL_AGENT",
        help="The agent whose memory is used; 'auto': the project the client has open "
        "(from its workspace roots), with --person's own blocks shared in.",
    ),
]

PersonOption = Annotated[
    str,
    typer.Option(
        "--person",
        "--global-agent",
        metavar="NAME",
        envvar=["SATCHEL_PERSON", "SATCHEL_GLOBAL_AGENT"],
        help="With --agent auto: the person's own agent (what `--agent NAME` names "
        "elsewhere), used without roots; its --global blocks are shared into every "
        "project.",
    ),
]

GlobalLabelOption = Annotated[
    list[str] | None,
    typer.Option(
        "--global",
        metavar="LABEL",
        help="With --agent auto: a block of --person shared into every project "
        "(default: human and persona; blocks tagged 'global' always are); repeatable.",
    ),
]

ProjectRootOption = Annotated[
    str | None,
    typer.Option(
        "--project-root",
        metavar="DIR",
        envvar="SATCHEL_PROJECT_ROOT",
        help="With --agent auto: the project to use when the client gives no workspace "
        "roots (an editor's ${workspaceFolder}; a relative DIR is from the working "
        "directory).",
    ),
]

ServeDbOption = Annotated[
    str | None,
    typer.Option(
        "--db",
        envvar="SATCHEL_DB",
        help="The memory database file (default: the data dir); also holds approvals.",
    ),
]

MirrorOption = Annotated[
    Path | None,
    typer.Option(
        "--mirror",
        metavar="DIR",
        file_okay=False,
        help="Keep DIR's Markdown files in step with memory while serving: changes are "
        "written out, edits to the files read in (with --agent auto: a sub-folder per "
        "project).",
    ),
]

ConsentWaitOption = Annotated[
    float,
    typer.Option(
        "--consent-wait",
        min=0,
        metavar="SECONDS",
        help="How long a memory write needing consent waits for `satchel approvals` "
        "before it is refused (the request stays pending for a later try).",
    ),
]

ApproveOption = Annotated[
    ApprovalPolicy,
    typer.Option(
        "--approve",
        envvar="SATCHEL_APPROVE",
        case_sensitive=False,
        help="Which calls of tools outside memory (--tools, --mount, invoke_tool) wait "
        "for a human: 'destructive' ones, every call but read-only ones ('writes'), or "
        "'none' (for trusted set-ups only: everything runs at once). Memory writes "
        "follow each block's permission whatever this says.",
    ),
]

LogLevelOption = Annotated[
    str | None,
    typer.Option(
        "--log-level",
        help="How much to log to stderr: debug, info, warning or error.",
    ),
]


class CompatChoice(StrEnum):
    """The compatibility profiles ``--compat`` offers (:data:`satchel.compat.CompatProfile`)."""

    AGENTICPAL = "agenticpal"
    PATTERN = "pattern"


CompatOption = Annotated[
    CompatChoice | None,
    typer.Option(
        "--compat",
        envvar="SATCHEL_COMPAT",
        case_sensitive=False,
        help="Answer in a seed's result shapes, for prompts and clients written for it: "
        "'agenticpal' ({success, ...} envelopes, pending_confirmation with tool_name and "
        "parameters) or 'pattern' (send_message answers {success, message}).",
    ),
]
