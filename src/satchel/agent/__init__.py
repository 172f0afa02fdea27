"""The agent runtime: :class:`Agent` runs a model with satchel's tools and memory, one
turn at a time, under tool rules (:mod:`satchel.rules`), recording the conversation in
the memory store.

Example:
    >>> from satchel.agent import Agent, TestModel, call
    >>> agent = Agent("ada", TestModel([call("context", {"operation": "list"}), "Hi!"]),
    ...               memory=store)
    >>> result = await agent.run("Hello")
    >>> result.reply, result.stop
    ('Hi!', 'reply')

Models: :class:`TestModel` and :class:`FunctionModel` (scripted, no network), and
:func:`model_from_string` for ``openai:MODEL`` (any OpenAI-compatible server) through
the official SDK (``pip install 'satchel[openai]'``).
"""

from satchel.agent._agent import Agent
from satchel.agent._context import ContextBudget, counter_for, fit_history
from satchel.agent._messages import ChatMessage, ModelRequest, ModelResponse, Usage
from satchel.agent._model_clients import model_from_string
from satchel.agent._models import FunctionModel, Model, StreamingModel, TestModel, call
from satchel.agent._run import (
    ApprovalEvent,
    FinalEvent,
    RunEvent,
    RunResult,
    StopReason,
    TextDeltaEvent,
    TextEvent,
    ToolCallEvent,
    ToolResultEvent,
)
from satchel.agent._team import AgentTeam, Supervisor, TeamResult

__all__ = [
    "Agent",
    "AgentTeam",
    "ApprovalEvent",
    "ChatMessage",
    "ContextBudget",
    "FinalEvent",
    "FunctionModel",
    "Model",
    "ModelRequest",
    "ModelResponse",
    "RunEvent",
    "RunResult",
    "StopReason",
    "StreamingModel",
    "Supervisor",
    "TeamResult",
    "TestModel",
    "TextDeltaEvent",
    "TextEvent",
    "ToolCallEvent",
    "ToolResultEvent",
    "Usage",
    "call",
    "counter_for",
    "fit_history",
    "model_from_string",
]
