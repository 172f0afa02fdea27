"""The conversation history of :class:`~satchel.agent.Agent`: loading it from the
memory store (or from the agent itself without one) and recording each message as it
is said.

A loaded history has each tool result right after the call it answers, and the stored
running summary (:mod:`satchel.agent._summary`) is kept apart from the messages. A
recorded message carries in its metadata what reading it back needs: the tool calls of
an assistant message, the call id and tool name of a tool result. :class:`ConversationLog`
is a part of the agent (a base), kept in its own module; it holds no state of its own.

A turn cut short (Ctrl-C, or any cancellation of the task running it) is recorded as
interrupted: each call it made that has no result yet gets an ``interrupted`` result,
then a ``system`` note (metadata ``kind: interrupted``) says the turn stopped. The next
turn's history thus reads sensibly, and every tool call still has its result, which
both providers require.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any, cast

import anyio

from satchel.agent._messages import ChatMessage
from satchel.agent._run import RunEvent, RunResult
from satchel.agent._summary import SUMMARY_KIND
from satchel.memory import MemoryStore, Message
from satchel.providers import ToolCall
from satchel.tools import ErrorInfo, ToolResult

__all__ = ["INTERRUPTED_KIND", "RULE_NOTE", "ConversationLog", "as_mapping"]

_HISTORY_LOAD = 200
RULE_NOTE = "[satchel] "
"""The start of a note the tool rules add to the conversation (recorded as a
``system`` message)."""

INTERRUPTED_KIND = "interrupted"
"""The ``kind`` in the metadata of the note that records an interrupted turn (and of
the results given to the calls it left unanswered)."""

_INTERRUPTED_NOTE = (
    RULE_NOTE + "This turn was interrupted before it finished (Ctrl-C, or cancelled); "
    "what was under way when it stopped may be incomplete."
)
_INTERRUPTED_CALL = (
    "Interrupted: the turn was stopped while this call was pending; it may or may not "
    "have taken effect. Check before repeating it."
)
_UNANSWERED_CALL = (
    "Error (failed): no result was recorded for this call (the turn ended while it "
    "was pending); it may or may not have taken effect."
)
_RECORD_GRACE = 5.0
"""Seconds an interrupted turn may take to record the interruption."""


class ConversationLog:
    """The conversation history of one agent (see the module docstring).

    Args:
        name: The agent whose conversations these are.
        memory: The store they are recorded in; without one, they live in this object.
    """

    def __init__(self, name: str, memory: MemoryStore | None) -> None:
        self.name = name
        self.memory = memory
        self._histories: dict[str, list[ChatMessage]] = {}
        self._summaries: dict[str, tuple[str, datetime | None]] = {}

    async def load(self, conversation: str) -> list[ChatMessage]:
        """The history of ``conversation``, oldest first (the stored running summary is
        kept apart: see :meth:`summary`)."""
        if self.memory is None:
            return self._histories.setdefault(conversation, [])
        stored = await self.memory.list_messages(
            self.name, conversation_id=conversation, limit=_HISTORY_LOAD
        )
        messages: list[Message] = []
        for message in stored:
            meta = message.metadata or {}
            if message.role == "system" and meta.get("kind") == SUMMARY_KIND:
                through = _timestamp(meta.get("through")) or message.created_at
                self._summaries[conversation] = (message.content, through)
            else:
                messages.append(message)
        return _paired([m for m in map(_from_stored, messages) if m is not None])

    def summary(self, conversation: str) -> tuple[str, datetime | None]:
        """The running summary of what left the prompt of ``conversation``, and the
        time of the last message it covers (``("", None)``: none yet)."""
        return self._summaries.get(conversation, ("", None))

    async def save_summary(self, conversation: str, text: str, through: datetime) -> None:
        """Make ``text`` the running summary of ``conversation``, covering the messages
        up to ``through``, and store it."""
        self._summaries[conversation] = (text, through)
        if self.memory is not None:
            await self.memory.add_message(
                self.name,
                "system",
                text,
                conversation_id=conversation,
                metadata={"kind": SUMMARY_KIND, "through": through.isoformat()},
            )

    async def interruptible(
        self, run: RunResult, history: list[ChatMessage], events: AsyncIterator[RunEvent]
    ) -> AsyncIterator[RunEvent]:
        """``events``; if the turn is cancelled midway (Ctrl-C), the interruption is
        recorded (see the module docstring) before the cancellation goes on."""
        try:
            async for event in events:
                yield event
        except (anyio.get_cancelled_exc_class(), KeyboardInterrupt):
            with anyio.move_on_after(_RECORD_GRACE, shield=True):
                await self._record_interruption(run, history)
            raise

    async def _record_interruption(self, run: RunResult, history: list[ChatMessage]) -> None:
        answered = {m.tool_call_id for m in run.messages if m.role == "tool"}
        pending = [
            call
            for message in run.messages
            for call in message.tool_calls
            if call.id is None or call.id not in answered
        ]
        for call in pending:
            result = ToolResult(call.name, error=ErrorInfo("failed", _INTERRUPTED_CALL))
            run.tool_calls.append((call, result))
            tool = ChatMessage(
                role="tool", content=result.to_text(), tool_call_id=call.id, name=call.name
            )
            await self.add(run, history, tool, result, kind=INTERRUPTED_KIND)
        note = ChatMessage(role="user", content=_INTERRUPTED_NOTE)
        await self.add(run, history, note, kind=INTERRUPTED_KIND)

    async def add(
        self,
        run: RunResult,
        history: list[ChatMessage],
        message: ChatMessage,
        result: ToolResult | None = None,
        *,
        kind: str | None = None,
    ) -> None:
        """Append ``message`` to ``history`` and to ``run``, and record it in the store
        (``result``: the tool result it says; ``kind``: a note's kind, in its metadata)."""
        if message.created_at is None:
            message = replace(message, created_at=datetime.now(UTC))
        history.append(message)
        run.messages.append(message)
        if self.memory is None:
            return
        metadata: dict[str, Any] = {}
        content = message.content
        role = message.role
        if message.tool_calls:
            metadata["tool_calls"] = [
                {"id": c.id, "name": c.name, "arguments": c.arguments} for c in message.tool_calls
            ]
            if not content:  # searchable words for a message that only called tools
                content = "; ".join(f"{c.name}({_args_text(c)})" for c in message.tool_calls)
                metadata["content_from_calls"] = True
        if message.role == "tool":
            metadata.update(tool_call_id=message.tool_call_id, name=message.name)
            if result is not None:
                metadata["ok"] = result.ok
        if message.role == "user" and content.startswith(RULE_NOTE):
            role = "system"
        if kind is not None:
            metadata["kind"] = kind
        await self.memory.add_message(
            self.name,
            role,
            content or "(empty)",
            conversation_id=run.conversation_id,
            created_at=message.created_at,
            metadata=metadata or None,
        )


def _args_text(call: ToolCall) -> str:
    if isinstance(call.arguments, str):
        return call.arguments[:200]
    return json.dumps(call.arguments, ensure_ascii=False)[:200]


def as_mapping(value: object) -> dict[str, Any]:
    """``value`` if it is a JSON object, else ``{}`` (metadata read back is untyped)."""
    return cast(dict[str, Any], value) if isinstance(value, dict) else {}


def _timestamp(value: object) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        return None


def _paired(history: list[ChatMessage]) -> list[ChatMessage]:
    """``history`` with each tool result right after the message that called it (a tool
    such as ``send_message`` records its own message while it runs, between the call
    and its result, and providers refuse anything between the two). A call with no
    recorded result (its process was killed) is given one saying so: providers refuse
    a call without its result."""
    results = {m.tool_call_id: m for m in history if m.role == "tool" and m.tool_call_id}
    placed: set[str] = set()
    ordered: list[ChatMessage] = []
    for message in history:
        if message.role == "tool":
            if message.tool_call_id in placed:
                continue
            ordered.append(message)  # a result whose call is not in the window
            continue
        ordered.append(message)
        for call in message.tool_calls:
            found = results.get(call.id) if call.id else None
            if found is None and call.id:  # its turn ended with it (a killed process)
                found = ChatMessage(
                    role="tool",
                    content=_UNANSWERED_CALL,
                    tool_call_id=call.id,
                    name=call.name,
                    created_at=message.created_at,
                )
            if found is not None and call.id not in placed:
                ordered.append(found)
                placed.add(call.id or "")
    return ordered


def _from_stored(message: Message) -> ChatMessage | None:
    meta = dict(message.metadata or {})
    if message.role == "user":
        sender = meta.get("from")
        prefix = f"[message from {sender}] " if isinstance(sender, str) else ""
        return ChatMessage(
            role="user", content=prefix + message.content, created_at=message.created_at
        )
    if message.role == "system":
        return ChatMessage(role="user", content=message.content, created_at=message.created_at)
    if message.role == "assistant":
        stored: list[Any] = list(meta.get("tool_calls") or ())
        calls = tuple(
            ToolCall(
                None if (c := as_mapping(item)).get("id") is None else str(c["id"]),
                str(c.get("name", "")),
                as_mapping(c.get("arguments")),
            )
            for item in stored
        )
        text = "" if meta.get("content_from_calls") else message.content
        return ChatMessage(
            role="assistant", content=text, tool_calls=calls, created_at=message.created_at
        )
    return ChatMessage(
        role="tool",
        content=message.content,
        tool_call_id=meta.get("tool_call_id"),
        name=meta.get("name"),
        created_at=message.created_at,
    )
