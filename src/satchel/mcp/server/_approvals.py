"""Approvals over MCP: a held call is decided by the client's human when the client
can be asked (elicitation), and otherwise from another terminal.

:func:`with_mcp_approval` gates every tool of a registry like
:func:`~satchel.consent.with_approval` (the :class:`~satchel.consent.ApprovalPolicy`
says which calls are held: destructive ones by default, never a memory tool's, whose
writes the block's permission decides; every approval binds to the serving agent), and
adds two things for serving over MCP:

* **Elicitation first.** When the client declared elicitation, a destructive call asks
  its human at once (:meth:`ClientChannel.confirm <satchel.mcp.ClientChannel.confirm>`).
  The answer is recorded in the broker as a decided request (an audit trail on the
  database, visible to ``satchel approvals list``), then the call runs once (approve) or
  returns a ``denied`` error (decline, dismiss).
* **The approval id travels as an argument.** Otherwise the call returns
  ``needs_approval`` with ``status: "pending_confirmation"`` and an ``approval_id``; a
  human decides with ``satchel approvals approve ID`` on the same database, and the model
  calls the tool again with the same arguments plus ``approval_id``. A model only ever
  produces arguments (it cannot set a request's ``_meta``), so each destructive tool's
  input schema gains an optional ``approval_id`` string, which the gate removes before
  the tool sees the arguments.

:class:`MemoryConsent` is the memory store's consent handler for ``satchel serve``
(writes to blocks whose permission asks for consent). It never blocks a call for long:
it asks the client's human when it can, otherwise it files a pending request, waits a
few seconds for a decision, and refuses the write if none came. A human who approves
later (``satchel approvals approve ID``) lets the model's next try of the same write
through, once.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import logging
from collections.abc import Mapping
from typing import Any, Final

import anyio
import jsonschema

from satchel._errors import SatchelUsageError
from satchel.consent import (
    ApprovalError,
    ApprovalPolicy,
    ConsentScope,
    Decision,
    PermissionBroker,
    canonical_json,
    gated_call,
    memory_arguments,
    memory_reason,
    memory_scope,
    needs_approval,
)
from satchel.mcp.server._channel import client_channel
from satchel.memory import ConsentRequest
from satchel.registry import BaseRegistry, RegistryView, WrapperTool
from satchel.tools import BaseTool, ErrorInfo, ToolContext, ToolResult, ToolSpec

__all__ = ["APPROVAL_ARGUMENT", "MemoryConsent", "with_mcp_approval"]

APPROVAL_ARGUMENT: Final = "approval_id"
"""The optional argument a destructive tool served over MCP accepts: the id of a
human's approval, from an earlier ``pending_confirmation`` result."""

_RETRY_HINT: Final = (
    f"call this tool again with exactly the same arguments plus `{APPROVAL_ARGUMENT}` "
    "set to that id"
)
_ARGUMENT_SCHEMA: Final[dict[str, Any]] = {
    "type": "string",
    "description": (
        "Leave out. Only when retrying a call that returned pending_confirmation and the "
        "user has approved it: the approval_id that result gave."
    ),
}
_MAX_SHOWN: Final = 200

logger = logging.getLogger("satchel.mcp")


def _shown(args: Mapping[str, Any]) -> str:
    text = ", ".join(f"{k}={v!r}" for k, v in args.items())
    return text if len(text) <= _MAX_SHOWN else text[: _MAX_SHOWN - 1] + "…"


def _fits(spec: ToolSpec, args: dict[str, Any]) -> bool:
    validator = jsonschema.Draft202012Validator(spec.input_schema)
    return validator.is_valid(args)  # pyright: ignore[reportUnknownMemberType]


def _question_key(scope: ConsentScope) -> str:
    """The same for the same agent, tool and arguments (or memory write, content
    included), so a 2026-07-28 client's answer is found when the call runs again."""
    exact = canonical_json(scope.model_dump(exclude_none=True))
    return "satchel-approve-" + hashlib.sha256(exact.encode()).hexdigest()[:24]


class _McpApprovalGate(WrapperTool):
    def __init__(self, inner: BaseTool, broker: PermissionBroker, policy: ApprovalPolicy) -> None:
        super().__init__(inner)
        self.broker = broker
        self.policy = policy
        spec = inner.spec
        self._spec = spec
        properties: dict[str, Any] = dict(spec.input_schema.get("properties") or {})
        # A tool with its own approval_id argument (a mounted satchel's tool) gates
        # itself: it is passed through, so the human is not asked twice.
        self.passthrough = APPROVAL_ARGUMENT in properties
        if self.passthrough:
            logger.info("%s takes its own approval_id; its own server gates it", spec.name)
        elif needs_approval(spec, None, policy):
            properties[APPROVAL_ARGUMENT] = _ARGUMENT_SCHEMA
            schema = {**spec.input_schema, "properties": properties}
            self._spec = spec.model_copy(update={"input_schema": schema})

    @property
    def spec(self) -> ToolSpec:
        return self._spec

    async def call(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        if self.passthrough:
            return await self.inner.call(args, ctx)
        args = dict(args)
        presented = args.pop(APPROVAL_ARGUMENT, None) if self._spec is not self.inner.spec else None
        if presented is not None and not isinstance(presented, str):
            return ToolResult(
                self._spec.name,
                error=ErrorInfo(
                    "invalid_arguments",
                    f"`{APPROVAL_ARGUMENT}` must be the string a pending_confirmation result gave.",
                    {"errors": [{"field": APPROVAL_ARGUMENT, "problem": "not a string"}]},
                ),
            )
        if presented:
            ctx = dataclasses.replace(ctx, approval_id=presented)
        return await self._gated(args, ctx)

    async def _plain(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        return await gated_call(
            self.inner.spec,
            args,
            ctx,
            self.broker,
            self.inner.call,
            retry_hint=_RETRY_HINT,
            policy=self.policy,
        )

    async def _gated(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        spec = self.inner.spec
        channel = client_channel(ctx)
        if (
            ctx.approval_id
            or channel is None
            or not channel.can_elicit
            or not needs_approval(spec, args, self.policy)
            or not _fits(spec, args)  # gated_call reports the problems; nobody is asked
        ):
            return await self._plain(args, ctx)
        try:
            scope = ConsentScope.tool_execution(spec.name, args, agent=ctx.agent)
        except SatchelUsageError:
            return await self._plain(args, ctx)  # reports the arguments as invalid
        if await self.broker.check(scope) is not None:  # a standing grant covers it
            return await self._plain(args, ctx)
        approved = await channel.confirm(
            f"Allow the assistant to run {spec.name}({_shown(args)})? Nothing runs "
            "unless you approve.",
            key=_question_key(scope),
        )
        if approved is None:  # the client failed the request: fall back to the CLI
            return await self._plain(args, ctx)
        request = await self.broker.request(
            scope,
            f"Run {spec.name}({_shown(args)})",
            ctx.origin or "mcp",
            agent=ctx.agent,
            arguments=args,
            wait=False,
        )
        if request.status == "pending":
            decision = Decision.approve_once() if approved else Decision.deny()
            by = f"mcp elicitation ({channel.client_name or 'client'})"
            # decided elsewhere a moment ago: that decision stands
            with contextlib.suppress(ApprovalError):
                request = await self.broker.resolve(request.id, decision, by=by)
        if not approved:
            return ToolResult(
                spec.name,
                error=ErrorInfo(
                    "denied",
                    "The user declined this call in the MCP client; nothing ran. Do not "
                    "retry it unless the user asks you to.",
                    {"status": "denied", "approval_id": request.id, "tool": spec.name},
                ),
            )
        return await self._plain(args, dataclasses.replace(ctx, approval_id=request.id))


def with_mcp_approval(
    registry: BaseRegistry,
    broker: PermissionBroker,
    *,
    policy: ApprovalPolicy = ApprovalPolicy.DESTRUCTIVE,
) -> RegistryView:
    """Gate the calls ``policy`` holds, of every tool of ``registry``, for serving over
    MCP (see the module doc): elicitation when the client supports it, otherwise a
    ``pending_confirmation`` result and an ``approval_id`` argument for the retry.

    Args:
        registry: The tools to gate.
        broker: Stores and decides approvals; on the memory database so that
            ``satchel approvals`` in another terminal can decide them.
        policy: Which calls wait for a human: destructive ones (the default), every
            write, or none. Memory tools (:attr:`~satchel.tools.ToolSpec.memory_gated`)
            never do: the block's permission decides their writes.

    Returns:
        A view of ``registry`` whose tools are gated (the held ones with the extra
        argument); it follows later changes to ``registry`` (mounted servers come and
        go).

    A tool that already takes an ``approval_id`` argument (such as a mounted satchel
    server's tool) is trusted to gate itself and passed through unchanged.

    Example:
        >>> broker = PermissionBroker(SQLiteApprovalStore(db_path))  # doctest: +SKIP
        >>> server = create_server(with_mcp_approval(tools, broker))  # doctest: +SKIP
    """
    policy = ApprovalPolicy(policy)
    return RegistryView([registry], lambda tool: _McpApprovalGate(tool, broker, policy))


class MemoryConsent:
    """A memory store's consent handler that never holds a call for long.

    In order: an approval a human gave meanwhile for this agent, block and operation
    (``satchel approvals approve ID``, after an earlier refusal) is spent and the write
    runs (a one-time approval only for the same content; see
    :meth:`~satchel.consent.PermissionBroker.consume`);
    when the request carries a way to ask its human during the call
    (:attr:`~satchel.memory.ConsentRequest.human`, set from the tool call's
    :attr:`~satchel.ToolContext.human`: an MCP client that can elicit, served directly
    or behind the meta-tools), that human is asked; otherwise a pending request is
    filed and the write waits up to ``wait`` seconds for a decision, and is refused if
    none came (the request stays pending for the broker's ``default_timeout``, so a
    later try can use it). When the person answers on the channel the write came from
    (the broker's :meth:`~satchel.consent.PermissionBroker.answer_wait`: ``satchel up``
    on Telegram), the write waits that long for their answer instead, and the request
    expires with the wait.

    Args:
        broker: Where requests are filed and decided.
        wait: Seconds a write waits for a decision from another process.
    """

    def __init__(self, broker: PermissionBroker, *, wait: float = 5.0) -> None:
        self.broker = broker
        self.wait = wait

    async def __call__(self, request: ConsentRequest, /) -> bool:
        """Decide whether the memory write ``request`` describes may happen."""
        broker = self.broker
        scope = memory_scope(request)
        for given in await broker.store.by_scope(scope.key, "approved"):
            if given.agent == request.agent and await self._spend(given.id, scope):
                return True
        reason = memory_reason(request)
        answer: bool | None = None
        if request.human is not None:  # the request's own channel can ask its human now
            answer = await request.human.confirm(f"Allow this? {reason}.", key=_question_key(scope))
        # where the person answers on the channel the write came from (satchel up),
        # the write waits for that answer, and the request expires with the wait
        answered = broker.answer_wait(request.origin) if answer is None else None
        asked = await broker.request(
            scope,
            reason,
            request.origin,
            agent=request.agent,
            arguments=None if answered is None else memory_arguments(request),
            timeout=answered,
            wait=False,
        )
        if asked.status == "pending" and answer is not None:
            decision = Decision.approve_once() if answer else Decision.deny()
            try:
                asked = await broker.resolve(asked.id, decision, by="mcp elicitation")
            except ApprovalError:
                asked = await broker.get(asked.id) or asked
        elif asked.status == "pending" and answered is not None:
            asked = await broker.wait(asked.id)
        elif asked.status == "pending":
            with anyio.move_on_after(self.wait):
                asked = await broker.wait(asked.id)
        return asked.status == "approved" and await self._spend(asked.id, scope)

    async def _spend(self, approval_id: str, scope: ConsentScope) -> bool:
        try:
            await self.broker.consume(approval_id, scope)
        except ApprovalError:
            return False
        return True
