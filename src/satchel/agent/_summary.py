"""The model-written running summary (MemGPT-style): when messages leave the prompt,
the model folds them into the summary it wrote before, and the new summary is stored
in the conversation so a later process goes on from it.

A summary is a ``system`` message of the conversation whose metadata says
``{"kind": "summary", "through": <created_at of the last message it covers>}``; it is
never shown to the model as a message, only as the "Earlier in this conversation"
section of the system prompt.
"""

from __future__ import annotations

from collections.abc import Sequence

from satchel.agent._messages import ChatMessage, ModelRequest, Usage
from satchel.agent._models import Model

__all__ = ["SUMMARY_KIND", "summarize"]

SUMMARY_KIND = "summary"
"""The ``metadata["kind"]`` of a stored running summary."""

_INSTRUCTIONS = (
    "You keep the running summary of a conversation between a user and an assistant "
    "(who may call tools). Fold the new messages into the summary so far. Keep facts "
    "about the user, decisions, promises, open questions and what tools did; drop "
    "small talk. Write plain sentences, at most {words} words. Answer with the summary "
    "only."
)


def _transcript(messages: Sequence[ChatMessage]) -> str:
    lines: list[str] = []
    for message in messages:
        if message.tool_calls:
            calls = ", ".join(f"{c.name}({c.arguments})" for c in message.tool_calls)
            lines.append(f"assistant called {calls}")
        if message.content:
            who = f"tool {message.name}" if message.role == "tool" else message.role
            lines.append(f"{who}: {message.content}")
    return "\n".join(lines)


async def summarize(
    model: Model, previous: str, messages: Sequence[ChatMessage], *, words: int
) -> tuple[str, Usage]:
    """The new running summary: ``previous`` with ``messages`` folded in.

    Returns:
        The summary and the tokens the request used.
    """
    body = f"Summary so far:\n{previous or '(none yet)'}\n\nNew messages:\n{_transcript(messages)}"
    response = await model.request(
        ModelRequest(
            system=_INSTRUCTIONS.format(words=words),
            messages=[ChatMessage(role="user", content=body)],
        )
    )
    return response.text.strip() or previous, response.usage
