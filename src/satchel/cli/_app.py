"""The root ``satchel`` command: global options, the command groups, and the error
boundary.

Each command group lives in its own module as a ``typer.Typer`` named ``app``; add a new
one to :data:`GROUPS` and it appears as ``satchel <name> ...``.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable, Sequence
from enum import StrEnum
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from satchel._errors import (
    ApprovalError,
    MemoryStoreError,
    ModelError,
    SatchelError,
    SatchelUsageError,
    VersionConflictError,
)
from satchel._version import __version__
from satchel.cli import (
    _agent_file,
    _approvals,
    _chat,
    _console,
    _install,
    _memory,
    _run,
    _serve_command,
    _sources,
    _tools,
    _up,
)
from satchel.cli._common import error_line

__all__ = ["COMMANDS", "GROUPS", "app", "main"]

GROUPS: tuple[tuple[str, typer.Typer], ...] = (
    ("tools", _tools.app),
    ("memory", _memory.app),
    ("approvals", _approvals.app),
    ("agent", _agent_file.app),
    ("sources", _sources.app),
)
"""The command groups, as ``(name, typer app)``, in the order ``--help`` lists them."""

COMMANDS: tuple[tuple[str, Callable[..., Any]], ...] = (
    ("serve", _serve_command.serve),
    ("console", _console.console),
    ("install", _install.install),
    ("run", _run.run),
    ("chat", _chat.chat),
    ("up", _up.up),
)
"""The top-level commands that are not groups, as ``(name, function)``."""

_LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


class LogLevel(StrEnum):
    """The levels ``--log-level`` accepts."""

    DEBUG = "debug"
    INFO = "info"
    WARNING = "warning"
    ERROR = "error"


def _error_code(exc: typer.TyperException) -> int:
    """Print a click/typer error as one line on stderr; return its exit status."""
    if type(exc).__name__ == "NoArgsIsHelpError":
        # typer has printed the help already (the message is what is left of it).
        message = exc.format_message()
        if message.strip():
            typer.echo(message, err=True)
        return exc.exit_code
    line = error_line(exc.format_message())
    if not line.endswith((".", "?", "!", ")")):
        line += "."
    ctx: Any = getattr(exc, "ctx", None)
    if ctx is not None:
        line += f" See '{ctx.command_path} --help'."
    typer.echo(line, err=True)
    return exc.exit_code


def _satchel_code(exc: SatchelError) -> int:
    """2 for what the person can fix by asking differently (a missing block, an unknown
    approval id, a refused write, a bad option); 1 for a failure underneath (the
    database, a mounted server) or a lost race worth retrying."""
    if isinstance(exc, VersionConflictError):
        return 1
    if isinstance(exc, SatchelUsageError | MemoryStoreError | ApprovalError | ModelError):
        return 2
    return 1


def _os_error_line(exc: OSError) -> str:
    """``cannot use '/no/such/dir/x.jsonl': No such file or directory``."""
    reason = exc.strerror or str(exc) or type(exc).__name__
    if exc.filename is not None:
        return error_line(f"cannot use {str(exc.filename)!r}: {reason}.")
    return error_line(f"{reason}.")


def _tidy_help(command: Any) -> None:
    """Drop the ``<bool>`` typer shows beside every flag (``--json <bool>``), and name
    a repeatable option's value (``--tag TAG`` rather than ``<list[str]>``), in the help
    of ``command`` and every command under it."""
    params = list(getattr(command, "params", ()))
    if getattr(command, "add_help_option", False):
        params.append(command.get_help_option(typer.Context(command)))
    for param in params:
        if param is None or param.metavar is not None:
            continue
        if getattr(param, "is_flag", False):
            param.metavar = ""
        elif getattr(param, "multiple", False) and param.name:
            param.metavar = param.name.upper()
    for sub in getattr(command, "commands", {}).values():
        _tidy_help(sub)


class _SatchelGroup(TyperGroup):
    """The root group. Its ``main`` is the CLI's error boundary: usage errors and
    satchel's own errors become one ``Error: ...`` line, never a traceback."""

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        windows_expand_args: bool = True,
        **extra: Any,
    ) -> Any:
        _tidy_help(self)
        try:
            outcome = super().main(
                args=args,
                prog_name=prog_name,
                complete_var=complete_var,
                standalone_mode=False,
                windows_expand_args=windows_expand_args,
                **extra,
            )
            code = outcome if isinstance(outcome, int) else 0
        except typer.TyperException as exc:  # every click usage error derives from it
            code = _error_code(exc)
        except SatchelError as exc:
            typer.echo(error_line(exc.message), err=True)
            code = _satchel_code(exc)
        except OSError as exc:  # a path the person gave: a missing folder, no permission
            typer.echo(_os_error_line(exc), err=True)
            code = 2 if exc.filename is not None else 1
        except typer.Abort:
            typer.echo("Aborted.", err=True)
            code = 1
        if not standalone_mode:
            return code
        sys.exit(code)


app = typer.Typer(
    name="satchel",
    cls=_SatchelGroup,
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
for _name, _command in COMMANDS:
    app.command(_name)(_command)
for _name, _group in GROUPS:
    app.add_typer(_group, name=_name)


def _show_version(value: bool) -> None:
    if value:
        typer.echo(f"satchel {__version__}")
        raise typer.Exit()


def _configure_logging(ctx: typer.Context, level: LogLevel) -> None:
    """Send log records to stderr for this run only; undone when the command ends."""
    root = logging.getLogger()
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter(_LOG_FORMAT))
    previous = root.level
    root.addHandler(handler)
    root.setLevel(level.upper())

    def undo() -> None:
        root.removeHandler(handler)
        root.setLevel(previous)

    ctx.call_on_close(undo)


@app.callback()
def root(
    ctx: typer.Context,
    log_level: Annotated[
        LogLevel,
        typer.Option(
            "--log-level",
            envvar="SATCHEL_LOG_LEVEL",
            case_sensitive=False,
            help="How much to log to stderr.",
        ),
    ] = LogLevel.WARNING,
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            callback=_show_version,
            is_eager=True,
            help="Print satchel's version and exit.",
        ),
    ] = False,
) -> None:
    """satchel: typed tools and stateful memory for LLM agents."""
    _configure_logging(ctx, log_level)


def main() -> None:
    """Run the ``satchel`` command line (the console script's entry point)."""
    app(prog_name="satchel")
