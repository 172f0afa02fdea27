"""The export format as the CLI reads it: :func:`satchel.memory.read_export`, with a bad
line reported as a usage error on the ``FILE`` argument (one line, exit code 2)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import IO

import typer

from satchel._errors import InvalidInputError
from satchel.memory import EXPORT_FORMAT, Block, Message, export_lines
from satchel.memory import read_export as _read_export

__all__ = ["EXPORT_FORMAT", "export_lines", "read_export"]


def read_export(
    stream: IO[bytes],
    *,
    agent: str | None,
    progress: Callable[[int], None] | None = None,
) -> Iterator[Block | Message]:
    """:func:`satchel.memory.read_export`, raising ``typer.BadParameter`` for a bad file."""
    try:
        yield from _read_export(stream, agent=agent, progress=progress)
    except InvalidInputError as exc:
        raise typer.BadParameter(exc.message, param_hint="'FILE'") from None
