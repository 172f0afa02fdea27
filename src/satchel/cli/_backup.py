"""Running ``satchel memory export`` and ``import``: streaming, the two import passes,
and the progress bars.

An import reads its file twice and holds at most one batch of records at a time:

1. the check pass reads every line through :func:`~satchel.cli._export.read_export`
   and writes nothing, so a bad line is reported before the database is even opened;
2. the write pass streams the records into
   :meth:`~satchel.memory.MemoryStore.import_records`, which checks and embeds them
   500 at a time and writes them all in one transaction (a conflict rolls back all).

Standard input is spooled to a temporary file so it can be read twice. On a terminal
(and without ``--json``) each pass shows a bar: bytes checked, then records imported.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import tempfile
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import IO

import typer
from rich.progress import (
    BarColumn,
    DownloadColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeRemainingColumn,
)

from satchel.cli._common import stderr_console
from satchel.cli._export import export_lines, read_export
from satchel.memory import Block, ImportReport, MemoryStore, Message, OnConflict

__all__ = ["check_export", "export_target", "import_export", "import_source", "write_export"]


async def write_export(store: MemoryStore, agent: str | None, out: IO[str]) -> int:
    """Write the export of ``agent`` (``None``: every agent) to ``out`` line by line;
    return the number of records written."""
    lines = -1  # the header is not a record
    async for line in export_lines(store, agent):
        out.write(line + "\n")
        lines += 1
    return lines


@contextlib.contextmanager
def export_target(file: Path | None) -> Generator[IO[str]]:
    """Where an export goes: stdout, or a temporary file beside ``file`` that replaces
    it only once the export is complete (a failed export leaves ``file`` untouched).

    Raises:
        typer.BadParameter: ``file``'s directory does not exist.
    """
    if file is None:
        yield sys.stdout
        return
    if not file.parent.is_dir():
        raise typer.BadParameter(
            f"there is no directory {str(file.parent)!r} to write {file.name!r} in.",
            param_hint="'FILE'",
        )
    with tempfile.NamedTemporaryFile(
        "w", encoding="utf-8", newline="\n", dir=file.parent, prefix=f".{file.name}.", delete=False
    ) as out:
        try:
            yield out
        except BaseException:
            out.close()
            os.unlink(out.name)
            raise
    os.replace(out.name, file)


@contextlib.contextmanager
def import_source(file: str) -> Generator[IO[bytes]]:
    """The export ``file`` names, open for reading twice: the file itself, or
    standard input (``-``) spooled to a temporary file.

    Raises:
        typer.BadParameter: There is no such file.
    """
    if file == "-":
        with tempfile.TemporaryFile() as spool:
            shutil.copyfileobj(sys.stdin.buffer, spool)
            spool.seek(0)
            yield spool
        return
    path = Path(file)
    if not path.is_file():
        raise typer.BadParameter(f"there is no file {file!r}.", param_hint="'FILE'")
    with path.open("rb") as stream:
        yield stream


def _size_of(stream: IO[bytes]) -> int:
    stream.seek(0, os.SEEK_END)
    size = stream.tell()
    stream.seek(0)
    return size


def check_export(source: IO[bytes], agent: str | None, *, show: bool) -> int:
    """The check pass: read every line of ``source``, write nothing, and rewind it.
    Returns the number of records.

    Raises:
        typer.BadParameter: A line is bad (the message names it).
    """
    if not show:
        total = sum(1 for _ in read_export(source, agent=agent))
    else:
        columns = (TextColumn("Checking"), BarColumn(), DownloadColumn(), TimeRemainingColumn())
        with Progress(*columns, console=stderr_console(), transient=True) as progress:
            task = progress.add_task("check", total=_size_of(source))

            def report(done: int) -> None:
                progress.update(task, completed=done)

            total = sum(1 for _ in read_export(source, agent=agent, progress=report))
    source.seek(0)
    return total


async def import_export(
    store: MemoryStore,
    source: IO[bytes],
    agent: str | None,
    on_conflict: OnConflict,
    total: int,
    *,
    show: bool,
) -> ImportReport:
    """The write pass: stream the checked ``source`` into ``store`` (all or nothing),
    with a bar counting records up to ``total`` when ``show``."""
    if not show:
        return await store.import_records(read_export(source, agent=agent), on_conflict=on_conflict)
    columns = (TextColumn("Importing"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn())
    with Progress(*columns, console=stderr_console(), transient=False) as progress:
        task = progress.add_task("import", total=total)

        def counted() -> Iterator[Block | Message]:
            for record in read_export(source, agent=agent):
                yield record
                progress.advance(task)

        return await store.import_records(counted(), on_conflict=on_conflict)
