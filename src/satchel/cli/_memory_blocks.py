"""``satchel memory blocks``: one page of an agent's blocks, as a table or JSON.

The listing is :meth:`~satchel.memory.MemoryStore.list_blocks_page`'s: the order of
``list_blocks`` (kind, owner, label), ``--offset`` blocks skipped, at most ``--limit``
shown (50 unless told). Only the page is read, so an agent with 100,000 archival
entries lists as fast as one with ten. Under the table a footer says which blocks were
shown and the ``--offset`` of the next page; ``--json`` prints the page with ``total``
and ``next_offset`` (``null`` on the last page).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated

import typer
from rich.table import Table
from rich.text import Text

from satchel._counts import counted
from satchel._errors import InvalidInputError
from satchel.cli import _agents
from satchel.cli._agents import AgentOption
from satchel.cli._common import JsonFlag, echo_json, stdout_console
from satchel.cli._store import DbOption, open_store, run_on_store
from satchel.memory import (
    MAX_PAGE_LIMIT,
    AgentSummary,
    Block,
    BlockKind,
    BlockPage,
    MemoryStore,
    Permission,
)

__all__ = ["DEFAULT_LIMIT", "blocks", "level_of", "page_footer", "size_text"]

DEFAULT_LIMIT = 50
"""How many blocks ``satchel memory blocks`` shows without ``--limit``."""


def size_text(block: Block) -> str:
    """``chars/limit``, or ``chars`` for a block with no limit."""
    return f"{block.chars}/{block.char_limit}" if block.char_limit is not None else str(block.chars)


def level_of(block: Block, agent: str) -> Permission:
    """The permission ``agent`` acts at: the block's own, or its share's."""
    return block.permission if block.agent == agent else block.shares.get(agent, block.permission)


def _blocks_table(found: Sequence[Block], agent: str, total: int) -> Table:
    table = Table(title=f"{counted(total, 'block')} of {agent!r}", title_justify="left")
    table.add_column("Label", style="bold", no_wrap=True)
    table.add_column("Kind")
    table.add_column("Chars", justify="right")
    table.add_column("Permission")
    table.add_column("Ver", justify="right")
    table.add_column("Shared")
    table.add_column("Description", ratio=1)
    for block in found:
        if block.agent != agent:
            shared = f"from {block.agent}"
        else:
            shared = ", ".join(f"{who} ({level.value})" for who, level in block.shares.items())
        table.add_row(
            Text(block.address_for(agent)),
            block.kind.value,
            size_text(block),
            level_of(block, agent).value,
            str(block.version),
            Text(shared),
            Text(block.description),
        )
    return table


def page_footer(page: BlockPage) -> str | None:
    """``showing 51–100 of 240; next: --offset 100`` for a page that is not the whole
    listing; ``None`` when it is."""
    if page.offset == 0 and page.next_offset is None:
        return None
    first, last = page.offset + 1, page.offset + len(page.blocks)
    following = page.next_offset
    after = f"; next: --offset {following}" if following is not None else " (the last page)"
    return f"showing {first}–{last} of {page.total}{after}"


def _past_the_end(page: BlockPage) -> str:
    last_page = (page.total - 1) // page.limit * page.limit
    return (
        f"No blocks at --offset {page.offset}: the listing has {page.total} "
        f"(its last page starts at --offset {last_page})."
    )


async def _page_and_summary(
    store: MemoryStore,
    agent: str,
    kinds: list[BlockKind] | None,
    offset: int,
    limit: int,
) -> tuple[BlockPage, list[AgentSummary]]:
    """The page, and what the store knows of ``agent`` (for an empty listing's hint).

    Raises:
        typer.BadParameter: ``offset`` or ``limit`` is out of range, with the store's
            words and the option's name.
    """
    try:
        page = await store.list_blocks_page(agent, kinds=kinds, offset=offset, limit=limit)
    except InvalidInputError as exc:
        option = "--limit" if "limit" in exc.details else "--offset"
        raise typer.BadParameter(exc.message, param_hint=f"'{option}'") from exc
    return page, await store.describe_agents(agent)


def blocks(
    kind: Annotated[
        BlockKind | None, typer.Option("--kind", "-k", help="Only blocks of this kind.")
    ] = None,
    offset: Annotated[
        int, typer.Option("--offset", help="Skip this many blocks of the listing first.")
    ] = 0,
    limit: Annotated[
        int,
        typer.Option("--limit", "-n", help=f"The most blocks to show (1-{MAX_PAGE_LIMIT})."),
    ] = DEFAULT_LIMIT,
    db: DbOption = None,
    agent: AgentOption = "default",
    as_json: JsonFlag = False,
) -> None:
    """List the agent's blocks (its own and those shared with it), a page at a time.

    Core blocks come first, then working, then archival, each by owner and label.
    """
    kinds = [kind] if kind is not None else None
    page, known = run_on_store(
        lambda s: _page_and_summary(s, agent, kinds, offset, limit),
        open_store(db, create=False, embed=False),
    )
    if as_json:
        echo_json(
            {
                "blocks": [b.model_dump(mode="json") for b in page.blocks],
                "total": page.total,
                "offset": page.offset,
                "limit": page.limit,
                "next_offset": page.next_offset,
            }
        )
        return
    console = stdout_console()
    if page.total == 0:
        console.print(Text(f"No blocks for agent {agent!r}.{_agents.unused_hint(known)}"))
    elif not page.blocks:
        console.print(Text(_past_the_end(page)))
    else:
        console.print(_blocks_table(page.blocks, agent, page.total))
        footer = page_footer(page)
        if footer is not None:
            console.print(Text(footer))
