"""The ``satchel serve`` command: its options, checked once, turned into one
:class:`~satchel.serve.ServeOptions` and run by :func:`satchel.serve.run_serve` (what is
served and how it runs lives there; this module is only the command line, and the
options' declarations are :mod:`satchel.cli._serve_flags`'s)."""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from dataclasses import replace
from functools import partial
from pathlib import Path

import anyio
import typer

from satchel._errors import InvalidInputError
from satchel.cli._agents import TemplateOption, resolve_template
from satchel.cli._builtin_options import NoMemoryOption, ReplaceOption, check_replace
from satchel.cli._channels import ChannelsOption, channels_config
from satchel.cli._common import option_errors
from satchel.cli._embed_options import EmbedBaseUrlOption, EmbedderOption, resolve_embedder
from satchel.cli._listen import check_listen, check_token, is_loopback, typed_on_command_line
from satchel.cli._mirror import print_report
from satchel.cli._serve_args import attach_headers, parse_http, parse_mount
from satchel.cli._serve_flags import (
    AllowUnauthenticatedOption,
    ApproveOption,
    ChainsOption,
    CompatOption,
    ConsentWaitOption,
    ConsoleOption,
    GlobalLabelOption,
    HttpOption,
    LearnOption,
    LogLevelOption,
    MirrorOption,
    MountHeaderOption,
    PersonOption,
    PinOption,
    ProjectRootOption,
    ServeAgentOption,
    ServeDbOption,
    ServeLazyOption,
    ServeMountOption,
    ServeToolsOption,
    TokenOption,
)
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
from satchel.serve import AUTO_AGENT, ServeOptions, run_serve

__all__ = ["fallback_root", "serve"]

logger = logging.getLogger("satchel.cli.serve")


def serve(
    ctx: typer.Context,
    http: HttpOption = None,
    token: TokenOption = None,
    allow_unauthenticated: AllowUnauthenticatedOption = False,
    console: ConsoleOption = True,
    tools: ServeToolsOption = None,
    chains: ChainsOption = None,
    lazy: ServeLazyOption = False,
    pin: PinOption = None,
    learn: LearnOption = True,
    mount: ServeMountOption = None,
    mount_header: MountHeaderOption = None,
    agent: ServeAgentOption = "default",
    global_agent: PersonOption = "default",
    global_label: GlobalLabelOption = None,
    project_root: ProjectRootOption = None,
    db: ServeDbOption = None,
    embedder: EmbedderOption = None,
    embed_base_url: EmbedBaseUrlOption = None,
    template: TemplateOption = None,
    mirror: MirrorOption = None,
    toolkit: ToolkitOption = None,
    calendar: CalendarOption = None,
    timezone: ZoneOption = None,
    toolkit_file: ToolkitConfigOption = None,
    channels: ChannelsOption = None,
    consent_wait: ConsentWaitOption = 5.0,
    approve: ApproveOption = ApprovalPolicy.DESTRUCTIVE,
    compat: CompatOption = None,
    replace: ReplaceOption = None,
    no_memory: NoMemoryOption = False,
    log_level: LogLevelOption = None,
) -> None:
    """Run an MCP server: stdio by default, or streamable HTTP with --http.

    Logs go to stderr only; over stdio, stdout carries nothing but the protocol.
    """
    _set_log_level(log_level)
    if pin and not lazy:
        raise typer.BadParameter("only makes sense with --lazy.", param_hint="'--pin'")
    _check_agents(agent, global_agent, global_label or (), project_root)
    options = ServeOptions(
        tools=tuple(tools or ()),
        chains=tuple(chains or ()),
        lazy=lazy,
        pins=tuple(pin or ()),
        agent=agent,
        db=db,
        embedder=resolve_embedder(embedder, embed_base_url),
        replace=check_replace(replace or (), no_memory=no_memory, tools=tools or ()),
        mounts=attach_headers(
            [parse_mount(m) for m in mount or ()], mount_header or (), os.environ
        ),
        consent_wait=consent_wait,
        approve=approve,
        compat=None if compat is None else compat.value,
        template=resolve_template(template),
        toolkit=toolkit_config(toolkit, calendar, timezone, toolkit_file),
        global_agent=global_agent,
        global_labels=tuple(global_label) if global_label else DEFAULT_GLOBAL_LABELS,
        project_root=fallback_root(project_root),
        mirror=mirror,
        memory=not no_memory,
        channels=channels_config(channels),
        learn=learn,
        console=console,
        on_mirror_report=print_report,
    )
    resolve_db_location(db, must_exist=False)  # an unsupported URL is a usage error now
    options = _with_address(ctx, options, http, token, allow_unauthenticated=allow_unauthenticated)
    try:
        with option_errors():
            anyio.run(run_serve, options)
    except KeyboardInterrupt:
        return


def _set_log_level(log_level: str | None) -> None:
    """``serve --log-level``: how much the root logger lets through.

    Raises:
        typer.BadParameter: not one of debug, info, warning, error.
    """
    if log_level is None:
        return
    level = log_level.upper()
    if level not in ("DEBUG", "INFO", "WARNING", "ERROR"):
        raise typer.BadParameter(
            f"{log_level!r} is not one of debug, info, warning, error.",
            param_hint="'--log-level'",
        )
    logging.getLogger().setLevel(level)


def _check_agents(
    agent: str, person: str, global_labels: Sequence[str], project_root: str | None
) -> None:
    """``--agent``, ``--person``, ``--global`` and ``--project-root`` agree.

    Raises:
        typer.BadParameter: an empty agent, ``--person auto``, ``--global`` or
            ``--project-root`` without ``--agent auto``, or a bad ``--global`` label.
    """
    for value, hint in ((agent, "'--agent'"), (person, "'--person'")):
        if not value.strip():
            raise typer.BadParameter("must not be empty.", param_hint=hint)
    if person == AUTO_AGENT:
        raise typer.BadParameter("cannot be 'auto'.", param_hint="'--person'")
    if global_labels and agent != AUTO_AGENT:
        raise typer.BadParameter("only makes sense with --agent auto.", param_hint="'--global'")
    if project_root is not None and agent != AUTO_AGENT:
        raise typer.BadParameter(
            "only makes sense with --agent auto.", param_hint="'--project-root'"
        )
    for label in global_labels:
        try:
            validate_label(label)
        except InvalidInputError as exc:
            raise typer.BadParameter(exc.message, param_hint="'--global'") from None


def _with_address(
    ctx: typer.Context,
    options: ServeOptions,
    http: str | None,
    token: str | None,
    *,
    allow_unauthenticated: bool,
) -> ServeOptions:
    """``options`` with the checked ``--http`` address and ``--token``, and the lines
    the server prints to the person; warns of ``--approve none`` and of an open
    address without a token.

    Raises:
        typer.BadParameter: a bad address or token, or a port that cannot be listened on.
    """
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
    if options.approve is ApprovalPolicy.NONE:
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
    return replace(options, http=address, token=token, on_ready=partial(_ready, options.person))


def _ready(agent: str, url: str | None) -> None:
    """What ``serve`` prints once ready: the URL over HTTP; over stdio, when a person
    started it on a terminal, that it waits for a client."""
    if url is not None:
        typer.echo(f"satchel: serving MCP at {url}", err=True)
    elif os.isatty(0):  # a person started it by hand, not a client on a pipe
        typer.echo(
            f"satchel: serving the memory of agent {agent!r} over MCP; waiting for an MCP "
            "client on stdin (Ctrl-C to stop). MCP clients start this command themselves: "
            "see `satchel install --help` to add it to one.",
            err=True,
        )


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
