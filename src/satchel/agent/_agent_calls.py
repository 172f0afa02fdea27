"""Tool dispatch in :class:`~satchel.agent.Agent`: running one batch of the model's
tool calls under the tool rules.

Each call is checked against the tools the rules allow now and the tools it requires,
run with a :class:`~satchel.tools.ToolContext` for the agent, and recorded with its
result; a call that waits for a human's approval stops the turn, as does a terminal
tool that succeeded, and so does a call repeated up to the budget's ``repeat_limit``
(:mod:`satchel.agent._bounds`, which also cuts each result to the budget).
:class:`ToolDispatch` is a part of the agent (a base), kept in its own module; it holds
no state of its own.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from typing import TYPE_CHECKING

from satchel.agent._agent_history import ConversationLog, as_mapping
from satchel.agent._bounds import identical_calls, repeated, tool_message
from satchel.agent._context import ContextBudget
from satchel.agent._messages import ChatMessage
from satchel.agent._run import ApprovalEvent, RunEvent, RunResult, ToolCallEvent, ToolResultEvent
from satchel.builtin import MessageRouter
from satchel.memory import AgentMemory, RequestOrigin
from satchel.providers import ToolCall
from satchel.registry import ToolRegistry
from satchel.rules import MaxCalls, ToolRule, TurnState
from satchel.tools import ErrorInfo, ToolContext, ToolResult

if TYPE_CHECKING:
    from satchel.consent import PermissionBroker

__all__ = ["ToolDispatch"]


class ToolDispatch(ConversationLog):
    """Tool dispatch of :class:`~satchel.agent.Agent` (see the module docstring); the
    agent supplies the attributes below."""

    tools: ToolRegistry
    rules: list[ToolRule]
    router: MessageRouter | None
    broker: PermissionBroker | None
    budget: ContextBudget
    _count: Callable[[str], int]

    async def _run_calls(
        self,
        run: RunResult,
        history: list[ChatMessage],
        state: TurnState,
        calls: Sequence[ToolCall],
        allowed: Sequence[str],
        approvals: dict[str, str] | None = None,
    ) -> AsyncIterator[RunEvent]:
        ended: str | None = None  # the terminal tool that ended the turn in this batch
        for call in calls:
            earlier = identical_calls(call, run.tool_calls)
            limit = self.budget.repeat_limit
            again = limit is not None and earlier + 1 >= limit
            found = self.tools.get(call.name)
            name = found.spec.name if found is not None else call.name  # `tool@1` is `tool`
            capped = self._capped(name, state)  # a limit reached earlier in this batch
            permitted = name in allowed and ended is None and not capped
            yield ToolCallEvent(call, permitted and not again)
            unmet = state.unmet(found.spec.requires) if permitted and found is not None else []
            if ended is not None:
                result = _after_terminal(call.name, ended)
            elif capped:
                result = _capped(call.name, capped)
            elif again:
                result = repeated(call, earlier + 1)
            elif unmet:
                result = _unmet(name, unmet)
            elif permitted:
                origin = f"agent:{self.name}"
                ctx = ToolContext(
                    agent=self.name,
                    origin=origin,
                    call_id=call.id,
                    approval_id=(approvals or {}).get(call.id or ""),
                    extras={"conversation_id": run.conversation_id},
                    conversation_id=run.conversation_id,
                    turn_started_at=run.started_at,
                    memory=None
                    if self.memory is None
                    else AgentMemory(self.memory, self.name, RequestOrigin(channel=origin)),
                    router=self.router,
                    broker=self.broker,
                )
                result = await self.tools.call(call.name, call.arguments, ctx)
                state.calls.append(name)
                if result.ok:
                    state.last_output = result.output
                    state.succeeded.append(name)
            else:
                result = _refused(call.name, allowed)
            run.tool_calls.append((call, result))
            yield ToolResultEvent(call, result)
            await self._add(
                run,
                history,
                ChatMessage(
                    role="tool",
                    content=tool_message(call, result, earlier, self.budget, self._count),
                    tool_call_id=call.id,
                    name=call.name,
                ),
                result,
            )
            if result.error is not None and result.error.kind == "needs_approval":
                approval = str(result.error.details.get("approval_id", ""))
                run.pending_approvals.append(approval)
                run.stop = "needs_approval"
                yield ApprovalEvent(call, approval)
            elif permitted and self._ends_turn(call.name) and result.ok:
                run.stop = "terminal"
                run.reply = run.reply or _said_to_user(call)
                ended = call.name
            elif again:
                run.stop = "repeated"

    def _capped(self, tool: str, state: TurnState) -> list[str]:
        """The call limits (:class:`~satchel.rules.MaxCalls`) ``tool`` has reached,
        counting the calls already run in this batch: one reply with 30 calls runs at
        most the limit's number of them."""
        return [
            r.render()
            for r in self.rules
            if isinstance(r, MaxCalls) and not r.allowed(state, [tool])
        ]

    def _ends_turn(self, tool: str) -> bool:
        verdicts = [v for r in self.rules if (v := r.ends_turn(tool)) is not None]
        return bool(verdicts) and False not in verdicts

    def _allowed(self, state: TurnState) -> list[str]:
        names: list[str] = self.tools.names()
        for rule in self.rules:
            names = list(rule.allowed(state, names))
        return names


def _refused(tool: str, allowed: Sequence[str]) -> ToolResult:
    choice = ", ".join(allowed) if allowed else "no tool: answer in text"
    return ToolResult(
        tool,
        error=ErrorInfo(
            "denied",
            f"The tool rules do not allow {tool} now; nothing ran. You may call: {choice}.",
            {"allowed": list(allowed)},
        ),
    )


def _capped(tool: str, limits: Sequence[str]) -> ToolResult:
    return ToolResult(
        tool,
        error=ErrorInfo(
            "denied",
            f"The call limit is reached ({' '.join(limits)}); {tool} did not run.",
            {"limits": list(limits)},
        ),
    )


def _after_terminal(tool: str, ended: str) -> ToolResult:
    return ToolResult(
        tool,
        error=ErrorInfo(
            "denied",
            f"The turn ended when {ended} ran earlier in this reply; {tool} did not run.",
            {"ended_by": ended},
        ),
    )


def _unmet(tool: str, unmet: Sequence[str]) -> ToolResult:
    names = ", ".join(unmet)
    return ToolResult(
        tool,
        error=ErrorInfo(
            "denied",
            f"{tool} requires {names} to have run successfully earlier in this turn; "
            f"nothing ran. Call {names} first, then {tool}.",
            {"requires": list(unmet)},
        ),
    )


def _said_to_user(call: ToolCall) -> str:
    if call.name != "send_message" or not isinstance(call.arguments, dict):
        return ""
    target = as_mapping(call.arguments.get("target"))
    content = call.arguments.get("content")
    if target.get("type", "user") != "user" or content is None:
        return ""
    return str(content)
