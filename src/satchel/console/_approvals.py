"""The approvals inbox: pending requests with their exact arguments, origin and expiry,
the four decisions, and the decided requests with their outcome.

New requests appear without a reload by **polling**: the pending list is an htmx
fragment re-fetched every :data:`POLL_SECONDS`. Polling rather than server-sent events
because requests are written by other processes (every ``satchel serve`` on the
database), so the server would poll the database for an event stream anyway; a poll
is one short request through the same token and CSRF checks, and it holds no
connection open (``serve --http`` closes idle connections and caps open ones).
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from satchel._errors import InvalidInputError
from satchel.consent import ApprovalRequest, Decision
from satchel.console._context import Console, field

__all__ = ["DURATIONS", "POLL_SECONDS", "ApprovalPages"]

POLL_SECONDS = 2
"""How often the inbox asks for new requests."""

DURATIONS: dict[str, timedelta] = {
    "10m": timedelta(minutes=10),
    "1h": timedelta(hours=1),
    "8h": timedelta(hours=8),
    "1d": timedelta(days=1),
}
"""The durations offered for "approve for"."""

_DECIDED_SHOWN = 50


def _row(request: ApprovalRequest) -> dict[str, Any]:
    scope = request.scope
    if scope.kind == "tool_execution":
        target, operation = f"tool {scope.tool}", "run"
    else:
        owner = f" of {scope.owner}" if scope.owner and scope.owner != request.agent else ""
        target, operation = f"block {scope.label}{owner}", scope.operation or "edit"
    return {"request": request, "target": target, "operation": operation}


def decision_of(kind: str, duration: str) -> Decision:
    """The decision a form's button asks for.

    Raises:
        InvalidInputError: An unknown decision or duration.
    """
    match kind:
        case "once":
            return Decision.approve_once()
        case "for":
            if duration not in DURATIONS:
                raise InvalidInputError(
                    f"{duration[:20]!r} is not a duration; choose {', '.join(DURATIONS)}"
                )
            return Decision.approve_for(DURATIONS[duration])
        case "scope":
            return Decision.approve_scope()
        case "deny":
            return Decision.deny()
        case _:
            raise InvalidInputError(f"{kind[:20]!r} is not once, for, scope or deny")


class ApprovalPages:
    """The handlers of the approvals inbox."""

    def __init__(self, console: Console) -> None:
        self.console = console

    async def _context(self) -> dict[str, Any]:
        everything = await self.console.broker.list()
        pending = [_row(r) for r in everything if r.status == "pending"]
        decided = [_row(r) for r in everything if r.status != "pending"]
        decided.sort(key=lambda row: row["request"].decided_at or row["request"].created_at)
        return {
            "pending": pending,
            "decided": list(reversed(decided))[:_DECIDED_SHOWN],
            "durations": list(DURATIONS),
            "poll": POLL_SECONDS,
        }

    async def inbox(self, request: Request) -> Response:
        """The whole inbox."""
        return self.console.renderer.render(request, "approvals.html", await self._context())

    async def pending(self, request: Request) -> Response:
        """The pending and decided lists alone (what the inbox polls)."""
        return self.console.renderer.render(request, "_approval_lists.html", await self._context())

    async def decide(self, request: Request) -> Response:
        """Record the operator's decision on one request."""
        request_id = str(request.path_params["request_id"])
        form = await self.console.form(request)
        decision = decision_of(field(form, "decision"), field(form, "duration"))
        await self.console.broker.resolve(request_id, decision, by="console")
        if request.headers.get("hx-request") == "true":
            return await self.pending(request)
        base = self.console.renderer.base(request)
        return RedirectResponse(f"{base}/approvals", status_code=303)
