"""``satchel install CLIENT``: add ``satchel serve`` to an MCP client's configuration
(or, for ``systemd``, a user unit that keeps ``satchel up`` running: see
:mod:`satchel.cli._install_systemd`).

Each client keeps its stdio servers in a JSON file of its own, under a key of its own.
The locations and formats were checked on 2026-11-23 against each client's documentation
(and, where a vendor documents less, its issue tracker):

- **claude-desktop**: ``claude_desktop_config.json``, servers under ``mcpServers``. macOS
  ``~/Library/Application Support/Claude/``, Windows ``%APPDATA%\\Claude\\``; Linux has
  only community builds, which read ``$XDG_CONFIG_HOME/Claude/`` (``~/.config/Claude/``).
  Sources: the user quickstart of modelcontextprotocol.io; the claude-desktop-debian
  project's docs/CONFIGURATION.md for Linux.
- **cursor**: ``~/.cursor/mcp.json`` on every OS (the user's home on Windows too),
  servers under ``mcpServers``. Source: cursor.com/docs/mcp ("Global:
  ~/.cursor/mcp.json").
- **claude-code**: ``~/.claude.json``, or ``$CLAUDE_CONFIG_DIR/.claude.json`` when that is
  set; servers under the top-level ``mcpServers`` are the "user" scope (every project),
  each with ``"type": "stdio"``. Sources: code.claude.com/docs/en/mcp (scopes) and
  /docs/en/settings (``CLAUDE_CONFIG_DIR``); anthropics/claude-code issues #361 and
  #24479.
- **vscode**: ``mcp.json`` in the user profile (what "MCP: Open User Configuration"
  opens): macOS ``~/Library/Application Support/Code/User/``, Windows
  ``%APPDATA%\\Code\\User\\``, Linux ``$XDG_CONFIG_HOME/Code/User/``; servers under
  ``servers``, each with ``"type": "stdio"``. Sources:
  code.visualstudio.com/docs/copilot/reference/mcp-configuration, and the settings file
  locations in code.visualstudio.com/docs/getstarted/settings.

The entry written is ``{"command": <absolute path>, "args": ["serve", ...]}``: the
``satchel`` console script of the environment satchel runs from (else that environment's
Python with ``-m satchel``), so the client depends neither on ``PATH`` nor on ``uv run``
(which would also install the dev dependencies). Everything else in the file is kept; the
old file is first copied to ``<file>.<UTC time>.bak``, and the new one is written
atomically (a temporary file, then a rename). A file that is not valid JSON is reported
and left alone. VS Code's ``mcp.json`` is JSON with comments: it is read as such and
written back as plain JSON (the comments stay in the backup).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import sys
import sysconfig
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer

from satchel.cli._common import load_registry
from satchel.cli._install_systemd import install_systemd, up_args
from satchel.cli._json_config import merge_server, read_config, remove_server, write_config
from satchel.cli._store import resolve_db_location
from satchel.serve import AUTO_AGENT

__all__ = [
    "CLIENTS",
    "Client",
    "ClientFormat",
    "Installable",
    "config_path",
    "install",
    "satchel_command",
    "serve_args",
    "server_entry",
]


class Client(StrEnum):
    """The MCP clients ``satchel install`` knows."""

    CLAUDE_DESKTOP = "claude-desktop"
    CURSOR = "cursor"
    CLAUDE_CODE = "claude-code"
    VSCODE = "vscode"


class Installable(StrEnum):
    """What ``satchel install`` installs into: an MCP client (:class:`Client`), or
    ``systemd`` (a user unit running ``satchel up``)."""

    CLAUDE_DESKTOP = "claude-desktop"
    CURSOR = "cursor"
    CLAUDE_CODE = "claude-code"
    VSCODE = "vscode"
    SYSTEMD = "systemd"


@dataclass(frozen=True, kw_only=True)
class ClientFormat:
    """How one client's configuration file holds its MCP servers."""

    title: str
    """The client's name, for messages."""
    key: str
    """The top-level key that maps server names to server entries."""
    typed: bool
    """Whether an entry carries ``"type": "stdio"``."""
    jsonc: bool
    """Whether the file may hold comments and trailing commas."""
    reload_hint: str
    """What to do after the file changed."""
    workspaces: bool = False
    """Whether the client is an editor that shares its workspace roots: ``serve`` then
    gets ``--agent auto --person NAME`` (per-project memory around the person ``--agent``
    names) unless ``--no-projects``."""
    workspace_root: str | None = None
    """What ``serve --project-root`` gets with ``--agent auto``, for connections that
    cannot be asked for roots: the editor's own variable for the open folder, or ``.``
    where the client starts servers in the project's folder."""


CLIENTS: Mapping[Client, ClientFormat] = {
    Client.CLAUDE_DESKTOP: ClientFormat(
        title="Claude Desktop",
        key="mcpServers",
        typed=False,
        jsonc=False,
        reload_hint="Quit Claude Desktop completely and open it again to load it.",
    ),
    Client.CURSOR: ClientFormat(
        title="Cursor",
        key="mcpServers",
        typed=False,
        jsonc=False,
        reload_hint="Cursor lists it under Settings > MCP; restart Cursor if it does not.",
        workspaces=True,
        workspace_root="${workspaceFolder}",
    ),
    Client.CLAUDE_CODE: ClientFormat(
        title="Claude Code",
        key="mcpServers",
        typed=True,
        jsonc=False,
        reload_hint="New `claude` sessions load it in every project (`claude mcp list`).",
        workspaces=True,
        workspace_root=".",  # claude starts servers in the folder it runs in
    ),
    Client.VSCODE: ClientFormat(
        title="VS Code",
        key="servers",
        typed=True,
        jsonc=True,
        reload_hint="Start it from 'MCP: List Servers' in the command palette.",
        workspaces=True,
        workspace_root="${workspaceFolder}",
    ),
}
"""Each client's file format."""

_NAME = re.compile(r"[A-Za-z0-9_.-]{1,64}")


# -- where -----------------------------------------------------------------------------


def config_path(
    client: Client,
    *,
    platform: str | None = None,
    environ: Mapping[str, str] | None = None,
) -> Path:
    """The user-level configuration file of ``client`` on this machine.

    Args:
        client: The MCP client.
        platform: ``sys.platform`` to assume (``darwin``, ``win32``, else XDG rules).
        environ: The environment to read ``HOME``, ``APPDATA``, ``XDG_CONFIG_HOME`` and
            ``CLAUDE_CONFIG_DIR`` from; ``os.environ`` by default.

    Returns:
        The file's path; it may not exist yet.
    """
    platform = sys.platform if platform is None else platform
    env = os.environ if environ is None else environ
    windows = platform == "win32"
    home_var = env.get("USERPROFILE") if windows else env.get("HOME")
    home = Path(home_var) if home_var else Path.home()
    if windows:
        app_config = Path(env.get("APPDATA") or home / "AppData" / "Roaming")
    elif platform == "darwin":
        app_config = home / "Library" / "Application Support"
    else:
        app_config = Path(env.get("XDG_CONFIG_HOME") or home / ".config")
    match client:
        case Client.CLAUDE_DESKTOP:
            return app_config / "Claude" / "claude_desktop_config.json"
        case Client.CURSOR:
            return home / ".cursor" / "mcp.json"
        case Client.CLAUDE_CODE:
            folder = env.get("CLAUDE_CONFIG_DIR")
            return (Path(folder).expanduser() if folder else home) / ".claude.json"
        case Client.VSCODE:
            return app_config / "Code" / "User" / "mcp.json"


# -- what ------------------------------------------------------------------------------


def _script_name() -> str:
    return "satchel.exe" if sys.platform == "win32" else "satchel"


def _runnable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def _user_scripts() -> list[str]:
    """The user scheme's scripts folder (``~/.local/bin``) if satchel was installed there
    (``pip install --user``), else nothing."""
    scheme = sysconfig.get_preferred_scheme("user")
    library = Path(sysconfig.get_path("purelib", scheme))
    if Path(__file__).absolute().is_relative_to(library):
        return [sysconfig.get_path("scripts", scheme)]
    return []


def satchel_command(
    *,
    executable: str | None = None,
    scripts_dirs: Sequence[str | os.PathLike[str]] | None = None,
) -> list[str]:
    """The absolute command line that starts this installation of satchel.

    The ``satchel`` console script of the running environment if there is one (its
    scripts directory, then the directory of the Python running now), else that Python
    with ``-m satchel``.

    Args:
        executable: The Python to fall back on; ``sys.executable`` by default.
        scripts_dirs: Where to look for the console script; the running environment's
            scripts directory and ``executable``'s directory by default.
    """
    python = os.path.abspath(executable or sys.executable)
    if scripts_dirs is None:
        scripts_dirs = [*_user_scripts(), sysconfig.get_path("scripts"), os.path.dirname(python)]
    for folder in scripts_dirs:
        script = Path(folder).absolute() / _script_name()
        if _runnable(script):
            return [str(script)]
    return [python, "-m", "satchel"]


def _absolute_tools(target: str) -> str:
    """A ``--tools`` target with a file path made absolute (the client's working
    directory is not this one)."""
    module, sep, attr = target.rpartition(":")
    if sep and (module.endswith(".py") or "/" in module or os.sep in module):
        return f"{Path(module).expanduser().absolute()}:{attr}"
    return target


def _absolute_db(db: str) -> str:
    if "://" in db and not db.startswith("sqlite:///"):
        return db  # a PostgreSQL URL
    path = Path(db.removeprefix("sqlite:///")).expanduser()
    return str(path.absolute())


def serve_args(
    *,
    agent: str | None = None,
    person: str | None = None,
    db: str | None = None,
    tools: Sequence[str] = (),
    lazy: bool = False,
    project_root: str | None = None,
) -> list[str]:
    """The arguments after the command: ``serve`` and the options given, with paths made
    absolute."""
    args = ["serve"]
    if agent is not None:
        args += ["--agent", agent]
    if person is not None:
        args += ["--person", person]
    if project_root is not None:
        args += ["--project-root", project_root]
    if db is not None:
        args += ["--db", _absolute_db(db)]
    for target in tools:
        args += ["--tools", _absolute_tools(target)]
    if lazy:
        args.append("--lazy")
    return args


def server_entry(client: Client, command: Sequence[str]) -> dict[str, Any]:
    """The server entry ``client`` reads: ``command`` and ``args`` (and ``type`` where
    the client wants it)."""
    entry: dict[str, Any] = {"type": "stdio"} if CLIENTS[client].typed else {}
    entry["command"] = command[0]
    entry["args"] = list(command[1:])
    return entry


# -- the command -----------------------------------------------------------------------


def _in_uv_cache(command: str) -> bool:
    """Whether ``command`` lives in a throwaway environment of uv's cache (``uvx``)."""
    parts = Path(command).parts
    return any(part.startswith("archive-v") for part in parts) and "uv" in parts


def _check_name(name: str) -> None:
    if not _NAME.fullmatch(name):
        raise typer.BadParameter(
            f"{name!r} is not a server name: use 1 to 64 letters, digits, '_', '-' or '.'.",
            param_hint="'--name'",
        )


def install(
    client: Annotated[
        Installable,
        typer.Argument(
            help="The MCP client whose configuration to change, or systemd.", show_default=False
        ),
    ],
    config: Annotated[
        Path | None,
        typer.Option(
            "--config",
            metavar="PATH",
            help="Change this file instead of the client's usual one (systemd: the unit "
            "file, default ~/.config/systemd/user/satchel-up.service).",
        ),
    ] = None,
    name: Annotated[
        str, typer.Option("--name", help="The server's name (its key) in the file.")
    ] = "satchel",
    agent: Annotated[
        str | None,
        typer.Option(
            "--agent",
            envvar="SATCHEL_AGENT",
            help="The person whose memory the client uses, the same name for every client: "
            "claude-desktop gets `serve --agent NAME`, the editors (cursor, claude-code, "
            "vscode) `serve --agent auto --person NAME` (each project's own memory, with "
            "NAME's human and persona shared in). Default: serve's own ('default').",
        ),
    ] = None,
    no_projects: Annotated[
        bool,
        typer.Option(
            "--no-projects",
            help="Give an editor the person's memory itself, not a memory per project.",
        ),
    ] = False,
    db: Annotated[
        str | None,
        typer.Option(
            "--db",
            envvar="SATCHEL_DB",
            help="Pass --db to serve (a path is made absolute). Default: serve's own.",
        ),
    ] = None,
    tools: Annotated[
        list[str] | None,
        typer.Option(
            "--tools",
            "-t",
            metavar="MODULE:ATTR",
            help="Pass --tools to serve (a file path is made absolute); repeatable.",
        ),
    ] = None,
    lazy: Annotated[bool, typer.Option("--lazy", help="Pass --lazy to serve.")] = False,
    dry_run: Annotated[
        bool,
        typer.Option(
            "--dry-run", help="Print the entry it would write, and where; change nothing."
        ),
    ] = False,
    remove: Annotated[
        bool, typer.Option("--remove", help="Remove the server from the file instead.")
    ] = False,
    model: Annotated[
        str | None,
        typer.Option("--model", metavar="P:M", help="systemd: pass --model to satchel up."),
    ] = None,
    base_url: Annotated[
        str | None,
        typer.Option("--base-url", metavar="URL", help="systemd: pass --base-url to satchel up."),
    ] = None,
    channels: Annotated[
        Path | None,
        typer.Option(
            "--channels",
            metavar="FILE",
            help="systemd: pass --channels to satchel up (made absolute).",
        ),
    ] = None,
    up_arg: Annotated[
        list[str] | None,
        typer.Option(
            "--up-arg",
            metavar="ARG",
            help="systemd: one more argument for satchel up, as is; repeatable.",
        ),
    ] = None,
    secret: Annotated[
        list[str] | None,
        typer.Option(
            "--secret",
            metavar="NAME",
            help="systemd: keep this environment variable's current value in the unit's "
            "environment file (mode 0600), never in the unit; repeatable.",
        ),
    ] = None,
    env_file: Annotated[
        Path | None,
        typer.Option(
            "--env-file",
            metavar="PATH",
            help="systemd: the environment file with the secrets "
            "(default ~/.config/satchel/satchel-up.env).",
        ),
    ] = None,
    show: Annotated[
        bool,
        typer.Option("--print", help="systemd: print the unit; write nothing (as --dry-run)."),
    ] = False,
) -> None:
    """Add `satchel serve` to an MCP client's config (Claude Desktop, Cursor, ...), or
    keep `satchel up` running as a systemd user service.

    CLIENT is claude-desktop, cursor, claude-code, vscode or systemd.

    Keeps the file's other servers and settings, and backs the old file up beside it.

    Run it again to replace satchel's entry (after moving satchel, or to change options).
    """
    if client is Installable.SYSTEMD:
        if tools or lazy or no_projects or name != "satchel":
            raise typer.BadParameter(
                "--tools, --lazy, --no-projects and --name apply to MCP clients, not systemd.",
                param_hint="'systemd'",
            )
        if agent is not None and not agent.strip():
            raise typer.BadParameter("must not be empty.", param_hint="'--agent'")
        args = up_args(
            model=model,
            base_url=base_url,
            channels=channels,
            db=db,
            agent=agent,
            extra=up_arg or (),
        )
        install_systemd(
            [*satchel_command(), *args],
            unit_path=config,
            env_file=env_file,
            secrets=secret or (),
            db=db,
            show_only=show or dry_run,
            remove=remove,
        )
        return
    for flag, value in (
        ("--model", model),
        ("--base-url", base_url),
        ("--channels", channels),
        ("--up-arg", up_arg),
        ("--secret", secret),
        ("--env-file", env_file),
        ("--print", show or None),
    ):
        if value is not None:
            raise typer.BadParameter("applies to systemd only.", param_hint=f"'{flag}'")
    mcp_client = Client(client.value)
    _check_name(name)
    if agent is not None and not agent.strip():
        raise typer.BadParameter("must not be empty.", param_hint="'--agent'")
    if no_projects and agent == AUTO_AGENT:
        raise typer.BadParameter(
            "--agent auto is the memory per project that --no-projects turns off.",
            param_hint="'--no-projects'",
        )
    if db is not None:
        resolve_db_location(db, must_exist=False)  # serve would refuse it in the client
    for target in tools or ():
        load_registry(target)  # a typo fails here, not silently inside the client
    fmt = CLIENTS[mcp_client]
    path = (config.expanduser() if config is not None else config_path(mcp_client)).absolute()
    if path.is_dir():
        raise typer.BadParameter(f"{str(path)!r} is a directory.", param_hint="'--config'")
    current, dropped = read_config(path, jsonc=fmt.jsonc)
    if remove:
        updated, previous = remove_server(current, fmt.key, name, path=path)
        if previous is None:
            typer.echo(f"{fmt.title}'s config {path} has no server {name!r}; nothing to do.")
            return
        if dry_run:
            typer.echo(f"Would remove the server {name!r} from {path} (dry run).")
            return
        backup = write_config(path, updated)
        typer.echo(f"Removed the server {name!r} from {fmt.title}'s config {path}.")
        typer.echo(f"The old file is at {backup}.")
        return
    command = satchel_command()
    if _in_uv_cache(command[0]):
        typer.echo(
            f"satchel: warning: {command[0]} is in uv's cache (uvx?), which uv may clean "
            "up; for a lasting setup run `uv tool install satchel`, then install again.",
            err=True,
        )
    per_project = fmt.workspaces and not no_projects
    person: str | None = None
    if per_project and agent != AUTO_AGENT:
        # the editor's projects share in the same person every other client is given
        person, agent = agent, AUTO_AGENT
    per_project = agent == AUTO_AGENT
    root = fmt.workspace_root if per_project else None
    entry = server_entry(
        mcp_client,
        [
            *command,
            *serve_args(
                agent=agent,
                person=person,
                db=db,
                tools=tools or (),
                lazy=lazy,
                project_root=root,
            ),
        ],
    )
    updated, previous = merge_server(current, fmt.key, name, entry, path=path)
    if dry_run:
        verb = "replace the server {!r} in" if previous is not None else "add the server {!r} to"
        typer.echo(
            f"Would {verb.format(name)} {fmt.title}'s config {path} "
            "(dry run; nothing written). The entry:",
            err=True,
        )
        typer.echo(json.dumps({fmt.key: {name: entry}}, indent=2, ensure_ascii=False))
        return
    if previous == entry and not dropped:
        typer.echo(f"{fmt.title}'s config {path} already runs this; nothing changed.")
        return
    backup = write_config(path, updated)
    verb = "Replaced the server {!r} in" if previous is not None else "Added the server {!r} to"
    typer.echo(f"{verb.format(name)} {fmt.title}'s config {path}:")
    typer.echo(f"  {shlex.join([entry['command'], *entry['args']])}")
    if per_project:
        typer.echo(
            f"Each project gets its own memory, with the 'human' and 'persona' blocks of "
            f"{person or 'default'!r} shared into all of them (--no-projects for one memory "
            "everywhere)."
        )
    if backup is not None:
        typer.echo(f"The old file is at {backup}.")
    if dropped:
        typer.echo("Its comments and trailing commas were not kept (the backup has them).")
    typer.echo(fmt.reload_hint)
