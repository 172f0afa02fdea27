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
gives the same bytes. The format is :func:`satchel.memory.read_export`'s; streaming, the two import
passes and the progress bars are :mod:`satchel.cli._backup`.
"""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import Annotated, Any, TypeVar

import typer
from rich.table import Table
from rich.text import Text

from satchel._counts import counted
from satchel._errors import (
    AlreadyExistsError,
    NotFoundError,
    ToolRetry,
)
from satchel.builtin import TimeParser
from satchel.builtin._block_moves import archive_into, load_copy
from satchel.cli import _agents
from satchel.cli._agents import AgentOption, TemplateOption, as_agent
from satchel.cli._common import JsonFlag, echo_json, stdout_console
from satchel.cli._embed_options import EmbedBaseUrlOption, EmbedderOption, resolve_embedder
from satchel.cli._memory_blocks import blocks, level_of, size_text
from satchel.cli._memory_merge import merge
from satchel.cli._memory_transfer import export, import_, mirror, reembed
from satchel.cli._store import DbOption, open_store, run_on_store
from satchel.memory import (
    Block,
    BlockKind,
    Domain,
    MemoryStore,
    Message,
    Permission,
    RequestOrigin,
    SearchFilters,
    SearchHit,
    Unset,
    is_relevant,
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
app.command("blocks")(blocks)

YesFlag = Annotated[
    bool,
    typer.Option("--yes", "-y", help="Give consent to writes that need a human's consent."),
]
LabelArgument = Annotated[str, typer.Argument(metavar="LABEL", help="The block's label.")]


def _value(text: str) -> str:
    return sys.stdin.read() if text == "-" else text


# --- presenting -----------------------------------------------------------------------


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


@app.command("agents")
def agents(db: DbOption = None, as_json: JsonFlag = False) -> None:
    """List the agents of the database: their blocks, archival entries and messages,
    when each was created and last active, the template it started from, and for a
    project's memory (``serve --agent auto``) the project and its root."""
    found, projects = run_on_store(
        _agents.agents_and_projects, open_store(db, create=False, embed=False)
    )
    _agents.print_agents(found, projects=projects, as_json=as_json)


@app.command("show")
def show(
    label: LabelArgument,
    db: DbOption = None,
    agent: AgentOption = "default",
    as_json: JsonFlag = False,
) -> None:
    """Print one block: its facts, description and full value."""
    block = run_on_store(
        lambda s: s.get_block(agent, label), open_store(db, create=False, embed=False)
    )
    if as_json:
        echo_json(_dump(block))
        return
    console = stdout_console()
    facts = (
        f"{block.address_for(agent)}: {block.kind.value}, {size_text(block)} chars, "
        f"{level_of(block, agent).value}, version {block.version}, updated "
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

    block, previous = run_on_store(
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
    block = run_on_store(
        lambda s: s.append_to_block(agent, label, added),
        as_agent(open_store(db, create=True, consent=yes), agent, template),
    )
    _done(as_json, block, f"Appended {len(added)} chars to {label!r} (now {size_text(block)}).")


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
    block = run_on_store(
        lambda s: s.configure_block(
            agent, label, permission=permission, char_limit=limit, description=description
        ),
        as_agent(open_store(db, create=False, embed=False), agent, template),
    )
    shown = "no limit" if block.char_limit is None else f"limit {block.char_limit}"
    line = f"Configured {label!r}: {block.permission.value}, {shown}, version {block.version}."
    _done(as_json, block, line)


AsOption = Annotated[
    str | None,
    typer.Option(
        "--as",
        metavar="LABEL",
        help="Copy under this label instead of moving the block itself.",
    ),
]


@app.command("archive")
def archive(
    label: LabelArgument,
    target: AsOption = None,
    db: DbOption = None,
    agent: AgentOption = "default",
    template: TemplateOption = None,
    yes: YesFlag = False,
    as_json: JsonFlag = False,
) -> None:
    """Move a block out of context into archival memory.

    With --as, its text is written to that archival entry (created, or overwritten under
    the block's overwrite rule) and the block is removed.
    """
    if target is None:
        block = run_on_store(
            lambda s: s.set_kind(agent, label, BlockKind.ARCHIVAL),
            as_agent(open_store(db, create=False, consent=yes), agent, template),
        )
        _done(as_json, block, f"Archived {label!r}.")
        return

    async def into(store: MemoryStore) -> Block:
        _, entry = await archive_into(store, agent, label, target, _CLI_ORIGIN)
        return entry

    entry = _run_move(into, as_agent(open_store(db, create=False, consent=yes), agent, template))
    _done(as_json, entry, f"Archived {label!r} as {target!r}.")


@app.command("load")
def load(
    label: LabelArgument,
    target: AsOption = None,
    db: DbOption = None,
    agent: AgentOption = "default",
    template: TemplateOption = None,
    yes: YesFlag = False,
    as_json: JsonFlag = False,
) -> None:
    """Load an archival block into context as working memory.

    With --as, a working block of that label is created from the entry, which stays in
    archival memory.
    """
    if target is None:
        block = run_on_store(
            lambda s: s.set_kind(agent, label, BlockKind.WORKING),
            as_agent(open_store(db, create=False, consent=yes), agent, template),
        )
        _done(as_json, block, f"Loaded {label!r} into working memory.")
        return
    copy = _run_move(
        lambda s: load_copy(s, agent, label, target),
        as_agent(open_store(db, create=False, consent=yes), agent, template),
    )
    _done(as_json, copy, f"Loaded {label!r} into working memory as {target!r}.")


_CLI_ORIGIN = RequestOrigin(channel="cli")


def _run_move(
    work: Callable[[MemoryStore], Awaitable[_T]], store_opener: Awaitable[MemoryStore]
) -> _T:
    """:func:`_run` for the block moves the ``context`` tool shares, whose refusals
    (:class:`ToolRetry`) name the tool's ``target_label``: here it is ``--as``."""
    try:
        return run_on_store(work, store_opener)
    except ToolRetry as exc:
        raise typer.BadParameter(exc.message.replace("target_label", "--as")) from exc


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
    tool_traffic: Annotated[
        bool,
        typer.Option("--tool-traffic", help="Also tool calls and tool results (left out)."),
    ] = False,
    db: DbOption = None,
    embedder: EmbedderOption = None,
    embed_base_url: EmbedBaseUrlOption = None,
    agent: AgentOption = "default",
    as_json: JsonFlag = False,
) -> None:
    """Hybrid search of the agent's memory: archival entries, conversations and the lines
    of core and working blocks. Hits under the relevance floor are marked; what made
    the search keyword-only (a failing embedder, another model's vectors) is a warning
    on stderr."""
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
        tool_traffic=tool_traffic,
    )
    chosen = resolve_embedder(embedder, embed_base_url)
    hits = run_on_store(
        lambda s: s.search(agent, query, domains=domain, filters=filters, limit=limit),
        open_store(db, create=False, embedder=chosen, embed=chosen is not None),
    )
    for warning in getattr(hits, "warnings", ()):
        typer.echo(f"satchel: warning: {warning}", err=True)
    if as_json:
        echo_json([{**_dump(h), "relevant": is_relevant(h)} for h in hits])
        return
    console = stdout_console()
    if not hits:
        console.print("No matches.")
        return
    if not any(is_relevant(h) for h in hits):
        console.print(Text(f"Nothing in memory matches {query!r}; the closest entries:"))
    table = Table(title=f"{counted(len(hits), 'hit')} for {query!r}", title_justify="left")
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
            f"{hit.score:.3f}" if is_relevant(hit) else f"{hit.score:.3f} (unrelated)",
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


app.command("export")(export)
app.command("import")(import_)
app.command("mirror")(mirror)
app.command("reembed")(reembed)
app.command("merge")(merge)
