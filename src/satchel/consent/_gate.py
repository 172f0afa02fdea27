"""The approval gate: a destructive call runs only with a human's approval.

Which calls are held is the :class:`~satchel.consent.ApprovalPolicy` (destructive ones
by default; never a :attr:`~satchel.tools.ToolSpec.memory_gated` tool, whose writes the
block's permission decides). A held call goes one of three ways:

1. a standing grant covers exactly this agent, this tool and these arguments: it runs;
2. the context carries an ``approval_id``: the broker spends it if it was approved for
   exactly this agent (``ctx.agent``), this tool and these arguments (their
   :func:`~satchel.consent.args_digest`), and the call runs once; otherwise a
   ``denied`` error says why (an approval given to another agent never fits);
3. otherwise a pending request is stored. When someone answers requests from the
   call's origin where it was asked (:meth:`PermissionBroker.answer_wait
   <satchel.consent.PermissionBroker.answer_wait>`: ``satchel up`` on Telegram), the
   call waits for that answer (the request expires after that wait, as a refusal): an
   approval is spent and the call runs once, and the turn goes on with its result; a
   refusal or no answer is a ``denied`` error and nothing runs. Otherwise nothing runs
   and the result is a ``needs_approval`` error whose details carry ``status:
   "pending_confirmation"``, the ``approval_id``, the tool and the exact arguments.

The model only ever holds the id; approving happens on the human side
(:meth:`PermissionBroker.resolve`), never through a tool.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable, Mapping
from datetime import datetime
from typing import Any, Final, cast, overload

import jsonschema

from satchel._errors import SatchelUsageError
from satchel.consent._broker import PermissionBroker
from satchel.consent._models import ApprovalError, ConsentScope
from satchel.consent._policy import ApprovalPolicy, needs_approval
from satchel.registry import BaseRegistry, RegistryView, WrapperTool
from satchel.tools import BaseTool, ErrorInfo, ToolContext, ToolResult, ToolSpec

__all__ = ["gated_call", "with_approval"]

_APPROVED: Final = "satchel.approved_scope"
"""Context extra set once an approval was spent, so a second gate around the same call
(a registry wrapped twice) does not ask again."""
_RETRY_HINT: Final = "call again with approval_id set and exactly the same arguments"
_MAX_SHOWN: Final = 200

Runner = Callable[[dict[str, Any], ToolContext], Awaitable[ToolResult]]


def _shown(args: Mapping[str, Any]) -> str:
    text = ", ".join(f"{k}={v!r}" for k, v in args.items())
    return text if len(text) <= _MAX_SHOWN else text[: _MAX_SHOWN - 1] + "…"


def _as_text(args: dict[str, Any], schema: Mapping[str, Any]) -> dict[str, Any]:
    """``args`` with a list of strings given for a top-level text field joined by
    commas, as the tools that take such a field accept it (AgenticPal's ``send_email``
    sends ``to`` and ``cc`` as lists; see docs/compat.md)."""
    properties: Any = schema.get("properties", {})
    fields = cast(dict[str, Any], properties) if isinstance(properties, dict) else {}
    joined = dict(args)
    for name, value in args.items():
        field: Any = fields.get(name)
        if (
            isinstance(value, list)
            and isinstance(field, dict)
            and _takes_text(cast(dict[str, Any], field))
        ):
            items = cast(list[object], value)
            if all(isinstance(item, str) for item in items):
                joined[name] = ", ".join(cast(list[str], items))
    return joined


def _takes_text(field: dict[str, Any]) -> bool:
    if field.get("type") == "string":
        return True
    options: Any = field.get("anyOf", [])
    return isinstance(options, list) and {"type": "string"} in options


def _schema_errors(spec: ToolSpec, args: dict[str, Any]) -> list[str]:
    """JSON-schema problems of ``args`` (so a human is never asked to approve a call
    that cannot run). Looser than the tool's own validation, never stricter."""
    validator = jsonschema.Draft202012Validator(spec.input_schema)
    checked = _as_text(args, spec.input_schema)
    return [
        f"`{'.'.join(str(p) for p in e.absolute_path) or '(arguments)'}`: {e.message[:160]}"
        for e in validator.iter_errors(checked)  # pyright: ignore[reportUnknownMemberType]
    ][:20]


async def gated_call(
    spec: ToolSpec,
    args: dict[str, Any],
    ctx: ToolContext,
    broker: PermissionBroker,
    run: Runner,
    *,
    retry_hint: str = _RETRY_HINT,
    policy: ApprovalPolicy = ApprovalPolicy.DESTRUCTIVE,
) -> ToolResult:
    """Run ``run(args, ctx)`` if the policy does not hold the call or it is approved;
    otherwise ask for approval and run nothing (see the module doc).

    Args:
        spec: The tool's definition (with ``policy``, decides what is held).
        args: The exact arguments.
        ctx: The call's context: ``ctx.agent`` is who asks (an approval binds to it),
            ``ctx.approval_id`` the approval being presented.
        broker: Who stores and decides approvals.
        run: Runs the tool for real.
        retry_hint: How the model should present the approval id (wording only).
        policy: Which calls wait for a human.
    """
    name = spec.name
    if not needs_approval(spec, args, policy):
        return await run(args, ctx)
    try:
        scope = ConsentScope.tool_execution(name, args, agent=ctx.agent)
    except SatchelUsageError as exc:
        return ToolResult(
            name,
            error=ErrorInfo(
                "invalid_arguments",
                f"The arguments must be plain JSON data ({exc.message}).",
                {"errors": [{"field": "", "problem": "not plain JSON"}]},
            ),
        )
    if ctx.extras.get(_APPROVED) == scope.key:
        return await run(args, ctx)
    approved_ctx = dataclasses.replace(ctx, extras={**ctx.extras, _APPROVED: scope.key})
    if ctx.approval_id:
        try:
            await broker.consume(ctx.approval_id, scope)
        except ApprovalError as exc:
            if exc.reason == "pending":
                return _pending_result(name, ctx.approval_id, args, retry_hint, still=True)
            return ToolResult(
                name,
                error=ErrorInfo(
                    "denied",
                    f"{exc.message} Nothing ran. Do not retry with this approval_id; call "
                    "without it to ask the user for a new approval.",
                    exc.details,
                ),
            )
        return await run(args, approved_ctx)
    if await broker.check(scope) is not None:
        return await run(args, approved_ctx)
    problems = _schema_errors(spec, args)
    if problems:
        return ToolResult(
            name,
            error=ErrorInfo(
                "invalid_arguments",
                "The arguments do not fit the tool's schema; fix them and call again:\n- "
                + "\n- ".join(problems),
                {"errors": problems},
            ),
        )
    wait = broker.answer_wait(ctx.origin)
    pending = await broker.request(
        scope,
        f"Run {name}({_shown(args)})",
        ctx.origin or "unknown",
        agent=ctx.agent,
        arguments=args,
        timeout=wait,
        wait=False,
    )
    if pending.status == "approved":  # a grant appeared meanwhile
        return await run(args, approved_ctx)
    if wait is None:
        return _pending_result(name, pending.id, args, retry_hint, expires=pending.expires_at)
    decided = await broker.wait(pending.id)
    if decided.status == "approved":
        try:
            await broker.consume(decided.id, scope)
        except ApprovalError as exc:  # another call spent it first
            return _refused(name, decided.id, exc.message)
        return await run(args, approved_ctx)
    said = {
        "denied": f"The person refused request {decided.id}.",
        "used": f"Request {decided.id} was spent by another call a moment ago.",
    }.get(decided.status, f"Nobody answered request {decided.id} in time.")
    return _refused(name, decided.id, said)


def _refused(tool: str, approval_id: str, said: str) -> ToolResult:
    return ToolResult(
        tool,
        error=ErrorInfo(
            "denied",
            f"{said} Nothing ran. Do not retry this call unless the user asks you to.",
            {"status": "denied", "approval_id": approval_id, "tool": tool},
        ),
    )


def _pending_result(
    tool: str,
    approval_id: str,
    args: dict[str, Any],
    retry_hint: str,
    *,
    still: bool = False,
    expires: datetime | None = None,
) -> ToolResult:
    head = (
        "This call is still waiting for a human's approval"
        if still
        else "This call is destructive and needs a human's approval"
    )
    details: dict[str, Any] = {
        "status": "pending_confirmation",
        "approval_id": approval_id,
        "tool": tool,
        "arguments": args,
    }
    if expires is not None:
        details["expires_at"] = expires.isoformat()
    return ToolResult(
        tool,
        error=ErrorInfo(
            "needs_approval",
            f"{head}; nothing ran. Ask the user to approve request {approval_id} "
            f"(you cannot approve it yourself), then {retry_hint}.",
            details,
        ),
    )


class _ApprovalGate(WrapperTool):
    def __init__(self, inner: BaseTool, broker: PermissionBroker, policy: ApprovalPolicy) -> None:
        super().__init__(inner)
        self.broker = broker
        self.policy = policy

    async def call(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        return await gated_call(
            self.inner.spec, args, ctx, self.broker, self.inner.call, policy=self.policy
        )


_Policy = ApprovalPolicy


@overload
def with_approval(
    target: BaseTool, broker: PermissionBroker, *, policy: _Policy = _Policy.DESTRUCTIVE
) -> BaseTool: ...
@overload
def with_approval(
    target: BaseRegistry, broker: PermissionBroker, *, policy: _Policy = _Policy.DESTRUCTIVE
) -> RegistryView: ...
def with_approval(
    target: BaseTool | BaseRegistry,
    broker: PermissionBroker,
    *,
    policy: ApprovalPolicy = ApprovalPolicy.DESTRUCTIVE,
) -> Any:
    """Gate the calls ``policy`` holds (destructive ones by default) of a tool, or of
    every tool of a registry, behind a human's approval through ``broker``.

    Other calls pass straight through, and so does every call of a
    :attr:`~satchel.tools.ToolSpec.memory_gated` tool (the block's permission decides
    memory writes). A held call without a valid approval runs nothing and returns
    ``needs_approval`` with an ``approval_id``; once a human approved it
    (:meth:`PermissionBroker.resolve`), the same call by the same agent with
    ``ToolContext(approval_id=...)`` runs exactly the approved arguments, once.

    Example:
        >>> gated = with_approval(registry, broker)
        >>> first = await gated.call("delete_file", {"path": "a.txt"})
        >>> approval_id = first.error.details["approval_id"]
        >>> await broker.resolve(approval_id, Decision.approve_once(), by="ada")
        >>> await gated.call("delete_file", {"path": "a.txt"},
        ...                  ToolContext(approval_id=approval_id))
    """
    policy = ApprovalPolicy(policy)
    if isinstance(target, BaseRegistry):
        return RegistryView([target], lambda tool: _ApprovalGate(tool, broker, policy))
    return _ApprovalGate(target, broker, policy)
