"""What keeps one turn of :class:`~satchel.agent.Agent` bounded: a tool result cut to
:attr:`~satchel.agent.ContextBudget.tool_result_tokens` before it enters the history,
and the repeat check that ends a turn at
:attr:`~satchel.agent.ContextBudget.repeat_limit` identical calls.

Why cut at the door rather than only in the request: the conversation stores what the
model was shown, and ``search`` over conversations finds stored tool results. A stored
result that quoted every earlier result made the next one larger still (issue 27: a
20-step turn took 100 s). Cut before storing, every stored result is bounded, and so is
every later search that quotes it. The whole result stays in
:attr:`~satchel.agent.RunResult.tool_calls` and in the
:class:`~satchel.agent.ToolResultEvent`, for the caller.

Two calls are identical when they name the same tool and their arguments are equal as
JSON (key order and spacing do not count).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from satchel.agent._agent_history import RULE_NOTE
from satchel.agent._context import ContextBudget
from satchel.providers import ToolCall
from satchel.tools import ErrorInfo, ToolResult

__all__ = ["call_key", "identical_calls", "repeated", "tool_message"]


def call_key(call: ToolCall) -> str:
    """The tool and its arguments as canonical JSON: equal for identical calls."""
    arguments: Any = call.arguments
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError:
            return f"{call.name}\n{arguments}"
    text = json.dumps(arguments, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return f"{call.name}\n{text}"


def identical_calls(call: ToolCall, done: Sequence[tuple[ToolCall, ToolResult]]) -> int:
    """How many of the calls ``done`` in this turn are identical to ``call``."""
    key = call_key(call)
    return sum(1 for earlier, _ in done if call_key(earlier) == key)


def repeated(call: ToolCall, times: int) -> ToolResult:
    """The result of a call that came ``times`` times in a turn: not run, and the turn
    ends."""
    return ToolResult(
        call.name,
        error=ErrorInfo(
            "denied",
            f"Not run: this same call ({call.name}, same arguments) came {times} times in "
            "this turn, so the turn ended here. Next time use the result you already "
            "have, or change the arguments.",
            {"repeated": times},
        ),
    )


def tool_message(
    call: ToolCall,
    result: ToolResult,
    earlier: int,
    budget: ContextBudget,
    count: Callable[[str], int],
) -> str:
    """The text of ``result`` as the model reads it and the conversation stores it: cut
    to the budget, and with a note when the same call came ``earlier`` times before in
    this turn."""
    text = result.to_text()
    if budget.tool_result_tokens is not None:
        text = _cut(text, budget.tool_result_tokens, count)
    if earlier and budget.repeat_limit is not None:
        text += (
            f"\n\n{RULE_NOTE}You made this same call ({call.name}, same arguments) "
            f"{earlier + 1} times in this turn. Use the result you have, change the "
            f"arguments, or answer: at {budget.repeat_limit} identical calls the turn ends."
        )
    return text


def _cut(text: str, limit: int, count: Callable[[str], int]) -> str:
    """``text`` if it fits ``limit`` tokens, else its start and a note, within it."""
    total = count(text)
    if total <= limit:
        return text
    note = (
        f"\n\n{RULE_NOTE}Cut here: the whole result has {total} tokens, more than the "
        f"{limit} one result may take. For the rest, ask for less: a narrower query, a "
        "smaller limit, filters, or one item by its id or label (recall read)."
    )
    room = max(limit - count(note), 0)
    end = len(text) * room // total
    while end > 0 and count(text[:end]) > room:
        end = end * 9 // 10
    return text[:end] + note
