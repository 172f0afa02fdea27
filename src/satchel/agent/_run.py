"""What a run yields while it goes (events) and what it returns (the run record)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from satchel.agent._messages import ChatMessage, Usage
from satchel.providers import ToolCall
from satchel.tools import ToolResult

__all__ = [
    "ApprovalEvent",
    "FinalEvent",
    "RunEvent",
    "RunResult",
    "StopReason",
    "TextDeltaEvent",
    "TextEvent",
    "ToolCallEvent",
    "ToolResultEvent",
]

StopReason = Literal["reply", "terminal", "max_steps", "needs_approval", "rules", "repeated"]
"""Why a run ended: the model answered, a terminal tool ran, the step limit was hit, a
call waits for a human's approval, the rules allowed no further call, or the model
made the same call (same tool, same arguments) ``ContextBudget.repeat_limit`` times."""


@dataclass(frozen=True, slots=True)
class TextEvent:
    """The model said something (the whole text of one response)."""

    text: str
    kind: Literal["text"] = "text"


@dataclass(frozen=True, slots=True)
class TextDeltaEvent:
    """A piece of the model's text as it streams (a streaming model only; the whole
    text still follows as a :class:`TextEvent`)."""

    delta: str
    kind: Literal["text_delta"] = "text_delta"


@dataclass(frozen=True, slots=True)
class ToolCallEvent:
    """The model asked for a tool call (``allowed`` is false when the rules refused
    it; it then does not run)."""

    call: ToolCall
    allowed: bool = True
    kind: Literal["tool_call"] = "tool_call"


@dataclass(frozen=True, slots=True)
class ToolResultEvent:
    """A tool call finished (or was refused)."""

    call: ToolCall
    result: ToolResult
    kind: Literal["tool_result"] = "tool_result"


@dataclass(frozen=True, slots=True)
class ApprovalEvent:
    """A call waits for a human's approval; the run stops with ``needs_approval``."""

    call: ToolCall
    approval_id: str
    kind: Literal["approval"] = "approval"


@dataclass(frozen=True, slots=True)
class FinalEvent:
    """The run ended; :attr:`result` is its record."""

    result: RunResult
    kind: Literal["final"] = "final"


RunEvent = TextEvent | TextDeltaEvent | ToolCallEvent | ToolResultEvent | ApprovalEvent | FinalEvent
"""Everything :meth:`~satchel.agent.Agent.run_stream` yields."""


@dataclass(kw_only=True)
class RunResult:
    """What happened in one run.

    Attributes:
        agent: The agent's name.
        conversation_id: The conversation the run belongs to.
        reply: What the agent said to the user (its final text, or the content of a
            terminal ``send_message`` to the user).
        stop: Why the run ended (:data:`StopReason`).
        messages: The messages this run added, oldest first, as the conversation stores
            them (a tool result cut to ``ContextBudget.tool_result_tokens``).
        tool_calls: Each call and its whole result, in order.
        usage: Tokens used, as the model reported them.
        pending_approvals: The approval ids of calls that wait for a human.
        started_at: When the turn's first message was recorded (a resumed turn keeps
            the paused one's); its tools' searches leave the turn out from then on.
        origin: Where the turn's message came from (``telegram:123456789``), as its
            tool calls see it in ``ctx.origin``; ``None`` for ``agent:<name>``.
    """

    agent: str
    conversation_id: str
    reply: str = ""
    stop: StopReason = "reply"
    messages: list[ChatMessage] = field(default_factory=list[ChatMessage])
    tool_calls: list[tuple[ToolCall, ToolResult]] = field(
        default_factory=list[tuple[ToolCall, ToolResult]]
    )
    usage: Usage = field(default_factory=Usage)
    pending_approvals: list[str] = field(default_factory=list[str])
    started_at: datetime | None = None
    origin: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready record of the run."""
        return {
            "agent": self.agent,
            "conversation_id": self.conversation_id,
            "reply": self.reply,
            "stop": self.stop,
            "tool_calls": [
                {"id": call.id, "name": call.name, "arguments": call.arguments, **result.to_dict()}
                for call, result in self.tool_calls
            ],
            "usage": {
                "input_tokens": self.usage.input_tokens,
                "output_tokens": self.usage.output_tokens,
                "requests": self.usage.requests,
            },
            "pending_approvals": self.pending_approvals,
        }
