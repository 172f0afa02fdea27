"""``satchel memory export --format markdown DIR`` and ``satchel memory import DIR``:
the CLI side of :mod:`satchel.memory._markdown`."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

import anyio
import typer

from satchel._counts import counted
from satchel.cli._common import echo_json, stderr_console
from satchel.cli._store import open_store
from satchel.memory import MarkdownReport, export_markdown, import_markdown

__all__ = ["export_folder", "import_folder"]


def export_folder(db: str | None, agent: str, folder: Path) -> None:
    """Write ``agent``'s blocks into ``folder`` as Markdown files."""

    async def work() -> MarkdownReport:
        store = await open_store(db, create=False, embed=False)
        try:
            return await export_markdown(store, agent, folder)
        finally:
            await store.close()

    done = anyio.run(work)
    stderr_console().print(f"Exported {counted(len(done.written), 'block')} to {folder}.")


def import_folder(db: str | None, agent: str, folder: Path, *, as_json: bool) -> None:
    """Read a Markdown export back into ``agent``'s memory, through the gate.

    Raises:
        typer.Exit: with code 1 when a block was in conflict or a write was refused.
    """

    async def work() -> MarkdownReport:
        store = await open_store(db, create=True)
        try:
            return await import_markdown(store, agent, folder)
        finally:
            await store.close()

    result = anyio.run(work)
    if as_json:
        echo_json(asdict(result))
    else:
        stderr_console().print(
            f"Updated {len(result.written)}, created {len(result.created)}, "
            f"unchanged {len(result.unchanged)}."
        )
        for label, why in {**result.conflicts, **result.refused}.items():
            stderr_console().print(f"[yellow]{label}[/]: {why}")
        for label, why in result.ignored.items():
            stderr_console().print(f"[yellow]{label}[/] (not applied): {why}")
    if result.conflicts or result.refused:
        raise typer.Exit(1)
