"""``satchel memory``: inspect and edit an agent's memory from the terminal.

Every command takes ``--db`` (a path, or ``SATCHEL_DB``; default the store's default
file) and ``--agent`` (or ``SATCHEL_AGENT``; default ``default``), prints tables, or JSON
with ``--json``. Commands that only read refuse a database file that does not exist (a
typo in ``--db`` must not look like an empty memory); commands that write create it.

A command that writes as an agent first sets a new agent up with its starting blocks,
as ``satchel serve`` does (``ensure_agent``: persona and human, or ``--template``'s);
commands that only read never write, and show an agent no one used yet as empty.

Export and import use JSON lines: a header line naming the agent, then one line per
block the agent owns (every field: id, version, timestamps, shares, ...) and one per
conversation message, oldest first. Importing into a fresh database and exporting again
gives the same bytes. The format is :mod:`satchel.cli._export`; streaming, the two import
passes and the progress bars are :mod:`satchel.cli._backup`.
"""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, TypeVar

import anyio
import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table
from rich.text import Text

from satchel._errors import (
    AlreadyExistsError,
    ConsentRequiredError,
    NotFoundError,
    ToolRetry,
)
from satchel.builtin import TimeParser
from satchel.cli import _agents
from satchel.cli._agents import AgentOption, TemplateOption, as_agent
from satchel.cli._backup import (
    check_export,
    export_target,
    import_export,
    import_source,
    write_export,
)
from satchel.cli._common import JsonFlag, echo_json, stderr_console, stdout_console
from satchel.cli._markdown import export_folder, import_folder
from satchel.cli._mirror import mirror_folder
from satchel.cli._store import DbOption, open_store
from satchel.memory import (
    Block,
    BlockKind,
    Domain,
    MemoryStore,
    Message,
    OnConflict,
    Permission,
    SearchFilters,
    SearchHit,
    Unset,
)

__all__ = ["app", "open_store"]

_T = TypeVar("_T")
_ROLES = ("user", "assistant", "system", "tool")
_EXCERPT_CHARS = 300

app = typer.Typer(
    name="memory",
    help="Inspect and edit memory: blocks, search, export, import and re-embedding.",
    no_args_is_help=True,
)

YesFlag = Annotated[
    bool,
    typer.Option("--yes", "-y", help="Give consent to writes that need a human's consent."),
]
LabelArgument = Annotated[str, typer.Argument(metavar="LABEL", help="The block's label.")]


def _run(work: Callable[[MemoryStore], Awaitable[_T]], store_opener: Awaitable[MemoryStore]) -> _T:
    """Open the store, run ``work`` on it, close it; a store's ``ValueError`` (a bad
    label, a bad tag) becomes a usage error."""

    async def main() -> _T:
        store = await store_opener
        try:
            return await work(store)
        finally:
            await store.close()

    try:
        return anyio.run(main)
    except ValueError as exc:
        raise typer.BadParameter(str(exc).rstrip(".") + ".") from exc
    except ConsentRequiredError as exc:
        raise ConsentRequiredError(
            f"{exc.message}. Pass --yes to give it.", details=exc.details
        ) from exc


def _value(text: str) -> str:
    return sys.stdin.read() if text == "-" else text


# --- presenting -----------------------------------------------------------------------


def _size(block: Block) -> str:
    return f"{block.chars}/{block.char_limit}" if block.char_limit is not None else str(block.chars)


def _level(block: Block, agent: str) -> Permission:
    """The permission ``agent`` acts at: the block's own, or its share's."""
    return block.permission if block.agent == agent else block.shares.get(agent, block.permission)


def _blocks_table(blocks: Sequence[Block], agent: str) -> Table:
    table = Table(title=f"{len(blocks)} blocks of {agent!r}", title_justify="left")
    table.add_column("Label", style="bold", no_wrap=True)
    table.add_column("Kind")
    table.add_column("Chars", justify="right")
    table.add_column("Permission")
    table.add_column("Ver", justify="right")
    table.add_column("Shared")
    table.add_column("Description", ratio=1)
    for block in blocks:
        if block.agent != agent:
            shared = f"from {block.agent}"
        else:
            shared = ", ".join(f"{who} ({level.value})" for who, level in block.shares.items())
        table.add_row(
            Text(block.address_for(agent)),
            block.kind.value,
            _size(block),
            _level(block, agent).value,
            str(block.version),
            Text(shared),
            Text(block.description),
        )
    return table


def _excerpt(text: str, limit: int = _EXCERPT_CHARS) -> str:
    """``text`` on one line, cut to about ``limit`` chars with how much was left out (a
    table of a 5 MB hit would take half a minute to lay out)."""
    head = " ".join(text[: limit * 4].split())
    if len(text) <= limit and len(head) <= limit:
        return head
    return f"{head[:limit].rstrip()}… ({len(text):,} chars; --json or `memory show` for all)"


def _dump(record: Block | Message | SearchHit) -> dict[str, Any]:
    return record.model_dump(mode="json")


def _done(as_json: bool, block: Block, line: str) -> None:
    if as_json:
        echo_json(_dump(block))
    else:
        stdout_console().print(Text(line))


# --- commands -------------------------------------------------------------------------


@app.command("blocks")
def blocks(
    kind: Annotated[
        BlockKind | None, typer.Option("--kind", "-k", help="Only blocks of this kind.")
    ] = None,
    db: DbOption = None,
    agent: AgentOption = "default",
    as_json: JsonFlag = False,
) -> None:
    """List the agent's blocks (its own and those shared with it)."""
    kinds = [kind] if kind is not None else None
    found, known = _run(
        lambda s: _agents.blocks_and_summary(s, agent, kinds),
        open_store(db, create=False, embed=False),
    )
    if as_json:
        echo_json([_dump(b) for b in found])
    elif not found:
        stdout_console().print(Text(f"No blocks for agent {agent!r}.{_agents.unused_hint(known)}"))
    else:
        stdout_console().print(_blocks_table(found, agent))


@app.command("agents")
def agents(db: DbOption = None, as_json: JsonFlag = False) -> None:
    """List the agents of the database: their blocks, archival entries and messages,
    when each was created and last active, the template it started from, and for a
    project's memory (``serve --agent auto``) the project and its root."""
    found, projects = _run(_agents.agents_and_projects, open_store(db, create=False, embed=False))
    _agents.print_agents(found, projects=projects, as_json=as_json)


@app.command("show")
def show(
    label: LabelArgument,
    db: DbOption = None,
    agent: AgentOption = "default",
    as_json: JsonFlag = False,
) -> None:
    """Print one block: its facts, description and full value."""
    block = _run(lambda s: s.get_block(agent, label), open_store(db, create=False, embed=False))
    if as_json:
        echo_json(_dump(block))
        return
    console = stdout_console()
    facts = (
        f"{block.address_for(agent)}: {block.kind.value}, {_size(block)} chars, "
        f"{_level(block, agent).value}, version {block.version}, updated "
        f"{block.updated_at:%Y-%m-%d %H:%M:%S} UTC"
    )
    console.print(Text(facts, style="bold"))
    if block.description:
        console.print(Text(block.description, style="italic"))
    console.print(Text(block.value), soft_wrap=True)


@app.command("set")
def set_block(
    label: LabelArgument,
    value: Annotated[str, typer.Argument(metavar="VALUE", help="The new value; `-` reads stdin.")],
    description: Annotated[
        str | None, typer.Option("--description", "-d", help="The block's description.")
    ] = None,
    kind: Annotated[
        BlockKind, typer.Option("--kind", "-k", help="The kind of a new block.")
    ] = BlockKind.CORE,
    char_limit: Annotated[
        int | None, typer.Option("--char-limit", min=0, help="The char limit of a new block.")
    ] = None,
    permission: Annotated[
        Permission, typer.Option("--permission", help="The permission of a new block.")
    ] = Permission.READ_WRITE,
    db: DbOption = None,
    agent: AgentOption = "default",
    template: TemplateOption = None,
    yes: YesFlag = False,
    as_json: JsonFlag = False,
) -> None:
    """Set a block's value, creating the block if it does not exist (--kind, --char-limit
    and --permission apply to a new block)."""
    text = _value(value)

    async def work(store: MemoryStore) -> tuple[Block, int | None]:
        try:
            before = await store.get_block(agent, label)
        except NotFoundError:
            try:
                made = await store.create_block(
                    agent,
                    label,
                    text,
                    description=description or "",
                    kind=kind,
                    permission=permission,
                    char_limit=char_limit,
                )
                return made, None
            except AlreadyExistsError:
                before = await store.get_block(agent, label)
        after = await store.update_block_text(
            agent, label, text, expected_version=before.version, description=description
        )
        return after, before.chars

    block, previous = _run(
        work, as_agent(open_store(db, create=True, consent=yes), agent, template)
    )
    if previous is None:
        line = f"Created {block.kind.value} block {label!r} ({block.chars} chars)."
    else:
        line = f"Set {label!r}: {previous} → {block.chars} chars (version {block.version})."
    _done(as_json, block, line)


@app.command("append")
def append(
    label: LabelArgument,
    text: Annotated[str, typer.Argument(metavar="TEXT", help="The text to add; `-` reads stdin.")],
    db: DbOption = None,
    agent: AgentOption = "default",
    template: TemplateOption = None,
    yes: YesFlag = False,
    as_json: JsonFlag = False,
) -> None:
    """Append TEXT to a block, on a new line."""
    added = _value(text)
    block = _run(
        lambda s: s.append_to_block(agent, label, added),
        as_agent(open_store(db, create=True, consent=yes), agent, template),
    )
    _done(as_json, block, f"Appended {len(added)} chars to {label!r} (now {_size(block)}).")


@app.command("configure")
def configure(
    label: LabelArgument,
    permission: Annotated[
        Permission | None, typer.Option("--permission", help="The block's new permission.")
    ] = None,
    char_limit: Annotated[
        int | None,
        typer.Option("--limit", "--char-limit", min=0, help="The block's new char limit."),
    ] = None,
    no_limit: Annotated[
        bool, typer.Option("--no-limit", help="Remove the block's char limit.")
    ] = False,
    description: Annotated[
        str | None, typer.Option("--description", "-d", help="The block's new description.")
    ] = None,
    db: DbOption = None,
    agent: AgentOption = "default",
    template: TemplateOption = None,
    as_json: JsonFlag = False,
) -> None:
    """Change a block's permission, char limit or description, keeping its text,
    shares and search vectors. An operator's command: it needs no consent and can
    make a read-only block writable, but only for the block's owner (--agent)."""
    if no_limit and char_limit is not None:
        raise typer.BadParameter("give --limit or --no-limit, not both.", param_hint="'--limit'")
    if permission is None and char_limit is None and not no_limit and description is None:
        raise typer.BadParameter(
            "nothing to change: give --permission, --limit, --no-limit or --description."
        )
    limit: int | Unset | None = (
        None if no_limit else Unset.UNSET if char_limit is None else char_limit
    )
    block = _run(
        lambda s: s.configure_block(
            agent, label, permission=permission, char_limit=limit, description=description
        ),
        as_agent(open_store(db, create=False, embed=False), agent, template),
    )
    shown = "no limit" if block.char_limit is None else f"limit {block.char_limit}"
    line = f"Configured {label!r}: {block.permission.value}, {shown}, version {block.version}."
    _done(as_json, block, line)


@app.command("archive")
def archive(
    label: LabelArgument,
    db: DbOption = None,
    agent: AgentOption = "default",
    template: TemplateOption = None,
    yes: YesFlag = False,
    as_json: JsonFlag = False,
) -> None:
    """Move a block out of context into archival memory."""
    block = _run(
        lambda s: s.set_kind(agent, label, BlockKind.ARCHIVAL),
        as_agent(open_store(db, create=False, consent=yes), agent, template),
    )
    _done(as_json, block, f"Archived {label!r}.")


@app.command("load")
def load(
    label: LabelArgument,
    db: DbOption = None,
    agent: AgentOption = "default",
    template: TemplateOption = None,
    yes: YesFlag = False,
    as_json: JsonFlag = False,
) -> None:
    """Load an archival block into context as working memory."""
    block = _run(
        lambda s: s.set_kind(agent, label, BlockKind.WORKING),
        as_agent(open_store(db, create=False, consent=yes), agent, template),
    )
    _done(as_json, block, f"Loaded {label!r} into working memory.")


@app.command("search")
def search(
    query: Annotated[str, typer.Argument(metavar="QUERY", help="What to look for.")],
    domain: Annotated[Domain, typer.Option("--domain", help="Where to look.")] = Domain.ALL,
    limit: Annotated[int, typer.Option("--limit", "-n", min=1, max=1000, help="Most hits.")] = 10,
    role: Annotated[
        str | None,
        typer.Option(
            "--role", metavar="user|assistant|system|tool", help="Only this role's messages."
        ),
    ] = None,
    since: Annotated[
        str | None, typer.Option("--since", help="From this time: 2026-11-01, 'yesterday'...")
    ] = None,
    until: Annotated[str | None, typer.Option("--until", help="Up to this time.")] = None,
    tag: Annotated[
        list[str] | None, typer.Option("--tag", help="Only with this tag; repeatable.")
    ] = None,
    label: Annotated[
        list[str] | None,
        typer.Option("--label", help="Only the block with this label; repeatable."),
    ] = None,
    db: DbOption = None,
    agent: AgentOption = "default",
    as_json: JsonFlag = False,
) -> None:
    """Hybrid search of the agent's archival memory and conversations."""
    if role is not None and role not in _ROLES:
        raise typer.BadParameter(
            f"{role!r} is not a role; choose one of {', '.join(_ROLES)}.", param_hint="'--role'"
        )
    start, end = _time(since, "--since", end=False), _time(until, "--until", end=True)
    if start is not None and end is not None and start > end:
        raise typer.BadParameter("--since is after --until.", param_hint="'--since'")
    filters = SearchFilters(
        role=role,
        start_time=start,
        end_time=end,
        tags=tuple(tag) if tag else None,
        labels=tuple(label) if label else None,
    )
    hits = _run(
        lambda s: s.search(agent, query, domains=domain, filters=filters, limit=limit),
        open_store(db, create=False),
    )
    if as_json:
        echo_json([_dump(h) for h in hits])
        return
    console = stdout_console()
    if not hits:
        console.print("No matches.")
        return
    table = Table(title=f"{len(hits)} hits for {query!r}", title_justify="left")
    table.add_column("#", justify="right")
    table.add_column("Where", no_wrap=True)
    table.add_column("When", no_wrap=True)
    table.add_column("Score", justify="right")
    table.add_column("Text", ratio=1)
    for rank, hit in enumerate(hits, 1):
        where = hit.label if hit.label is not None else f"{hit.role} message"
        table.add_row(
            str(rank),
            Text(where),
            f"{hit.created_at:%Y-%m-%d %H:%M}",
            f"{hit.score:.3f}",
            Text(_excerpt(hit.text)),
        )
    console.print(table)


def _time(text: str | None, option: str, *, end: bool) -> datetime | None:
    if text is None:
        return None
    try:
        return TimeParser().parse_sync(text, end=end, field=option)
    except ToolRetry as exc:
        raise typer.BadParameter(exc.message, param_hint=f"'{option}'") from None


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


@app.command("export")
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
        count = _run(
            lambda s: write_export(s, whose, out), open_store(db, create=False, embed=False)
        )
    if file is not None:
        stderr_console().print(f"Exported {count} records to {file}.")


@app.command("import")
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
        report = _run(
            lambda store: import_export(store, source, whose, on_conflict, total, show=show),
            open_store(db, create=True),
        )
    if as_json:
        echo_json(report.model_dump())
        return
    skipped = f" ({report.skipped} skipped: stored already)" if report.skipped else ""
    stderr_console().print(f"Imported {report.blocks + report.messages} records{skipped}.")


@app.command("mirror")
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


@app.command("reembed")
def reembed(db: DbOption = None) -> None:
    """Embed every block and message again with the local model (after a model change,
    or to fill in missing vectors), with a progress bar."""
    done = _run(_reembed, open_store(db, create=False))
    stderr_console().print(f"Embedded {done} texts.")


async def _reembed(store: MemoryStore) -> int:
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

        return await store.reembed(progress=report)
