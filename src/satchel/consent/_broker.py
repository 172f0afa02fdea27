""":class:`PermissionBroker`: asks a human, records the answer, and checks grants.

How waiting works. A request that waits (``request(..., wait=True)`` or :meth:`wait`)
sleeps on an in-process :class:`anyio.Event`, set the moment :meth:`resolve` decides it
in the same process and event loop. A decision can also come from another process on
the same database (``satchel approvals approve`` in another terminal), which cannot set
that event, so a waiter also re-reads the store every ``poll_interval`` seconds (1 s by
default). Nothing busy-loops: between reads the task sleeps.

Expiry is lazy and race-free: whoever reads a pending request past its ``expires_at``
(or an approval past its ``valid_until``) marks it ``expired`` with the store's
compare-and-set, so a late approval and the timeout cannot both win.

Waiting where the person can answer. A front end that can reach the person and take
their answer where a request was asked (``satchel up``'s
:class:`~satchel.channels.ChannelConsent`, on Telegram, Discord or email) registers
with :meth:`PermissionBroker.add_answerer`; :meth:`PermissionBroker.answer_wait` then
says how long a call held for consent from that origin waits for the answer (the
approval gate and the memory consent handlers ask it), instead of giving up at once.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Final, Self

import anyio

from satchel._errors import SatchelUsageError
from satchel.consent._models import (
    ApprovalError,
    ApprovalRequest,
    ApprovalStatus,
    ConsentScope,
    Decision,
    utcnow,
)
from satchel.consent._store import ApprovalStore, InMemoryApprovalStore
from satchel.memory import ConsentRequest
from satchel.tools import ToolBroker

__all__ = ["PermissionBroker", "memory_arguments", "memory_reason", "memory_scope"]

logger = logging.getLogger("satchel.consent")

_Requests = list[ApprovalRequest]
_ID_BYTES: Final = 18
"""An approval id is 144 random bits, URL-safe base64 (24 characters)."""


def memory_scope(request: ConsentRequest) -> ConsentScope:
    """The scope a memory write's consent binds to: its agent, block (owner and
    label), operation and content."""
    return ConsentScope.memory_edit(
        request.label,
        owner=request.owner,
        agent=request.agent,
        operation=request.operation.value,
        content_digest=request.content_digest,
    )


def memory_reason(request: ConsentRequest) -> str:
    """A sentence for the human about a memory write that needs consent."""
    reason = f"{request.agent} wants to {request.operation.value} block {request.label!r}"
    return reason + (f" ({request.reason})" if request.reason else "")


def memory_arguments(request: ConsentRequest) -> dict[str, Any] | None:
    """What a memory write would write (``{"text": ..., "separator": ...}`` for an
    append), as a consent request's ``arguments``, for the person to see; ``None`` when
    the write carries nothing or the request does not say."""
    content = request.content
    if content is None:
        return None
    if isinstance(content, dict):
        return {str(k): v for k, v in content.items()}  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]
    return {"content": content}


def _seconds(value: float | timedelta, what: str) -> float:
    seconds = value.total_seconds() if isinstance(value, timedelta) else float(value)
    if seconds < 0:
        raise SatchelUsageError(f"{what} must not be negative, got {seconds:g} s.")
    return seconds


class PermissionBroker:
    """Asks a human to approve writes and tool calls, and remembers the answers.

    Also a :class:`~satchel.memory.ConsentHandler`: pass it as a memory store's
    ``consent`` and writes that need consent wait for a human's decision (a timeout is a
    refusal).

    Args:
        store: Where requests live; an :class:`InMemoryApprovalStore` by default. Use a
            :class:`SQLiteApprovalStore` on the memory database so that another process
            (the CLI) can list and decide requests.
        default_timeout: Seconds (or a ``timedelta``) a request stays pending before it
            expires as a refusal.
        approval_ttl: How long an ``approve_once`` approval stays usable after the
            decision (``None``: until used).
        poll_interval: Seconds between re-reads of the store while waiting, to see
            decisions made by other processes.
        origin: The origin recorded for consent asked through :meth:`__call__` (memory
            writes).
        clock: Returns the current time (timezone-aware); for tests.

    Example:
        >>> broker = PermissionBroker(SQLiteApprovalStore(db_path))
        >>> pending = await broker.request(scope, "delete notes.txt", "cli", wait=False)
        >>> # elsewhere, a human:
        >>> await broker.resolve(pending.id, Decision.approve_once(), by="ada")
    """

    def __init__(
        self,
        store: ApprovalStore | None = None,
        *,
        default_timeout: float | timedelta = 600.0,
        approval_ttl: float | timedelta | None = 3600.0,
        poll_interval: float = 1.0,
        origin: str = "memory",
        clock: Callable[[], datetime] = utcnow,
    ) -> None:
        self.store: ApprovalStore = store if store is not None else InMemoryApprovalStore()
        self.default_timeout = _seconds(default_timeout, "default_timeout")
        self.approval_ttl = None if approval_ttl is None else _seconds(approval_ttl, "approval_ttl")
        if poll_interval <= 0:
            raise SatchelUsageError(f"poll_interval must be positive, got {poll_interval:g}.")
        self.poll_interval = poll_interval
        self.origin = origin
        self.clock = clock
        self._events: dict[str, anyio.Event] = {}
        self._listeners: list[Callable[[ApprovalRequest], None]] = []
        self._answerers: list[Callable[[str], float | None]] = []

    def subscribe(self, listener: Callable[[ApprovalRequest], None]) -> Callable[[], None]:
        """Call ``listener(request)`` whenever this broker stores a new pending request
        (so a front end can prompt the human: an MCP elicitation, a chat message).
        Returns a function that unsubscribes. A listener must not block; one that raises
        is logged and ignored."""
        self._listeners = [*self._listeners, listener]

        def unsubscribe() -> None:
            self._listeners = [x for x in self._listeners if x is not listener]

        return unsubscribe

    def add_answerer(self, answerer: Callable[[str], float | None]) -> Callable[[], None]:
        """Register a front end that takes a person's answer where a request was asked:
        ``answerer(origin)`` returns how many seconds a call held for consent from
        ``origin`` (``"telegram:123456789"``) should wait for that answer, or ``None``
        when nobody answers there. Returns a function that unregisters it.

        Example:
            >>> remove = broker.add_answerer(lambda o: 300.0 if o.startswith("telegram:") else None)
            >>> broker.answer_wait("telegram:42")
            300.0
        """
        self._answerers = [*self._answerers, answerer]

        def remove() -> None:
            self._answerers = [x for x in self._answerers if x is not answerer]

        return remove

    def answer_wait(self, origin: str | None) -> float | None:
        """Seconds a call held for consent from ``origin`` waits for the person's answer
        (the longest any registered answerer offers), or ``None`` when no answerer
        reaches that origin: the call then goes the usual way (a ``needs_approval``
        result, or a memory consent handler's own short wait)."""
        if not origin:
            return None
        waits = [w for answerer in self._answerers if (w := answerer(origin)) is not None]
        return max(waits) if waits else None

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    async def close(self) -> None:
        """Close the store."""
        await self.store.close()

    # -- reading, with lazy expiry -------------------------------------------------

    async def _fresh(self, request: ApprovalRequest) -> ApprovalRequest:
        """``request`` with a lapsed pending request or approval marked expired."""
        now = self.clock()
        while request.lapsed(now):
            expired = request.model_copy(update={"status": "expired"})
            if request.status == "pending":
                expired = expired.model_copy(
                    update={"decision": Decision.deny(), "decided_by": "timeout", "decided_at": now}
                )
            if await self.store.swap(expired, expect=request.status):
                self._wake(request.id)
                return expired
            latest = await self.store.get(request.id)
            if latest is None:
                return request
            request = latest
        return request

    async def get(self, request_id: str) -> ApprovalRequest | None:
        """The request with this id (expiry applied), or ``None``."""
        found = await self.store.get(request_id)
        return None if found is None else await self._fresh(found)

    async def list(self, status: ApprovalStatus | None = None) -> _Requests:
        """Requests with this status (all when ``None``), oldest first; lapsed ones are
        marked expired first."""
        everything = [await self._fresh(r) for r in await self.store.list(None)]
        return [r for r in everything if status is None or r.status == status]

    async def pending(self) -> _Requests:
        """The requests waiting for a human, oldest first."""
        found = [await self._fresh(r) for r in await self.store.list("pending")]
        return [r for r in found if r.status == "pending"]

    # -- asking ----------------------------------------------------------------------

    async def check(self, scope: ConsentScope) -> ApprovalRequest | None:
        """The standing grant (``approve_for`` or ``approve_scope``, still valid) that
        covers ``scope`` (the same :attr:`~ConsentScope.key`: the same agent, and the
        same tool and arguments or the same block and operation), or ``None``. One-time
        approvals never cover other requests."""
        for grant in await self.store.by_scope(scope.key, "approved"):
            fresh = await self._fresh(grant)
            decision = fresh.decision
            if (
                fresh.status == "approved"
                and fresh.scope.bound
                and decision is not None
                and decision.kind in ("approve_for", "approve_scope")
            ):
                return fresh
        return None

    async def request(
        self,
        scope: ConsentScope,
        reason: str,
        origin: str,
        *,
        agent: str | None = None,
        arguments: dict[str, Any] | None = None,
        timeout: float | timedelta | None = None,  # noqa: ASYNC109 (the request's expiry, stored)
        wait: bool = True,
    ) -> ApprovalRequest:
        """Ask a human to allow ``scope``.

        A standing grant covering the scope answers at once (that grant is returned).
        Otherwise a pending request from the same agent for exactly the same scope (and
        arguments) is reused, or a new one is stored.

        Args:
            scope: What is asked.
            reason: A sentence for the human: what would happen.
            origin: The channel it comes from (``"mcp"``, ``"cli"``, ``"discord:123"``).
            agent: The agent asking: the scope's own agent when ``None`` (and
                ``"default"`` for a scope without one).
            arguments: For a tool call, the exact arguments (shown to the human).
            timeout: Seconds (or ``timedelta``) before a pending request expires as a
                refusal; :attr:`default_timeout` when ``None``.
            wait: Wait for the decision (or the timeout). With ``False`` the pending
                request is returned at once, for the caller to hand its id out.

        Returns:
            The request: ``approved``, ``denied`` or ``expired`` after waiting; usually
            ``pending`` with ``wait=False``.

        Raises:
            SatchelUsageError: ``agent`` is not the agent the scope is bound to.
        """
        if agent is None:
            agent = scope.agent or "default"
        elif scope.agent is not None and scope.agent != agent:
            raise SatchelUsageError(
                f"The scope is bound to agent {scope.agent!r}, not to {agent!r}: an agent "
                "asks for itself."
            )
        grant = await self.check(scope)
        if grant is not None:
            return grant
        existing = [r for r in await self.store.by_scope(scope.key, "pending") if r.agent == agent]
        for candidate in existing:
            fresh = await self._fresh(candidate)
            if fresh.status == "pending" and fresh.scope == scope and fresh.arguments == arguments:
                return await self.wait(fresh.id) if wait else fresh
        seconds = self.default_timeout if timeout is None else _seconds(timeout, "timeout")
        now = self.clock()
        created = ApprovalRequest(
            id="ap_" + secrets.token_urlsafe(_ID_BYTES),
            scope=scope,
            reason=reason,
            origin=origin,
            agent=agent,
            arguments=arguments,
            created_at=now,
            expires_at=now + timedelta(seconds=seconds),
        )
        await self.store.insert(created)
        for listener in self._listeners:
            try:
                listener(created)
            except Exception:  # a front end's bug must not lose the request
                logger.exception("approval listener failed on request %s", created.id)
        return await self.wait(created.id) if wait else created

    async def wait(self, request_id: str) -> ApprovalRequest:
        """Wait until the request is decided or expires, and return it.

        To stop waiting earlier, wrap the call in :func:`anyio.move_on_after`; the
        request itself stays pending until its own ``expires_at``.

        Args:
            request_id: The request.

        Raises:
            ApprovalError: No request has this id.
        """
        while True:
            event = self._events.setdefault(request_id, anyio.Event())
            try:
                current = await self.get(request_id)
                if current is None:
                    raise ApprovalError(
                        f"There is no approval request {request_id!r}.",
                        reason="unknown",
                        approval_id=request_id,
                    )
                if current.status != "pending":
                    return current
                left = (current.expires_at - self.clock()).total_seconds()
                pause = min(self.poll_interval, max(left, 0.0))
                with anyio.move_on_after(pause):
                    await event.wait()
            finally:
                # Never leave an event behind for a later event loop to wait on; a
                # waiter that loses its event here still sees the decision by polling.
                if self._events.get(request_id) is event and not event.is_set():
                    del self._events[request_id]

    def _wake(self, request_id: str) -> None:
        event = self._events.pop(request_id, None)
        if event is not None:
            event.set()

    # -- deciding --------------------------------------------------------------------

    async def resolve(self, request_id: str, decision: Decision, *, by: str) -> ApprovalRequest:
        """Record a human's decision on a pending request and wake its waiters.

        This is the human side of the flow (Python, the CLI, MCP elicitation); a model
        never reaches it.

        Args:
            request_id: The request.
            decision: The decision.
            by: Who decided (a user name, ``"cli"``, ...).

        Returns:
            The decided request.

        Raises:
            ApprovalError: No such request, or it is no longer pending (decided or
                expired).
        """
        current = await self.get(request_id)
        if current is None:
            raise ApprovalError(
                f"There is no approval request {request_id!r}.",
                reason="unknown",
                approval_id=request_id,
            )
        if current.status != "pending":
            raise ApprovalError(
                f"Approval request {request_id!r} is already {current.status}.",
                reason="expired" if current.status == "expired" else "mismatch",
                approval_id=request_id,
            )
        now = self.clock()
        valid_until: datetime | None = None
        match decision.kind:
            case "approve_once":
                if self.approval_ttl is not None:
                    valid_until = now + timedelta(seconds=self.approval_ttl)
            case "approve_for":
                valid_until = now + timedelta(seconds=decision.duration_seconds or 0.0)
            case "deny" | "approve_scope":
                pass
        decided = current.model_copy(
            update={
                "status": "approved" if decision.approved else "denied",
                "decision": decision,
                "decided_by": by,
                "decided_at": now,
                "valid_until": valid_until,
            }
        )
        if not await self.store.swap(decided, expect="pending"):
            latest = await self.get(request_id)
            state = latest.status if latest is not None else "gone"
            raise ApprovalError(
                f"Approval request {request_id!r} was decided elsewhere first ({state}).",
                reason="mismatch",
                approval_id=request_id,
            )
        self._wake(request_id)
        return decided

    async def consume(self, request_id: str, scope: ConsentScope) -> ApprovalRequest:
        """Use an approval for ``scope``: a one-time approval is spent (``used``), a
        standing one stays valid.

        An approval binds to its agent: one given to another agent, for another tool or
        other arguments, another block or another operation never fits. A one-time
        approval of a memory write also binds its content; a standing grant covers the
        agent's ``operation`` on that block whatever the content.

        Raises:
            ApprovalError: The id is unknown, still pending, denied, expired, already
                used, or was given for a different scope.
        """
        current = await self.get(request_id)
        if current is None:
            raise ApprovalError(
                f"There is no approval request {request_id!r}.",
                reason="unknown",
                approval_id=request_id,
            )
        given = current.scope
        once = current.decision is None or current.decision.kind == "approve_once"
        if given.key != scope.key or not given.bound or (once and not given.covers(scope)):
            raise ApprovalError(
                f"Approval {request_id!r} does not allow {scope.describe()}: "
                f"{given.mismatch(scope) or 'the scope differs'}.",
                reason="mismatch",
                approval_id=request_id,
            )
        match current.status:
            case "pending":
                raise ApprovalError(
                    f"Approval {request_id!r} is still waiting for a human's decision.",
                    reason="pending",
                    approval_id=request_id,
                )
            case "denied" | "expired" | "used":
                said = {
                    "denied": "was denied by a human",
                    "expired": "has expired",
                    "used": "has already been used (it allows one call)",
                }[current.status]
                raise ApprovalError(
                    f"Approval {request_id!r} {said}.",
                    reason=current.status,
                    approval_id=request_id,
                )
            case "approved":
                pass
        decision = current.decision
        if decision is None or decision.kind != "approve_once":
            return current
        spent = current.model_copy(update={"status": "used", "used_at": self.clock()})
        if not await self.store.swap(spent, expect="approved"):
            raise ApprovalError(
                f"Approval {request_id!r} was used (or expired) a moment ago.",
                reason="used",
                approval_id=request_id,
            )
        return spent

    # -- the memory store's consent handler -------------------------------------------

    async def __call__(self, request: ConsentRequest, /) -> bool:
        """Ask about a memory write (:class:`~satchel.memory.ConsentHandler`): wait for
        a decision; ``True`` only if it is an approval (a one-time one is spent).

        A write whose origin an answerer reaches (:meth:`answer_wait`) is asked there:
        the request carries that origin and the write's content (for the person to
        see), and expires after the answerer's wait; any other is asked with
        :attr:`origin` and :attr:`default_timeout`."""
        scope = memory_scope(request)
        wait = self.answer_wait(request.origin)
        if wait is None:
            answer = await self.request(
                scope, memory_reason(request), self.origin, agent=request.agent
            )
        else:
            answer = await self.request(
                scope,
                memory_reason(request),
                request.origin,
                agent=request.agent,
                arguments=memory_arguments(request),
                timeout=wait,
            )
        if answer.status != "approved":
            return False
        try:
            await self.consume(answer.id, scope)
        except ApprovalError:
            return False
        return True


if TYPE_CHECKING:  # what a ToolContext carries as its ``broker``
    _SERVES_TOOLS: type[ToolBroker] = PermissionBroker
