"""Markdown mirrors from the command line: ``satchel memory mirror DIR``, and the lines
``satchel serve --mirror DIR`` prints (see :class:`~satchel.memory.MarkdownMirror`; the
serving side is :mod:`satchel.serve`'s)."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path

import anyio
import typer

from satchel.cli._common import stderr_console
from satchel.cli._store import open_store
from satchel.memory import MarkdownMirror, MarkdownReport

__all__ = ["mirror_folder", "print_report"]


def print_report(agent: str, report: MarkdownReport) -> None:
    """Print what a mirror of ``agent`` could not apply, one line per block on stderr."""
    console = stderr_console()
    for label, why in {**report.conflicts, **report.refused}.items():
        console.print(f"satchel: mirror of {agent!r}: [yellow]{label}[/]: {why}")


def _report(agent: str) -> Callable[[MarkdownReport], None]:
    return partial(print_report, agent)


def mirror_folder(db: str | None, agent: str, folder: Path) -> None:
    """``satchel memory mirror DIR``: keep ``folder`` in step with ``agent``'s memory
    until interrupted."""

    async def work() -> None:
        store = await open_store(db, create=True)
        try:
            await store.ensure_agent(agent)
            mirror = MarkdownMirror(store, agent, folder, on_report=_report(agent))
            mirror.check_folder()
            async with anyio.create_task_group() as tg:
                await tg.start(mirror.run)
                stderr_console().print(
                    f"satchel: mirroring the memory of {agent!r} in {folder} (Ctrl-C to stop)."
                )
        finally:
            await store.close()

    try:
        anyio.run(work)
    except KeyboardInterrupt:
        raise typer.Exit(0) from None
