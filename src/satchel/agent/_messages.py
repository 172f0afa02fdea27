"""What the agent runtime and a model exchange: chat messages, one model request and
its response, and token usage, in a provider-neutral shape.

A provider (:mod:`satchel.agent._openai`) turns these into its own wire format; a
scripted model (:class:`~satchel.agent.FunctionModel`) reads them as they are.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from satchel.providers import ToolCall

__all__ = ["ChatMessage", "ModelRequest", "ModelResponse", "Usage"]


@dataclass(frozen=True, kw_only=True, slots=True)
class ChatMessage:
    """One message of the conversation a model sees.

    Attributes:
        role: ``user``, ``assistant`` or ``tool`` (the system prompt travels apart,
            in :attr:`ModelRequest.system`).
        content: The text (for a tool message, the result as the model reads it).
        tool_calls: The calls an assistant message asked for.
        tool_call_id: For a tool message, the id of the call it answers.
        name: For a tool message, the tool's name.
        created_at: When it was said (set when the runtime records it).
    """

    role: Literal["user", "assistant", "tool"]
    content: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    name: str | None = None
    created_at: datetime | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class ModelRequest:
    """Everything one model call needs.

    Attributes:
        system: The system prompt: instructions, rendered memory, usage and tool rules.
        messages: The conversation that fits the budget, oldest first.
        tools: The tool definitions offered now, in the model's ``dialect``
            (``openai`` unless the model says otherwise), already narrowed by the
            tool rules.
        tool_names: The names of the offered tools, in order.
        require_tool: When set, the model must call one of :attr:`tool_names` (the
            rules allow nothing else now).
    """

    system: str
    messages: Sequence[ChatMessage]
    tools: Sequence[dict[str, Any]] = ()
    tool_names: Sequence[str] = ()
    require_tool: bool = False


@dataclass(frozen=True, kw_only=True, slots=True)
class Usage:
    """Tokens a run used, as the model reported them (0 when it did not)."""

    input_tokens: int = 0
    output_tokens: int = 0
    requests: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            requests=self.requests + other.requests,
        )


@dataclass(frozen=True, kw_only=True, slots=True)
class ModelResponse:
    """What the model answered: text, tool calls, or both.

    Attributes:
        text: The text (may be empty when the model only calls tools).
        tool_calls: The calls it asks for, in order.
        usage: Tokens this request used.
    """

    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    usage: Usage = field(default_factory=Usage)
