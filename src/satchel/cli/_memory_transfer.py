"""``satchel memory export|import|mirror|reembed``: memory in and out of the store, as
JSON lines or Markdown, and its vectors rebuilt. Registered on the ``memory`` app by
:mod:`satchel.cli._memory`."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from satchel._counts import counted
from satchel._errors import EmbeddingError
from satchel.cli._agents import AgentOption
from satchel.cli._backup import (
    check_export,
    export_target,
    import_export,
    import_source,
    write_export,
)
from satchel.cli._common import JsonFlag, echo_json, stderr_console
from satchel.cli._embed_options import EmbedBaseUrlOption, EmbedderOption, resolve_embedder
from satchel.cli._markdown import export_folder, import_folder
from satchel.cli._mirror import mirror_folder
from satchel.cli._store import DbOption, open_store, run_on_store
from satchel.memory import GatedStore, MemoryStore, OnConflict

__all__ = ["ExportFormat", "export", "import_", "mirror", "reembed"]


class ExportFormat(StrEnum):
    """What ``memory export`` writes."""

    JSONL = "jsonl"
    MARKDOWN = "markdown"


AllAgentsFlag = Annotated[
    bool,
    typer.Option(
        "--all-agents",
        help="Every agent's records: export the whole store, or restore such an export.",
    ),
]


def export(
    file: Annotated[
        Path | None,
        typer.Argument(
            metavar="FILE|DIR",
            help="Where to write: a file (stdout when left out), or with --format markdown "
            "a folder.",
        ),
    ] = None,
    db: DbOption = None,
    agent: AgentOption = "default",
    all_agents: AllAgentsFlag = False,
    format_: Annotated[
        ExportFormat,
        typer.Option(
            "--format",
            case_sensitive=False,
            help="jsonl: every record, for restoring; markdown: one file per block, to read, "
            "edit and keep in git (see docs/memory.md).",
        ),
    ] = ExportFormat.JSONL,
) -> None:
    """Export the agent's blocks and messages (or, with --all-agents, the whole store)
    as JSON lines, or its blocks as a folder of Markdown files."""
    if format_ is ExportFormat.MARKDOWN:
        if file is None or all_agents:
            raise typer.BadParameter(
                "--format markdown writes one agent's blocks into a folder: give DIR, "
                "without --all-agents.",
                param_hint="'--format'",
            )
        export_folder(db, agent, file)
        return
    if file is not None and file.is_dir():
        raise typer.BadParameter(
            f"{str(file)!r} is a folder; give a file, or --format markdown.", param_hint="'FILE'"
        )
    whose = None if all_agents else agent
    with export_target(file) as out:
        count = run_on_store(
            lambda s: write_export(s, whose, out), open_store(db, create=False, embed=False)
        )
    if file is not None:
        stderr_console().print(f"Exported {counted(count, 'record')} to {file}.")


def import_(
    file: Annotated[
        str, typer.Argument(metavar="FILE", help="A file written by export; `-` reads stdin.")
    ],
    db: DbOption = None,
    agent: AgentOption = "default",
    all_agents: AllAgentsFlag = False,
    on_conflict: Annotated[
        OnConflict,
        typer.Option(
            "--on-conflict",
            help="When a record exists already: error (import nothing), skip it, or replace it.",
        ),
    ] = "error",
    as_json: JsonFlag = False,
) -> None:
    """Import blocks and messages from an export, exactly as they were (ids, versions,
    timestamps, shares), then embed them for search. The export must be the agent's own
    (its header names --agent); --all-agents restores a whole-store export. All or
    nothing: the file is checked in full first, then written in one transaction.

    A folder written by `export --format markdown` is read back instead: each edited
    file updates its block through the permission gate, with the exported version as
    the expected one (a block changed since is reported as a conflict, exit 1); new
    files become new blocks; nothing is deleted."""
    if Path(file).is_dir():
        import_folder(db, agent, Path(file), as_json=as_json)
        return
    whose = None if all_agents else agent
    with import_source(file) as source:
        show = not as_json and stderr_console().is_terminal
        total = check_export(source, whose, show=show)
        report = run_on_store(
            lambda store: import_export(store, source, whose, on_conflict, total, show=show),
            open_store(db, create=True),
        )
    if as_json:
        echo_json(report.model_dump())
        return
    skipped = f" ({report.skipped} skipped: stored already)" if report.skipped else ""
    stderr_console().print(
        f"Imported {counted(report.blocks + report.messages, 'record')}{skipped}."
    )


def mirror(
    folder: Annotated[
        Path,
        typer.Argument(
            metavar="DIR", file_okay=False, help="The folder of Markdown files to keep in step."
        ),
    ],
    db: DbOption = None,
    agent: AgentOption = "default",
) -> None:
    """Keep a folder of Markdown files (the layout of `export --format markdown`) in
    step with the agent's memory until Ctrl-C: changes to memory are written out, and
    edits to the files are read in through the permission gate. An edit to a block that
    changed in memory since is a conflict: both sides are kept (memory's in
    DIR/conflicts/) and it is reported. Deleting a file deletes nothing."""
    mirror_folder(db, agent, folder)


def reembed(
    db: DbOption = None,
    embedder: EmbedderOption = None,
    embed_base_url: EmbedBaseUrlOption = None,
    missing: Annotated[
        bool,
        typer.Option(
            "--missing",
            help="Embed only the blocks and messages without a vector (those written "
            "while the embedder failed).",
        ),
    ] = False,
    batch_size: Annotated[
        int, typer.Option("--batch-size", min=1, max=4096, help="Texts per embedding call.")
    ] = 64,
) -> None:
    """Embed every block and message again, with a progress bar: after a model change
    (--embedder: the database moves to that model, its old vectors dropped), to fill
    in missing vectors, or to renew them all.

    A move to another model resumes where it stopped: after Ctrl-C or a failing
    provider, run the same command again and only what is left is embedded. Until it
    ends, search works by keywords for what has no vector yet."""
    chosen = resolve_embedder(embedder, embed_base_url)
    if chosen is None:
        raise typer.BadParameter(
            "re-embedding needs an embedder, not none.", param_hint="'--embedder'"
        )
    try:
        done = run_on_store(
            lambda store: _reembed(
                store, missing=missing, batch_size=batch_size, asked=embedder is not None
            ),
            open_store(db, create=False, embedder=chosen),
        )
    except KeyboardInterrupt:
        stderr_console().print("Interrupted: run the same command again to go on where it stopped.")
        raise typer.Exit(130) from None
    except EmbeddingError as exc:
        raise EmbeddingError(
            f"{exc.message.rstrip('.')}; once it works, run the same command again to go "
            "on where it stopped.",
            details=exc.details,
        ) from exc
    stderr_console().print(f"Embedded {counted(done, 'text')}.")


async def _reembed(store: MemoryStore, *, missing: bool, batch_size: int, asked: bool) -> int:
    """Re-embed with a progress bar. A database of another model is moved only to an
    embedder named by ``--embedder`` (``asked``): a bare ``reembed`` never drops a
    provider's vectors for the bundled model's."""
    change = store.model_change if isinstance(store, GatedStore) else None
    if change is not None and not asked:
        raise typer.BadParameter(
            f"{change}. Name the model to embed with: the one the database holds, to renew "
            "its vectors, or another, to move it.",
            param_hint="'--embedder'",
        )
    columns = (
        TextColumn("Embedding"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=stderr_console(), transient=False) as progress:
        task = progress.add_task("embed", total=None)

        def report(done: int, total: int) -> None:
            progress.update(task, completed=done, total=total)

        if isinstance(store, GatedStore):
            return await store.reembed(progress=report, batch_size=batch_size, missing_only=missing)
        if missing:
            raise typer.BadParameter(
                f"{type(store).__name__} cannot embed only what is missing.",
                param_hint="'--missing'",
            )
        return await store.reembed(progress=report, batch_size=batch_size)
