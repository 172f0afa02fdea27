"""The tool calls of :class:`~satchel.agent.Agent`: :class:`ToolRunner` runs one batch
of the model's tool calls under the tool rules.

Each call is checked against the tools the rules allow now, the per-batch limits the
rules set (:meth:`~satchel.rules.ToolRule.batch_limit`) and the tools it requires, run
with a :class:`~satchel.tools.ToolContext` for the agent, and recorded with its result;
a call that waits for a human's approval stops the turn, as does a terminal tool that
succeeded, and so does a call repeated up to the budget's ``repeat_limit``
(:mod:`satchel.agent._bounds`, which also cuts each result to the budget).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from satchel.agent._agent_history import ConversationLog, as_mapping
from satchel.agent._bounds import identical_calls, repeated, tool_message
from satchel.agent._context import ContextBudget
from satchel.agent._messages import ChatMessage
from satchel.agent._run import ApprovalEvent, RunEvent, RunResult, ToolCallEvent, ToolResultEvent
from satchel.builtin import MessageRouter
from satchel.memory import AgentMemory, RequestOrigin
from satchel.providers import ToolCall
from satchel.registry import BaseRegistry
from satchel.rules import ToolRule, TurnState
from satchel.tools import ErrorInfo, ToolContext, ToolResult

if TYPE_CHECKING:
    from satchel.consent import PermissionBroker

__all__ = ["ToolRunner"]


class ToolRunner:
    """Runs an agent's tool calls under its rules (see the module docstring).

    Args:
        tools: The tools the agent may call.
        rules: The tool rules that constrain the turn.
        router: Every tool's ``ctx.router``.
        broker: Every tool's ``ctx.broker``.
        log: The agent's conversation: whose calls these are, the store its tools'
            ``ctx.memory`` writes to, and where each result is recorded.
        budget: How large a result enters the history, and how often a call repeats.
        count: Counts the tokens of a text, as the model does.
    """

    def __init__(
        self,
        tools: BaseRegistry,
        rules: list[ToolRule],
        router: MessageRouter | None,
        broker: PermissionBroker | None,
        *,
        log: ConversationLog,
        budget: ContextBudget,
        count: Callable[[str], int],
    ) -> None:
        self.tools = tools
        self.rules = rules
        self.router = router
        self.broker = broker
        self.log = log
        self.budget = budget
        self.count = count
        self.model: Any = None
        """The agent's model: every tool's ``ctx.model``."""

    def allowed(self, state: TurnState) -> list[str]:
        """The tools the rules let the model call next."""
        names: list[str] = self.tools.names()
        for rule in self.rules:
            names = list(rule.allowed(state, names))
        return names

    def forced_call(self, state: TurnState) -> tuple[str, dict[str, Any]] | None:
        """A call a rule makes before the model is asked, or ``None``."""
        return next((f for r in self.rules if (f := r.forced_call(state))), None)

    def blocks_exit(self, state: TurnState) -> str | None:
        """Why a rule keeps the turn from ending now, or ``None``."""
        return next((b for r in self.rules if (b := r.blocks_exit(state))), None)

    def ends_turn(self, tool: str) -> bool:
        """Whether a finished call of ``tool`` ends the turn."""
        verdicts = [v for r in self.rules if (v := r.ends_turn(tool)) is not None]
        return bool(verdicts) and False not in verdicts

    def batch_limits(self, tool: str, state: TurnState) -> list[str]:
        """The limits (:meth:`~satchel.rules.ToolRule.batch_limit`) that a call of
        ``tool`` has reached, counting the calls already run in this batch: one reply
        with 30 calls runs at most a limit's number of them."""
        return [limit for r in self.rules if (limit := r.batch_limit(state, tool))]

    async def run_calls(
        self,
        run: RunResult,
        history: list[ChatMessage],
        state: TurnState,
        calls: Sequence[ToolCall],
        allowed: Sequence[str],
        approvals: dict[str, str] | None = None,
    ) -> AsyncIterator[RunEvent]:
        """Run one batch of calls, yielding each call and result as it happens (see the
        module docstring); ``approvals``: call id -> the approval id it runs under."""
        ended: str | None = None  # the terminal tool that ended the turn in this batch
        for call in calls:
            earlier = identical_calls(call, run.tool_calls)
            limit = self.budget.repeat_limit
            again = limit is not None and earlier + 1 >= limit
            found = self.tools.get(call.name)
            name = found.spec.name if found is not None else call.name  # `tool@1` is `tool`
            capped = self.batch_limits(name, state)  # a limit reached earlier in this batch
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
                result = await self.tools.call(
                    call.name, call.arguments, self._context(run, call, approvals)
                )
                state.calls.append(name)
                if result.ok:
                    state.last_output = result.output
                    state.succeeded.append(name)
            else:
                result = _refused(call.name, allowed)
            run.tool_calls.append((call, result))
            yield ToolResultEvent(call, result)
            await self.log.add(
                run,
                history,
                ChatMessage(
                    role="tool",
                    content=tool_message(call, result, earlier, self.budget, self.count),
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
            elif permitted and self.ends_turn(call.name) and result.ok:
                run.stop = "terminal"
                run.reply = run.reply or _said_to_user(call)
                ended = call.name
            elif again:
                run.stop = "repeated"

    def _context(
        self, run: RunResult, call: ToolCall, approvals: dict[str, str] | None
    ) -> ToolContext:
        return self.context(
            run.conversation_id,
            call_id=call.id,
            approval_id=(approvals or {}).get(call.id or ""),
            turn_started_at=run.started_at,
            origin=run.origin,
        )

    def context(
        self,
        conversation_id: str,
        *,
        call_id: str | None = None,
        approval_id: str | None = None,
        turn_started_at: datetime | None = None,
        origin: str | None = None,
    ) -> ToolContext:
        """The context a tool called by this agent runs with: the agent, its memory
        (writes from ``origin``, by default ``agent:NAME``), router, broker and model,
        in ``conversation_id``."""
        agent, memory = self.log.name, self.log.memory
        origin = origin or f"agent:{agent}"
        return ToolContext(
            agent=agent,
            origin=origin,
            call_id=call_id,
            approval_id=approval_id,
            extras={"conversation_id": conversation_id},
            conversation_id=conversation_id,
            turn_started_at=turn_started_at,
            memory=None
            if memory is None
            else AgentMemory(memory, agent, RequestOrigin(channel=origin)),
            router=self.router,
            broker=self.broker,
            model=self.model,
        )


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
