"""What every command group shares: loading a registry from ``--tools``, printing JSON
and tables, and turning errors into the one line a person reads.

A command reports a bad argument by raising :class:`typer.BadParameter` (with
``param_hint``); :func:`satchel.cli.main` prints it, or a :class:`~satchel.SatchelError`,
as one ``Error: ...`` line on stderr and exits with status 2. A command never prints a
traceback for a user's mistake.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import json
import logging
import os
import sys
from pathlib import Path
from typing import Annotated, Any

import anyio
import typer
from rich.console import Console

from satchel._errors import SatchelError
from satchel.registry import BaseRegistry
from satchel.tools import BaseTool

__all__ = [
    "DEFAULT_TOOLS",
    "JsonFlag",
    "ToolsOption",
    "echo_json",
    "error_line",
    "load_object",
    "load_registry",
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


def _describe(exc: BaseException) -> str:
    if isinstance(exc, SatchelError):
        return exc.message
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _bad_tools(message: str, option: str = "--tools") -> typer.BadParameter:
    return typer.BadParameter(message, param_hint=f"'{option}'")


def _looks_like_path(module: str) -> bool:
    return module.endswith(".py") or "/" in module or os.sep in module


def _import_file(path_text: str, option: str) -> object:
    path = Path(path_text).expanduser()
    if not path.is_file():
        raise _bad_tools(f"there is no file {path_text!r}.", option)
    name = f"_satchel_tools_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise _bad_tools(f"{path_text!r} cannot be imported as Python.", option)
    module = importlib.util.module_from_spec(spec)
    folder = str(path.resolve().parent)
    if folder not in sys.path:
        sys.path.insert(0, folder)  # as when running the file: its neighbours import
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:  # the boundary: any error in the user's file is one line
        del sys.modules[name]
        logger.debug("importing %s failed", path_text, exc_info=exc)
        raise _bad_tools(f"importing {path_text!r} failed: {_describe(exc)}", option) from exc
    return module


def _import_module(name: str, option: str) -> object:
    cwd = os.getcwd()
    if cwd not in sys.path and "" not in sys.path:
        sys.path.insert(0, cwd)  # as `python -m`: modules in the current folder import
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name is not None and (name == exc.name or name.startswith(exc.name + ".")):
            raise _bad_tools(
                f"there is no module {name!r} (is it installed, or in the current folder?).",
                option,
            ) from exc
        logger.debug("importing %s failed", name, exc_info=exc)
        raise _bad_tools(f"cannot import {name!r}: {_describe(exc)}", option) from exc
    except Exception as exc:  # the boundary: any error in the user's module is one line
        logger.debug("importing %s failed", name, exc_info=exc)
        raise _bad_tools(f"cannot import {name!r}: {_describe(exc)}", option) from exc


def _as_registry(value: object, target: str) -> BaseRegistry:
    if isinstance(value, BaseRegistry):
        return value
    if isinstance(value, BaseTool):
        raise _bad_tools(
            f"{target!r} is a single tool, not a ToolRegistry; put it in one: ToolRegistry([tool])."
        )
    if inspect.isclass(value) or not callable(value):
        kind = f"the class {value.__name__}" if inspect.isclass(value) else type(value).__name__
        raise _bad_tools(
            f"{target!r} is {kind}, not a ToolRegistry or a function that returns one."
        )
    try:
        made: object = value()
        if inspect.iscoroutine(made):
            coroutine = made

            async def wait() -> object:
                return await coroutine

            made = anyio.run(wait)
    except Exception as exc:  # the boundary: a failing factory is one line
        logger.debug("calling %s failed", target, exc_info=exc)
        raise _bad_tools(f"calling {target!r} failed: {_describe(exc)}") from exc
    if not isinstance(made, BaseRegistry):
        raise _bad_tools(f"{target!r} returned {type(made).__name__}, not a ToolRegistry.")
    return made


def load_registry(target: str) -> BaseRegistry:
    """Import the registry that ``--tools`` names.

    Args:
        target: ``package.module:attr`` or ``path/to/file.py:attr``; ``attr`` may be
            dotted (``module:holder.registry``) and may name a ToolRegistry or a
            function (sync or async) that takes no arguments and returns one.

    Raises:
        typer.BadParameter: the module or file cannot be imported, the attribute is
            missing, or it is not (and does not return) a ToolRegistry.
    """
    return _as_registry(load_object(target, "--tools"), target)


def load_object(target: str, option: str) -> object:
    """Import what ``MODULE:ATTR`` or ``path/to/file.py:ATTR`` names (``ATTR`` may be
    dotted), for an option such as ``--tools`` or ``--model``.

    Raises:
        typer.BadParameter: the target is malformed, cannot be imported, or lacks the
            attribute (the message names ``option``).
    """
    module_name, sep, attr_path = target.rpartition(":")
    if not sep or not module_name.strip() or not attr_path.strip():
        raise _bad_tools(
            f"{target!r} is not MODULE:ATTR; write it as 'package.module:attr' (such as "
            f"{DEFAULT_TOOLS!r}) or 'path/to/file.py:attr'.",
            option,
        )
    value = (
        _import_file(module_name, option)
        if _looks_like_path(module_name)
        else _import_module(module_name, option)
    )
    for part in attr_path.split("."):
        try:
            value = getattr(value, part)
        except AttributeError:
            raise _bad_tools(f"{module_name!r} has no attribute {attr_path!r}.", option) from None
    return value
