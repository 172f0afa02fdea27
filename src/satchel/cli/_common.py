"""What every command group shares: loading a registry from ``--tools``, printing JSON
and tables, and turning errors into the one line a person reads.

A command reports a bad argument by raising :class:`typer.BadParameter` (with
``param_hint``); :func:`satchel.cli.main` prints it, or a :class:`~satchel.SatchelError`,
as one ``Error: ...`` line on stderr and exits with status 2. A command never prints a
traceback for a user's mistake.
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Generator
from contextlib import contextmanager
from typing import Annotated, Any

import typer
from rich.console import Console

from satchel import serve
from satchel._errors import SatchelUsageError
from satchel.registry import BaseRegistry

__all__ = [
    "DEFAULT_TOOLS",
    "JsonFlag",
    "ToolsOption",
    "echo_json",
    "error_line",
    "load_object",
    "load_registry",
    "option_errors",
    "stderr_console",
    "stdout_console",
]

logger = logging.getLogger("satchel.cli")

DEFAULT_TOOLS = "satchel.examples:registry"
"""The registry the commands use when ``--tools`` is not given."""

ToolsOption = Annotated[
    str,
    typer.Option(
        "--tools",
        "-t",
        metavar="MODULE:ATTR",
        envvar="SATCHEL_TOOLS",
        help=(
            "The ToolRegistry to use, or a function returning one: `package.module:attr` "
            "or `path/to/file.py:attr`."
        ),
    ),
]
"""The ``--tools`` option, for any command that works on a registry."""

JsonFlag = Annotated[bool, typer.Option("--json", help="Print JSON for scripts.")]
"""The ``--json`` option: machine output instead of a table or text."""


def stdout_console() -> Console:
    """A rich console on the current stdout (made per command, so tests can capture it)."""
    return Console(file=sys.stdout, highlight=False)


def stderr_console() -> Console:
    """A rich console on the current stderr."""
    return Console(file=sys.stderr, highlight=False)


def echo_json(data: Any) -> None:
    """Print ``data`` as indented JSON on stdout, unwrapped and uncoloured."""
    typer.echo(json.dumps(data, indent=2, ensure_ascii=False))


def one_line(text: str) -> str:
    """``text`` with every run of whitespace, newlines included, made one space."""
    return " ".join(text.split())


def error_line(message: str) -> str:
    """The line printed for an error: ``Error: <message>`` on one line."""
    return one_line(f"Error: {message}")


@contextmanager
def option_errors() -> Generator[None]:
    """Turn a :class:`~satchel.SatchelUsageError` that names an option
    (``details["option"]``, as :mod:`satchel.serve` raises them) into that option's
    :class:`typer.BadParameter`, so it prints as ``Invalid value for '--tools': ...``."""
    try:
        yield
    except SatchelUsageError as exc:
        option = exc.details.get("option")
        if not isinstance(option, str):
            raise
        raise typer.BadParameter(exc.message, param_hint=f"'{option}'") from exc


def load_registry(target: str) -> BaseRegistry:
    """Import the registry that ``--tools`` names (see
    :func:`satchel.serve.load_registry`).

    Raises:
        typer.BadParameter: the module or file cannot be imported, the attribute is
            missing, or it is not (and does not return) a ToolRegistry.
    """
    with option_errors():
        return serve.load_registry(target)


def load_object(target: str, option: str) -> object:
    """Import what ``MODULE:ATTR`` or ``path/to/file.py:ATTR`` names (see
    :func:`satchel.serve.load_object`), for an option such as ``--tools`` or
    ``--model``.

    Raises:
        typer.BadParameter: the target is malformed, cannot be imported, or lacks the
            attribute (the message names ``option``).
    """
    with option_errors():
        return serve.load_object(target, option)
