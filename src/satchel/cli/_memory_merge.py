"""``satchel memory merge FROM INTO``: bring memory split under two agent names together
(see :mod:`satchel.memory._merge`). Registered on the ``memory`` app by
:mod:`satchel.cli._memory`."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.text import Text

from satchel._errors import SatchelUsageError
from satchel.cli._common import JsonFlag, echo_json, stdout_console
from satchel.cli._store import DbOption, open_store, run_on_store
from satchel.memory import GatedStore, MemoryStore, MergeReport

__all__ = ["merge"]


def _agent(value: str, hint: str) -> str:
    if not value.strip():
        raise typer.BadParameter("must not be empty.", param_hint=hint)
    if value == "auto":
        raise typer.BadParameter(
            "'auto' is no agent: name the person's agent (or a project:... agent).",
            param_hint=hint,
        )
    return value


def _lines(report: MergeReport) -> list[str]:
    verb = "Would merge" if report.dry_run else "Merged"
    out = [f"{verb} {report.source!r} into {report.target!r}:"]
    if report.joined:
        for joined in report.joined:
            limit = joined.char_limit
            over = (
                f", over its limit of {limit}: shorten it"
                if limit is not None and joined.chars > limit
                else ""
            )
            lines = "line" if joined.lines_added == 1 else "lines"
            out.append(
                f"  {joined.label}: joined, {joined.lines_added} {lines} added "
                f"({joined.chars} characters{over})"
            )
    moved = ", ".join(report.moved) if report.moved else "none"
    out.append(f"  blocks moved as they are: {moved}")
    messages = "message" if report.messages == 1 else "messages"
    out.append(f"  conversations: {report.messages} {messages} moved")
    if report.reshared:
        blocks = "block" if report.reshared == 1 else "blocks"
        out.append(f"  {report.reshared} shared {blocks} now shared with {report.target!r}")
    if report.dry_run:
        out.append("Nothing was written (dry run).")
    return out


def merge(
    source: Annotated[
        str, typer.Argument(metavar="FROM", help="The agent to merge from (left empty).")
    ],
    target: Annotated[str, typer.Argument(metavar="INTO", help="The agent to merge into.")],
    db: DbOption = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Show what would change; write nothing.")
    ] = False,
    as_json: JsonFlag = False,
) -> None:
    """Merge agent FROM's memory into INTO's, in one transaction, losing nothing.

    Blocks whose label INTO lacks move as they are; a label both own (human, persona)
    is joined: INTO's text, then each line of FROM's that INTO's lacks. Archival
    entries and conversations move; shares move to INTO. Close the clients first: a
    merge that meets a write made meanwhile stops, writes nothing, and says to run it
    again."""

    async def work(store: MemoryStore) -> MergeReport:
        if not isinstance(store, GatedStore):  # every store --db opens is one
            raise SatchelUsageError(f"{type(store).__name__} cannot merge agents")
        return await store.merge_agents(
            _agent(source, "'FROM'"), _agent(target, "'INTO'"), dry_run=dry_run
        )

    report = run_on_store(work, open_store(db, create=False, embed=not dry_run))
    if as_json:
        echo_json(report.model_dump(mode="json"))
        return
    for line in _lines(report):
        stdout_console().print(Text(line))
