"""``satchel agent import|export``: Letta Agent Files (``.af``) in and out of memory
(the library side is :mod:`satchel.agentfile`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn
from rich.table import Table
from rich.text import Text

from satchel._counts import counted
from satchel._errors import InvalidInputError
from satchel.agentfile import (
    AgentFileReport,
    LettaAgentFile,
    check_document,
    export_agent_file,
    import_document,
    read_agent_file,
)
from satchel.cli._common import JsonFlag, echo_json, stderr_console, stdout_console
from satchel.cli._store import DbOption, open_store, run_on_store
from satchel.memory import MemoryStore

__all__ = ["app", "export", "import_"]

app = typer.Typer(
    name="agent",
    help="Import and export agents as Letta Agent Files (.af).",
    no_args_is_help=True,
)

_PROGRESS_FROM = 500
"""Records from which an import shows a progress bar (on a terminal)."""


@app.command("import")
def import_(
    file: Annotated[
        Path, typer.Argument(metavar="FILE.af", help="The agent file to import.", dir_okay=False)
    ],
    as_name: Annotated[
        str | None,
        typer.Option(
            "--as", metavar="NAME", help="The agent's name in satchel (default: its own)."
        ),
    ] = None,
    db: DbOption = None,
    as_json: JsonFlag = False,
) -> None:
    """Create an agent from a Letta Agent File: its blocks, archival passages and
    messages, with its system prompt, tool rules, tools and MCP servers kept for
    `satchel agent export`. Code in the file is never run: each tool is listed with
    how to supply it (--tools), each MCP server as a --mount. All or nothing: the file
    is checked in full before anything is written."""
    document = _checked(file, as_name)
    total = _record_count(document)
    show = not as_json and stderr_console().is_terminal and total >= _PROGRESS_FROM
    report = run_on_store(
        lambda store: _import(store, document, as_name, show=show, total=total),
        open_store(db, create=True),
    )
    if as_json:
        echo_json(report.model_dump(mode="json"))
        return
    print_report(report, stdout_console())


@app.command("export")
def export(
    name: Annotated[str, typer.Argument(metavar="NAME", help="The agent to export.")],
    file: Annotated[
        Path, typer.Argument(metavar="FILE.af", help="Where to write it.", dir_okay=False)
    ],
    db: DbOption = None,
) -> None:
    """Write an agent as a Letta Agent File (Letta's current shape): its blocks,
    archival entries (as passages) and conversation; for an imported agent also its
    system prompt, tool rules, tools, MCP servers and the agents imported with it."""
    if file.is_dir():
        raise typer.BadParameter(f"{str(file)!r} is a folder.", param_hint="'FILE.af'")
    written = run_on_store(
        lambda store: export_agent_file(store, name, file),
        open_store(db, create=False, embed=False),
    )
    blocks = len(written.blocks)
    messages = sum(len(agent.messages) for agent in written.agents)
    stderr_console().print(
        f"Exported {counted(len(written.agents), 'agent')} ({counted(blocks, 'block')}, "
        f"{counted(len(written.passages), 'passage')}, {counted(messages, 'message')}, "
        f"{counted(len(written.tools), 'tool')}) to {file}."
    )


def _checked(file: Path, name: str | None) -> LettaAgentFile:
    """The file, read and checked in full before any store is opened."""
    try:
        document = read_agent_file(file)
        check_document(document, name=name)
    except InvalidInputError as exc:
        raise typer.BadParameter(f"{exc.message}.", param_hint="'FILE.af'") from None
    return document


def _record_count(document: LettaAgentFile) -> int:
    messages = sum(len(agent.messages) for agent in document.agents)
    return len(document.blocks) + len(document.passages) + messages + len(document.agents)


async def _import(
    store: MemoryStore, document: LettaAgentFile, name: str | None, *, show: bool, total: int
) -> AgentFileReport:
    if not show:
        return await import_document(store, document, name=name)
    columns = (TextColumn("Importing"), BarColumn(), MofNCompleteColumn())
    with Progress(*columns, console=stderr_console(), transient=True) as progress:
        task = progress.add_task("import", total=total)

        def report(done: int, all_records: int) -> None:
            progress.update(task, completed=done, total=all_records)

        return await import_document(store, document, name=name, progress=report)


def print_report(report: AgentFileReport, console: Console) -> None:
    """Print what an import did: the counts, then the tools and servers to see to."""
    agents = ", ".join(report.agents)
    console.print(
        Text(
            f"Imported {agents}: {counted(report.blocks, 'block')}, "
            f"{counted(report.passages, 'passage')}, {counted(report.messages, 'message')}, "
            f"{counted(report.rules, 'tool rule')}"
            + (f" (+{report.kept_rules} kept for export only)" if report.kept_rules else "")
            + "."
        )
    )
    if report.tools:
        table = Table(
            title=f"{counted(len(report.tools), 'tool')} (code is never run)", title_justify="left"
        )
        table.add_column("Tool", style="bold", no_wrap=True)
        table.add_column("Type")
        table.add_column("What to do")
        for tool in report.tools:
            table.add_row(Text(tool.name), Text(tool.tool_type or "-"), Text(tool.advice))
        console.print(table)
    if report.servers:
        table = Table(title="MCP servers: mount them with", title_justify="left")
        table.add_column("Server", style="bold")
        table.add_column("Option")
        for server in report.servers:
            option = f"--mount {server.mount!r}" if server.mount else "(no address in the file)"
            table.add_row(Text(server.name), Text(option))
        console.print(table)
    if report.kept:
        kept = ", ".join(f"{key} ({count})" for key, count in report.kept.items())
        console.print(Text(f"Kept for export only: {kept}."))
