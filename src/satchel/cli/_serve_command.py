"""The ``satchel serve`` command: its options, checked once, turned into a
:class:`~satchel.cli._serve.ServeOptions` and run by :mod:`satchel.cli._serve` (what is
served and how it runs lives there; this module is only the command line)."""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Annotated

import anyio
import typer

from satchel._errors import InvalidInputError
from satchel.cli._agents import TemplateOption, resolve_template
from satchel.cli._builtin_options import NoMemoryOption, ReplaceOption, check_replace
from satchel.cli._channels import ChannelsOption, channels_config
from satchel.cli._listen import check_listen, check_token, is_loopback, typed_on_command_line
from satchel.cli._serve import AUTO_AGENT, ServeOptions, run_serve
from satchel.cli._serve_args import attach_headers, parse_http, parse_mount
from satchel.cli._serve_toolkit import (
    CalendarOption,
    ToolkitConfigOption,
    ToolkitOption,
    ZoneOption,
    toolkit_config,
)
from satchel.cli._store import resolve_db_location
from satchel.consent import ApprovalPolicy
from satchel.memory import DEFAULT_GLOBAL_LABELS
from satchel.memory._models import validate_label

__all__ = ["fallback_root", "serve"]

logger = logging.getLogger("satchel.cli.serve")


def serve(
    ctx: typer.Context,
    http: Annotated[
        str | None,
        typer.Option(
            "--http",
            metavar="HOST:PORT",
            help="Serve streamable HTTP on HOST:PORT (port 0: any free port) instead of stdio.",
        ),
    ] = None,
    token: Annotated[
        str | None,
        typer.Option(
            "--token",
            envvar="SATCHEL_TOKEN",
            help="With --http: the bearer token every request must carry (else HTTP 401); "
            "an empty one is refused.",
        ),
    ] = None,
    allow_unauthenticated: Annotated[
        bool,
        typer.Option(
            "--allow-unauthenticated",
            help="With --http on an address other than loopback: serve without --token "
            "(anyone who can reach it can call the tools).",
        ),
    ] = False,
    console: Annotated[
        bool,
        typer.Option(
            "--console/--no-console",
            help="With --http: also serve the memory console at /console (same token; "
            "browsers log in with it).",
        ),
    ] = True,
    tools: Annotated[
        list[str] | None,
        typer.Option(
            "--tools",
            "-t",
            metavar="MODULE:ATTR",
            help="A ToolRegistry to serve (or a function returning one); repeatable.",
        ),
    ] = None,
    chains: Annotated[
        list[Path] | None,
        typer.Option(
            "--chains",
            metavar="FILE",
            help="Chains of the served tools from a TOML, YAML or JSON file; repeatable.",
        ),
    ] = None,
    lazy: Annotated[
        bool,
        typer.Option("--lazy", help="Serve only the three meta-tools (plus --pin tools)."),
    ] = False,
    pin: Annotated[
        list[str] | None,
        typer.Option("--pin", metavar="NAME", help="With --lazy: also serve this tool directly."),
    ] = None,
    learn: Annotated[
        bool,
        typer.Option(
            "--learn/--no-learn",
            envvar="SATCHEL_LEARN",
            help="With --lazy: learn which tool serves which request (kept in --db).",
        ),
    ] = True,
    mount: Annotated[
        list[str] | None,
        typer.Option(
            "--mount",
            metavar="PREFIX=COMMAND|PREFIX=URL",
            help="Bring another MCP server's tools in as PREFIX_name; repeatable.",
        ),
    ] = None,
    mount_header: Annotated[
        list[str] | None,
        typer.Option(
            "--mount-header",
            metavar="PREFIX:NAME=VALUE",
            help="Send an HTTP header to the URL mounted as PREFIX (${VAR} in VALUE is "
            "read from the environment); repeatable.",
        ),
    ] = None,
    agent: Annotated[
        str,
        typer.Option(
            "--agent",
            envvar="SATCHEL_AGENT",
            help="The agent whose memory is used; 'auto': the project the client has open "
            "(from its workspace roots), with --person's own blocks shared in.",
        ),
    ] = "default",
    global_agent: Annotated[
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
    ] = "default",
    global_label: Annotated[
        list[str] | None,
        typer.Option(
            "--global",
            metavar="LABEL",
            help="With --agent auto: a block of --person shared into every project "
            "(default: human and persona; blocks tagged 'global' always are); repeatable.",
        ),
    ] = None,
    project_root: Annotated[
        str | None,
        typer.Option(
            "--project-root",
            metavar="DIR",
            envvar="SATCHEL_PROJECT_ROOT",
            help="With --agent auto: the project to use when the client gives no workspace "
            "roots (an editor's ${workspaceFolder}; a relative DIR is from the working "
            "directory).",
        ),
    ] = None,
    db: Annotated[
        str | None,
        typer.Option(
            "--db",
            envvar="SATCHEL_DB",
            help="The memory database file (default: the data dir); also holds approvals.",
        ),
    ] = None,
    template: TemplateOption = None,
    mirror: Annotated[
        Path | None,
        typer.Option(
            "--mirror",
            metavar="DIR",
            file_okay=False,
            help="Keep DIR's Markdown files in step with memory while serving: changes are "
            "written out, edits to the files read in (with --agent auto: a sub-folder per "
            "project).",
        ),
    ] = None,
    toolkit: ToolkitOption = None,
    calendar: CalendarOption = None,
    timezone: ZoneOption = None,
    toolkit_file: ToolkitConfigOption = None,
    channels: ChannelsOption = None,
    consent_wait: Annotated[
        float,
        typer.Option(
            "--consent-wait",
            min=0,
            metavar="SECONDS",
            help="How long a memory write needing consent waits for `satchel approvals` "
            "before it is refused (the request stays pending for a later try).",
        ),
    ] = 5.0,
    approve: Annotated[
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
    ] = ApprovalPolicy.DESTRUCTIVE,
    replace: ReplaceOption = None,
    no_memory: NoMemoryOption = False,
    log_level: Annotated[
        str | None,
        typer.Option(
            "--log-level",
            help="How much to log to stderr: debug, info, warning or error.",
        ),
    ] = None,
) -> None:
    """Run an MCP server: stdio by default, or streamable HTTP with --http.

    Logs go to stderr only; over stdio, stdout carries nothing but the protocol.
    """
    if log_level is not None:
        level = log_level.upper()
        if level not in ("DEBUG", "INFO", "WARNING", "ERROR"):
            raise typer.BadParameter(
                f"{log_level!r} is not one of debug, info, warning, error.",
                param_hint="'--log-level'",
            )
        logging.getLogger().setLevel(level)
    if pin and not lazy:
        raise typer.BadParameter("only makes sense with --lazy.", param_hint="'--pin'")
    for value, hint in ((agent, "'--agent'"), (global_agent, "'--person'")):
        if not value.strip():
            raise typer.BadParameter("must not be empty.", param_hint=hint)
    if global_agent == AUTO_AGENT:
        raise typer.BadParameter("cannot be 'auto'.", param_hint="'--person'")
    if global_label and agent != AUTO_AGENT:
        raise typer.BadParameter("only makes sense with --agent auto.", param_hint="'--global'")
    if project_root is not None and agent != AUTO_AGENT:
        raise typer.BadParameter(
            "only makes sense with --agent auto.", param_hint="'--project-root'"
        )
    for label in global_label or ():
        try:
            validate_label(label)
        except InvalidInputError as exc:
            raise typer.BadParameter(exc.message, param_hint="'--global'") from None
    replaced = check_replace(replace or (), no_memory=no_memory, tools=tools or ())
    options = ServeOptions(
        tools=tuple(tools or ()),
        chains=tuple(chains or ()),
        lazy=lazy,
        pins=tuple(pin or ()),
        agent=agent,
        db=db,
        mounts=attach_headers(
            [parse_mount(m) for m in mount or ()], mount_header or (), os.environ
        ),
        consent_wait=consent_wait,
        approve=approve,
        template=resolve_template(template),
        toolkit=toolkit_config(toolkit, calendar, timezone, toolkit_file),
        global_agent=global_agent,
        global_labels=tuple(global_label) if global_label else DEFAULT_GLOBAL_LABELS,
        project_root=fallback_root(project_root),
        mirror=mirror,
        replace=replaced,
        memory=not no_memory,
        channels=channels_config(channels),
        learn=learn,
        console=console,
    )
    resolve_db_location(db, must_exist=False)  # an unsupported URL is a usage error now
    address = parse_http(http) if http is not None else None
    loopback = address is None or is_loopback(address[0])
    token = check_token(
        token,
        http=address is not None,
        from_command_line=typed_on_command_line(ctx, "token"),
        environ=os.environ,
        allow_unauthenticated=allow_unauthenticated,
        loopback=loopback,
    )
    if address is not None:
        check_listen(*address)
    if approve is ApprovalPolicy.NONE:
        typer.echo(
            "satchel: warning: --approve none: every tool outside memory runs without a "
            "human's approval.",
            err=True,
        )
    if address is not None and token is None and not loopback:
        typer.echo(
            f"satchel: warning: serving on {address[0]} without --token; anyone who can "
            "reach this address can call the tools.",
            err=True,
        )
    try:
        anyio.run(run_serve, options, address, token)
    except KeyboardInterrupt:
        return


def fallback_root(value: str | None) -> str | None:
    """``--project-root`` as :class:`~satchel.mcp.ProjectAgents` takes it: a relative
    path made absolute against the working directory. A value the client left
    unexpanded (``${workspaceFolder}`` when no folder is open), the home folder and the
    top folder are no project: the person's own memory is used then.

    Raises:
        typer.BadParameter: ``value`` is empty.
    """
    if value is None:
        return None
    text = value.strip()
    if not text:
        raise typer.BadParameter("must not be empty.", param_hint="'--project-root'")
    if "${" in text:
        logger.warning(
            "--project-root %r was not expanded by the client (no folder open?): clients "
            "without roots get the person's own memory",
            text,
        )
        return None
    if "://" in text:
        return text
    path = Path(text).expanduser().absolute()
    if path in (Path.home(), Path(path.anchor)):
        logger.info(
            "--project-root %s is the home or top folder, not a project: clients without "
            "roots get the person's own memory",
            path,
        )
        return None
    return str(path)
