"""``satchel approvals``: the human side of consent, from any terminal.

A destructive tool call or a guarded memory write waits as a pending
:class:`~satchel.consent.ApprovalRequest` in the memory database (for example while
``satchel serve`` answers the model with ``pending_confirmation``). These commands list
and decide those requests on the same database; the waiting process sees the decision
within its poll interval. ``--agent`` (or ``SATCHEL_AGENT``, as for ``serve``) limits
every command to one agent's requests: ``list`` shows only those, and ``show``,
``approve`` and ``deny`` refuse another agent's request.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any, TypeVar

import anyio
import typer
from rich.console import Group, RenderableType
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from satchel.cli._common import JsonFlag, echo_json, stdout_console
from satchel.cli._store import DbOption, resolve_db_location
from satchel.consent import (
    ApprovalRequest,
    ApprovalStore,
    Decision,
    PermissionBroker,
    open_approval_store,
)

__all__ = ["app", "approval_store", "parse_duration"]

app = typer.Typer(
    name="approvals",
    help="List, approve and deny pending approval requests (destructive calls, guarded writes).",
    no_args_is_help=True,
)

_T = TypeVar("_T")
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(s|sec|m|min|h|hr|d|day)s?\s*$", re.IGNORECASE)
_UNIT_SECONDS = {
    "s": 1,
    "sec": 1,
    "m": 60,
    "min": 60,
    "h": 3600,
    "hr": 3600,
    "d": 86400,
    "day": 86400,
}

IdArgument = Annotated[
    str,
    typer.Argument(
        metavar="ID", help="The approval request's id, or enough of its start to be unique."
    ),
]
ByOption = Annotated[str, typer.Option("--by", help="Who decides (recorded with the decision).")]
AgentFilter = Annotated[
    str | None,
    typer.Option(
        "--agent",
        "-a",
        envvar="SATCHEL_AGENT",
        help="Only this agent's requests (default: every agent's).",
        show_default=False,
    ),
]


def parse_duration(text: str) -> timedelta:
    """Parse ``30s``, ``10m``, ``2h`` or ``1d`` into a :class:`~datetime.timedelta`.

    Raises:
        typer.BadParameter: The text is not such a duration.
    """
    match = _DURATION.match(text)
    if match is None or float(match.group(1)) <= 0:
        raise typer.BadParameter(
            f"{text!r} is not a duration; write e.g. 30s, 10m, 2h or 1d.", param_hint="'--for'"
        )
    return timedelta(seconds=float(match.group(1)) * _UNIT_SECONDS[match.group(2).lower()])


def approval_store(db: str | None, *, must_exist: bool) -> ApprovalStore:
    """The approval store of the database ``--db`` names: a SQLite file's, or a
    PostgreSQL database's for a ``postgresql://`` URL."""
    return open_approval_store(resolve_db_location(db, must_exist=must_exist))


def _run(db: str | None, work: Callable[[PermissionBroker], Awaitable[_T]]) -> _T:
    store = approval_store(db, must_exist=True)

    async def main() -> _T:
        async with PermissionBroker(store) as broker:
            return await work(broker)

    return anyio.run(main)


async def _find(broker: PermissionBroker, request_id: str) -> ApprovalRequest:
    """The request whose id is ``request_id``, or the one whose id starts with it.

    Raises:
        typer.BadParameter: no request matches, or several do (they are listed).
    """
    request = await broker.get(request_id)
    if request is not None:
        return request
    wanted = request_id.strip()
    matches = [r for r in await broker.list() if wanted and r.id.startswith(wanted)]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise typer.BadParameter(
            f"there is no approval request {request_id!r}; `satchel approvals list` shows "
            "the pending ones.",
            param_hint="'ID'",
        )
    shown = ", ".join(f"{r.id} ({r.status})" for r in matches[:5])
    more = f" and {len(matches) - 5} more" if len(matches) > 5 else ""
    raise typer.BadParameter(
        f"{request_id!r} starts {len(matches)} request ids: {shown}{more}; give more of it.",
        param_hint="'ID'",
    )


def _ago(moment: datetime | None) -> str:
    if moment is None:
        return "-"
    seconds = (moment - datetime.now(UTC)).total_seconds()
    word = "in " if seconds >= 0 else ""
    seconds = abs(seconds)
    if seconds < 90:
        span = f"{seconds:.0f}s"
    elif seconds < 5400:
        span = f"{seconds / 60:.0f}m"
    else:
        span = f"{seconds / 3600:.1f}h"
    return f"{word}{span}" if word else f"{span} ago"


async def _own(broker: PermissionBroker, request_id: str, agent: str | None) -> ApprovalRequest:
    """The request ``request_id`` (or the one its id starts with), checked to be
    ``agent``'s when one is given.

    Raises:
        typer.BadParameter: No such request, several, or another agent's.
    """
    request = await _find(broker, request_id)
    if agent is not None and request.agent != agent:
        raise typer.BadParameter(
            f"approval request {request_id!r} was asked by agent {request.agent!r}, not "
            f"{agent!r} (--agent / SATCHEL_AGENT).",
            param_hint="'ID'",
        )
    return request


async def _decide(
    broker: PermissionBroker, request_id: str, agent: str | None, decision: Decision, by: str
) -> ApprovalRequest:
    request = await _own(broker, request_id, agent)
    return await broker.resolve(request.id, decision, by=by)


def _row(request: ApprovalRequest) -> dict[str, Any]:
    return request.model_dump(mode="json")


@app.command("list")
def list_requests(
    db: DbOption = None,
    all_: Annotated[
        bool, typer.Option("--all", help="Show decided and expired requests too.")
    ] = False,
    agent: AgentFilter = None,
    json_: JsonFlag = False,
) -> None:
    """List pending approval requests (newest first)."""
    requests = _run(db, lambda b: b.list() if all_ else b.pending())
    if agent is not None:
        requests = [r for r in requests if r.agent == agent]
    if json_:
        echo_json([_row(r) for r in requests])
        return
    console = stdout_console()
    if not requests:
        console.print("No pending approval requests." if not all_ else "No approval requests.")
        return
    title = f"{len(requests)} approval request{'' if len(requests) == 1 else 's'}"
    if console.width < _TABLE_WIDTH:
        console.print(_narrow(title, requests))
        return
    table = Table(title=title)
    # The id is what `approve` takes: it is never cut short, the other columns wrap.
    table.add_column("ID", no_wrap=True, min_width=max(len(r.id) for r in requests))
    for column in ("Status", "Agent", "From", "What", "Reason", "Asked", "Expires"):
        table.add_column(column)
    for r in requests:
        table.add_row(
            r.id,
            r.status,
            r.agent,
            r.origin,
            r.scope.describe(),
            r.reason,
            _ago(r.created_at),
            _expires(r),
        )
    console.print(table)


_TABLE_WIDTH = 120
"""Below this many columns the eight columns of the table wrap to a word per line, so
each request is printed as a short paragraph instead."""


def _expires(request: ApprovalRequest) -> str:
    return _ago(request.expires_at) if request.status == "pending" else "-"


def _narrow(title: str, requests: Sequence[ApprovalRequest]) -> Group:
    """Each request as a paragraph: the whole id first on its own line (to copy), then
    its facts, what it would do and why, indented; long text wraps at word ends."""
    parts: list[RenderableType] = [Text(title, style="bold")]
    for r in requests:
        facts = f"{r.status} · agent {r.agent} · from {r.origin} · asked {_ago(r.created_at)}"
        if r.status == "pending":
            facts += f" · expires {_expires(r)}"
        parts.append(Text(""))
        parts.append(Text(r.id, style="bold cyan", no_wrap=True, overflow="ignore"))
        for line in (facts, f"What: {r.scope.describe()}", f"Why:  {r.reason}"):
            parts.append(Padding(Text(line), (0, 0, 0, 2)))
    return Group(*parts)


@app.command("show")
def show(request_id: IdArgument, db: DbOption = None, agent: AgentFilter = None) -> None:
    """Show one request in full, including the exact arguments that would run."""
    echo_json(_row(_run(db, lambda b: _own(b, request_id, agent))))


@app.command("approve")
def approve(
    request_id: IdArgument,
    db: DbOption = None,
    for_: Annotated[
        str | None,
        typer.Option(
            "--for",
            metavar="DURATION",
            help="Approve for this long (30s, 10m, 2h, 1d): the same agent's identical "
            "tool call, or its same operation on the same memory block.",
        ),
    ] = None,
    scope: Annotated[
        bool,
        typer.Option(
            "--scope", help="Approve this scope for good (bound to the agent, like --for)."
        ),
    ] = False,
    by: ByOption = "cli",
    agent: AgentFilter = None,
    json_: JsonFlag = False,
) -> None:
    """Approve a pending request: once by default, for a while with --for, or for good
    with --scope."""
    if for_ is not None and scope:
        raise typer.BadParameter("give --for or --scope, not both.", param_hint="'--for'")
    if scope:
        decision = Decision.approve_scope()
    elif for_ is not None:
        decision = Decision.approve_for(parse_duration(for_))
    else:
        decision = Decision.approve_once()
    request = _run(db, lambda b: _decide(b, request_id, agent, decision, by))
    if json_:
        echo_json(_row(request))
    else:
        stdout_console().print(f"Approved {request.id}: {request.scope.describe()}")


@app.command("deny")
def deny(
    request_id: IdArgument,
    db: DbOption = None,
    by: ByOption = "cli",
    agent: AgentFilter = None,
    json_: JsonFlag = False,
) -> None:
    """Deny a pending request; the waiting call is refused."""
    request = _run(db, lambda b: _decide(b, request_id, agent, Decision.deny(), by))
    if json_:
        echo_json(_row(request))
    else:
        stdout_console().print(f"Denied {request.id}: {request.scope.describe()}")
