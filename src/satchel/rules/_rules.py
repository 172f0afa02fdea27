"""Tool rules: one object each that renders into the agent's context *and* constrains
the run loop (Letta's tool rules, as plain satchel objects).

The loop asks every rule four things about the turn so far (:class:`TurnState`):
which tools may be offered next (:meth:`ToolRule.allowed`), whether a call in the
batch the model just sent may still run (:meth:`ToolRule.batch_limit`), whether a
finished call ends the turn (:meth:`ToolRule.ends_turn`), and whether the turn may end
now (:meth:`ToolRule.blocks_exit`). A call the rules do not allow is never run: the model
gets a ``denied`` result that says why, and may try again.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any, cast

from satchel._errors import SatchelUsageError

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


@dataclass(kw_only=True)
class TurnState:
    """What happened so far in one turn (one user message and the work it caused).

    Attributes:
        calls: The tools called this turn, in order (refused calls are not counted).
        last_output: The structured output of the last call that succeeded, if any.
        succeeded: The tools whose calls succeeded this turn, in order (a tool's
            ``requires`` are met by these).
    """

    calls: list[str] = field(default_factory=list[str])
    last_output: Any = None
    succeeded: list[str] = field(default_factory=list[str])

    def unmet(self, requires: Collection[str]) -> list[str]:
        """The tools among ``requires`` (``name`` or ``name@version``) that have not
        succeeded this turn."""
        done = set(self.succeeded)
        return [r for r in requires if r.partition("@")[0] not in done and r not in done]

    @property
    def last(self) -> str | None:
        """The last tool called this turn."""
        return self.calls[-1] if self.calls else None

    def count(self, tool: str | None = None) -> int:
        """Calls this turn, of ``tool`` or of any tool."""
        return len(self.calls) if tool is None else Counter(self.calls)[tool]


class ToolRule:
    """Base of the rules; each overrides what it constrains."""

    def render(self) -> str:
        """The rule in words, for the agent's context."""
        raise NotImplementedError

    def allowed(self, state: TurnState, tools: Collection[str]) -> Collection[str]:
        """The subset of ``tools`` this rule lets the model call next."""
        return tools

    def batch_limit(self, state: TurnState, tool: str) -> str | None:
        """The limit, in words, that a call of ``tool`` has reached by the calls run
        so far, or ``None`` to let it run.

        The model may send many calls in one reply, all offered under the rules as
        they stood before the first ran; the loop asks this before each of them, so a
        limit holds within the batch too. The default never limits.
        """
        return None

    def ends_turn(self, tool: str) -> bool | None:
        """Whether a finished call of ``tool`` ends the turn (``None``: no opinion)."""
        return None

    def blocks_exit(self, state: TurnState) -> str | None:
        """Why the turn may not end yet, or ``None``."""
        return None

    def forced_call(self, state: TurnState) -> tuple[str, dict[str, Any]] | None:
        """A call the runtime makes itself before asking the model, or ``None``."""
        return None


@dataclass(frozen=True)
class Terminal(ToolRule):
    """The turn ends after ``tool`` runs (``send_message`` has this rule by default)."""

    tool: str

    def render(self) -> str:
        return f"Calling {self.tool} ends your turn."

    def ends_turn(self, tool: str) -> bool | None:
        return True if tool == self.tool else None


@dataclass(frozen=True)
class Continue(ToolRule):
    """After ``tool`` runs the model is always called again (overrides
    :class:`Terminal` for the same tool)."""

    tool: str

    def render(self) -> str:
        return f"After {self.tool}, continue: you will be asked again."

    def ends_turn(self, tool: str) -> bool | None:
        return False if tool == self.tool else None


@dataclass(frozen=True)
class Init(ToolRule):
    """``tool`` is the first call of every turn. With ``arguments``, the runtime makes
    that call itself before the model is asked; without, only ``tool`` is offered
    until it ran."""

    tool: str
    arguments: Mapping[str, Any] | None = None

    def render(self) -> str:
        return f"Start every turn with {self.tool}."

    def allowed(self, state: TurnState, tools: Collection[str]) -> Collection[str]:
        if state.calls:
            return tools
        return [t for t in tools if t == self.tool]

    def forced_call(self, state: TurnState) -> tuple[str, dict[str, Any]] | None:
        if state.calls or self.arguments is None:
            return None
        return self.tool, dict(self.arguments)


@dataclass(frozen=True)
class AllowedChildren(ToolRule):
    """Right after ``tool``, only ``children`` may be called."""

    tool: str
    children: tuple[str, ...]

    def __init__(self, tool: str, children: Collection[str]) -> None:
        object.__setattr__(self, "tool", tool)
        object.__setattr__(self, "children", tuple(children))

    def render(self) -> str:
        return f"After {self.tool}, call only {', '.join(self.children)}."

    def allowed(self, state: TurnState, tools: Collection[str]) -> Collection[str]:
        if state.last != self.tool:
            return tools
        return [t for t in tools if t in self.children]


@dataclass(frozen=True)
class MaxCalls(ToolRule):
    """At most ``limit`` calls per turn: of ``tool``, or of all tools together."""

    limit: int
    tool: str | None = None

    def __post_init__(self) -> None:
        if self.limit < 1:
            raise SatchelUsageError(f"MaxCalls needs a limit of at least 1, not {self.limit}.")

    def render(self) -> str:
        what = self.tool or "tools"
        return f"Call {what} at most {self.limit} time{'s' if self.limit != 1 else ''} a turn."

    def allowed(self, state: TurnState, tools: Collection[str]) -> Collection[str]:
        if state.count(self.tool) < self.limit:
            return tools
        return [] if self.tool is None else [t for t in tools if t != self.tool]

    def batch_limit(self, state: TurnState, tool: str) -> str | None:
        """This rule in words once ``tool`` may not run again this turn: one reply with
        30 calls runs at most ``limit`` of them."""
        return None if self.allowed(state, [tool]) else self.render()


@dataclass(frozen=True)
class RequiredBeforeExit(ToolRule):
    """The turn may not end before ``tool`` ran."""

    tool: str

    def render(self) -> str:
        return f"Call {self.tool} before you finish your turn."

    def blocks_exit(self, state: TurnState) -> str | None:
        if self.tool in state.calls:
            return None
        return f"Call {self.tool} before you finish your turn."


@dataclass(frozen=True)
class Conditional(ToolRule):
    """After ``tool``, the next tool depends on its output: the output's ``field``
    (or the whole output, when it is a string) is looked up in ``choices``; no match
    leaves ``default`` (or, without one, any tool)."""

    tool: str
    choices: Mapping[str, str]
    field: str | None = None
    default: str | None = None

    def render(self) -> str:
        pairs = ", ".join(f"{k!r} -> {v}" for k, v in self.choices.items())
        return f"After {self.tool}, the next tool depends on its result ({pairs})."

    def allowed(self, state: TurnState, tools: Collection[str]) -> Collection[str]:
        if state.last != self.tool:
            return tools
        value: Any = state.last_output
        if self.field is not None and isinstance(value, Mapping):
            value = cast(Mapping[str, Any], value).get(self.field)
        chosen = self.choices.get(str(value)) if value is not None else None
        chosen = chosen or self.default
        return tools if chosen is None else [t for t in tools if t == chosen]
