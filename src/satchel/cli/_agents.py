"""What ``satchel serve`` and ``satchel memory`` share about agents: the ``--template``
option that chooses a new agent's starting blocks, setting an agent up before a command
acts as it, and the ``satchel memory agents`` table."""

from __future__ import annotations

from collections.abc import Awaitable, Coroutine, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table
from rich.text import Text

from satchel.cli._common import echo_json, stdout_console
from satchel.memory import (
    AgentSummary,
    AgentTemplate,
    MemoryStore,
    Project,
    default_template,
    empty_template,
    load_template,
    project_of,
)

__all__ = [
    "AgentOption",
    "TemplateOption",
    "agents_and_projects",
    "as_agent",
    "print_agents",
    "resolve_template",
    "unused_hint",
]

AgentOption = Annotated[
    str,
    typer.Option("--agent", "-a", envvar="SATCHEL_AGENT", help="The agent whose memory to use."),
]
"""The ``--agent`` option of ``satchel memory`` (``SATCHEL_AGENT``, as for ``serve``)."""

TemplateOption = Annotated[
    str | None,
    typer.Option(
        "--template",
        metavar="FILE|default|none",
        envvar="SATCHEL_TEMPLATE",
        help="The blocks a new agent starts with: a TOML or JSON file, `default` "
        "(persona and human) or `none`. Applied once, the first time the agent is used.",
        show_default=False,
    ),
]
"""The ``--template`` option, shared by ``satchel serve`` and ``satchel memory``."""


def resolve_template(value: str | None) -> AgentTemplate:
    """The template ``--template`` names: ``None`` or ``default`` for
    :func:`~satchel.memory.default_template`, ``none`` for
    :func:`~satchel.memory.empty_template`, else a file (see
    :func:`~satchel.memory.load_template`; write ``./none`` for a file so named).

    Raises:
        SatchelUsageError: The file is missing or invalid (one line naming the file
            and the field).
    """
    if value is None or value.strip() in ("", "default"):
        return default_template()
    if value.strip() == "none":
        return empty_template()
    return load_template(Path(value).expanduser())


def as_agent(
    opener: Awaitable[MemoryStore], agent: str, template: str | None
) -> Awaitable[MemoryStore]:
    """``opener`` (a store being opened), then ``agent`` set up in it with its starting
    blocks, the first time only (see :meth:`~satchel.memory.MemoryStore.ensure_agent`):
    what a command that acts as an agent opens.

    Raises:
        SatchelUsageError: ``template`` names a missing or invalid file (raised at
            once, before the store is opened).
    """
    try:
        chosen = resolve_template(template)
    except BaseException:
        if isinstance(opener, Coroutine):
            opener.close()  # never awaited: close it, so no warning is printed
        raise

    async def open_and_set_up() -> MemoryStore:
        store = await opener
        try:
            await store.ensure_agent(agent, chosen)
        except BaseException:
            await store.close()
            raise
        return store

    return open_and_set_up()


def unused_hint(known: Sequence[AgentSummary]) -> str:
    """A sentence for an empty ``memory blocks`` listing of an agent not yet set up
    (``known`` is what :meth:`~satchel.memory.MemoryStore.describe_agents` said of it)."""
    if any(summary.initialised for summary in known):
        return ""
    return (
        " It has not been used yet: `satchel serve` or a command that writes sets it up "
        "with its starting blocks (persona and human, or --template's)."
    )


async def agents_and_projects(
    store: MemoryStore,
) -> tuple[list[AgentSummary], dict[str, Project]]:
    """Every agent of ``store``, and the project of each that is a project's memory."""
    found = await store.describe_agents()
    projects: dict[str, Project] = {}
    for summary in found:
        project = await project_of(store, summary.name)
        if project is not None:
            projects[summary.name] = project
    return found, projects


def print_agents(
    found: Sequence[AgentSummary],
    *,
    projects: Mapping[str, Project] | None = None,
    as_json: bool,
) -> None:
    """Print ``satchel memory agents``: a table, or JSON (with a ``project`` object,
    ``null`` for an agent that is no project's memory)."""
    projects = projects or {}
    if as_json:
        echo_json(
            [
                {**summary.model_dump(mode="json"), "project": _project_json(projects, summary)}
                for summary in found
            ]
        )
        return
    console = stdout_console()
    if not found:
        console.print("No agents yet.")
        return
    title = f"{len(found)} agent{'' if len(found) == 1 else 's'}"
    table = Table(title=title, title_justify="left")
    table.add_column("Agent", style="bold", no_wrap=True)
    for column in ("Blocks", "Archival", "Messages"):
        table.add_column(column, justify="right")
    table.add_column("Created", no_wrap=True)
    table.add_column("Last active", no_wrap=True)
    table.add_column("Template")
    if projects:
        table.add_column("Project (root)")
    for summary in found:
        project = projects.get(summary.name)
        extra = [_project_cell(project)] if projects else []
        table.add_row(
            Text(summary.name),
            str(summary.blocks),
            str(summary.archival),
            str(summary.messages),
            _when(summary.created_at),
            _when(summary.last_active),
            Text(summary.template or ("-" if summary.initialised else "(not set up)")),
            *extra,
        )
    console.print(table)


def _project_json(
    projects: Mapping[str, Project], summary: AgentSummary
) -> dict[str, str | None] | None:
    project = projects.get(summary.name)
    if project is None:
        return None
    return {"key": project.key, "root": project.root or None, "remote": project.remote}


def _project_cell(project: Project | None) -> Text:
    if project is None:
        return Text("-")
    return Text(f"{project.key} ({project.root})" if project.root else project.key)


def _when(moment: datetime | None) -> str:
    return f"{moment:%Y-%m-%d %H:%M}" if moment is not None else "-"
