"""Tool rules for :class:`~satchel.agent.Agent`: each renders into the agent's context
and constrains its run loop.

Example:
    >>> from satchel.rules import MaxCalls, Terminal
    >>> agent = Agent("ada", model, tools=registry, rules=[Terminal("send_message"),
    ...                                                     MaxCalls(20)])
"""

from satchel.rules._rules import (
    AllowedChildren,
    Conditional,
    Continue,
    Init,
    MaxCalls,
    RequiredBeforeExit,
    Terminal,
    ToolRule,
    TurnState,
)

__all__ = [
    "AllowedChildren",
    "Conditional",
    "Continue",
    "Init",
    "MaxCalls",
    "RequiredBeforeExit",
    "Terminal",
    "ToolRule",
    "TurnState",
]
