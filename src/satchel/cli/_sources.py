"""``satchel sources``: add, list, refresh and remove the folders and files an agent
searches beside its memory (see :mod:`satchel.sources`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

from satchel.cli._agents import AgentOption
from satchel.cli._common import echo_json, stderr_console, stdout_console
from satchel.cli._store import DbOption, open_store, run_on_store
from satchel.memory import MemoryStore
from satchel.sources import IndexReport, SourceIndex

__all__ = ["app"]

app = typer.Typer(
    help="The folders and files an agent can search, grep and open (search_files, "
    "grep_files, open_file, and search with domain all).",
    no_args_is_help=True,
)

JsonFlag = Annotated[bool, typer.Option("--json", help="Print JSON.")]


def _summary(report: IndexReport) -> dict[str, object]:
    return {
        "indexed": report.indexed,
        "unchanged": report.unchanged,
        "removed": report.removed,
        "passages": report.chunks,
        "skipped": [{"path": str(s.path), "reason": s.reason} for s in report.skipped],
    }


def _print(report: IndexReport, as_json: bool) -> None:
    if as_json:
        echo_json(_summary(report))
        return
    console = stdout_console()
    console.print(
        f"Indexed {len(report.indexed)} file(s) into {report.chunks} passage(s); "
        f"{report.unchanged} unchanged, {len(report.removed)} removed, "
        f"{len(report.skipped)} skipped."
    )
    for skipped in report.skipped[:50]:
        console.print(f"  skipped {skipped.path}: {skipped.reason}", markup=False)
    if len(report.skipped) > 50:
        console.print(f"  ... and {len(report.skipped) - 50} more skipped (see --json)")


async def _index(index: SourceIndex, path: Path | None) -> IndexReport:
    """Add ``path`` (or refresh every source, for ``None``) with a progress bar."""
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn())
    with Progress(*columns, console=stderr_console(), transient=True) as progress:
        task = progress.add_task("Indexing", total=None)

        def report(done: int, total: int, name: str) -> None:
            progress.update(task, completed=done, total=total, description=name[-60:] or "Indexing")

        if path is None:
            return await index.refresh(progress=report)
        return await index.add(path, progress=report)


@app.command("add")
def add(
    path: Annotated[Path, typer.Argument(help="A file or folder (text, Markdown, code, PDF).")],
    db: DbOption = None,
    agent: AgentOption = "default",
    as_json: JsonFlag = False,
) -> None:
    """Add a file or folder to an agent's sources and index it (again: only what changed)."""
    if not path.exists():
        raise typer.BadParameter(f"no such file or folder: {path}", param_hint="'PATH'")

    async def work(store: MemoryStore) -> IndexReport:
        return await _index(SourceIndex(store, agent), path)

    _print(run_on_store(work, open_store(db, create=True)), as_json)


@app.command("refresh")
def refresh(db: DbOption = None, agent: AgentOption = "default", as_json: JsonFlag = False) -> None:
    """Index what changed in every source of the agent since the last look."""

    async def work(store: MemoryStore) -> IndexReport:
        return await _index(SourceIndex(store, agent), None)

    _print(run_on_store(work, open_store(db, create=False)), as_json)


@app.command("list")
def list_sources(
    db: DbOption = None, agent: AgentOption = "default", as_json: JsonFlag = False
) -> None:
    """List the agent's sources and how many files each holds."""

    async def work(store: MemoryStore) -> dict[str, int]:
        index = SourceIndex(store, agent)
        counts = {str(root): 0 for root in await index.roots()}
        for record in await index.files():
            counts[record.root] = counts.get(record.root, 0) + 1
        return counts

    counts = run_on_store(work, open_store(db, create=False))
    if as_json:
        echo_json([{"source": root, "files": n} for root, n in counts.items()])
        return
    console = stdout_console()
    if not counts:
        console.print(f"Agent {agent!r} has no sources. Add one: satchel sources add PATH")
    for root, n in counts.items():
        console.print(f"{root}  ({n} file{'s' if n != 1 else ''})", markup=False)


@app.command("remove")
def remove(
    source: Annotated[str, typer.Argument(help="The source's path, or its name.")],
    db: DbOption = None,
    agent: AgentOption = "default",
) -> None:
    """Remove a source and everything indexed from it (the files stay on disk)."""

    async def work(store: MemoryStore) -> list[str]:
        return await SourceIndex(store, agent).remove(source)

    removed = run_on_store(work, open_store(db, create=False))
    stdout_console().print(
        f"Removed {source} ({len(removed)} file(s) left the index).", markup=False
    )
