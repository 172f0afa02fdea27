"""The options that choose the built-in memory tools, shared by ``satchel serve``,
``run`` and ``chat``: ``--replace NAME`` (a ``--tools`` registry's tool stands in for
the built-in of that name) and ``--no-memory`` (no built-in memory tools at all)."""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from typing import Annotated

import typer

from satchel.builtin import BuiltinTools
from satchel.registry import BaseRegistry

__all__ = [
    "NoMemoryOption",
    "ReplaceOption",
    "check_replace",
    "check_replacements",
]

ReplaceOption = Annotated[
    list[str] | None,
    typer.Option(
        "--replace",
        metavar="NAME",
        help="Use the --tools registry's tool NAME instead of the built-in of that name "
        "(context, recall, search, send_message); repeatable.",
    ),
]
NoMemoryOption = Annotated[
    bool,
    typer.Option(
        "--no-memory",
        help="No built-in memory tools: only the --tools (and mounted) tools, which still "
        "reach the agent's memory as ctx.memory.",
    ),
]


def check_replace(
    names: Sequence[str], *, no_memory: bool, tools: Sequence[str]
) -> tuple[str, ...]:
    """Check ``--replace`` against the other options, before anything is opened.

    Returns:
        The names, each once, in the order given.

    Raises:
        typer.BadParameter: a name is not a built-in, ``--no-memory`` leaves nothing
            to replace, or no ``--tools`` registry is given to replace it with.
    """
    for name in names:
        if name not in BuiltinTools.ALL_NAMES:
            close = difflib.get_close_matches(name, BuiltinTools.ALL_NAMES, n=1)
            hint = f" Did you mean {close[0]!r}?" if close else ""
            raise typer.BadParameter(
                f"{name!r} is not a built-in tool; the built-ins are "
                f"{', '.join(BuiltinTools.ALL_NAMES)}.{hint}",
                param_hint="'--replace'",
            )
    if names and no_memory:
        raise typer.BadParameter(
            "with --no-memory no built-in is served, so there is nothing to replace.",
            param_hint="'--replace'",
        )
    if names and not tools:
        raise typer.BadParameter(
            f"{names[0]!r} needs a --tools registry that defines the replacement.",
            param_hint="'--replace'",
        )
    return tuple(dict.fromkeys(names))


def check_replacements(
    replaced: Sequence[str], registries: Sequence[tuple[str, BaseRegistry]]
) -> None:
    """Each ``--replace`` name must be defined by one of the ``--tools`` registries
    (given as ``(target, registry)``).

    Raises:
        typer.BadParameter: none of them defines a replaced name.
    """
    for name in replaced:
        if not any(name in registry for _, registry in registries):
            where = ", ".join(target for target, _ in registries) or "no --tools registry"
            raise typer.BadParameter(
                f"no --tools registry defines {name!r} to replace the built-in (looked in "
                f"{where}).",
                param_hint="'--replace'",
            )
