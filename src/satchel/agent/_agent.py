""":class:`Agent`: a model, its tools and its memory, in a loop that the tool rules
constrain and that records every message in the memory store.

One run is one turn: the user's message, then model requests and tool calls until the
model answers without calling a tool, a terminal tool runs (``send_message`` by
default), a call waits for approval, the rules allow nothing more, or the step limit is
hit. Each user message, assistant message, tool call and tool result is written to the
store's conversations as it happens (so ``search`` finds them and a later process
resumes the conversation).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, cast

import anyio

from satchel._errors import ModelError, SatchelUsageError
from satchel.agent._context import ContextBudget, counter_for, fit_history
from satchel.agent._messages import ChatMessage, ModelRequest, ModelResponse
from satchel.agent._models import Model, StreamingModel
from satchel.agent._run import (
    ApprovalEvent,
    FinalEvent,
    RunEvent,
    RunResult,
    TextDeltaEvent,
    TextEvent,
    ToolCallEvent,
    ToolResultEvent,
)
from satchel.agent._summary import SUMMARY_KIND, summarize
from satchel.builtin import BuiltinTools, MessageRouter
from satchel.memory import AgentMemory, MemoryStore, Message, RequestOrigin
from satchel.providers import ToolCall
from satchel.registry import ToolRegistry, merged
from satchel.rules import Continue, Terminal, ToolRule, TurnState
from satchel.schema import Dialect
from satchel.tools import ErrorInfo, ToolContext, ToolResult

if TYPE_CHECKING:
    from satchel.consent import PermissionBroker

__all__ = ["Agent"]

_HISTORY_LOAD = 200
_RULE_NOTE = "[satchel] "


class Agent:
    """An agent: a model, tools and memory, run one turn at a time.

    Args:
        name: The agent's name: whose memory it reads and writes (``ctx.agent``).
        model: The :class:`~satchel.agent.Model` that answers.
        tools: Its tools. With ``memory`` and no ``tools``, the built-in memory tools;
            with both, the memory tools and these.
        memory: The memory store: its blocks are rendered into every request and the
            conversation is recorded there. Without one, history lives in this object.
        rules: Tool rules (:mod:`satchel.rules`); ``send_message`` is terminal unless a
            rule says otherwise.
        instructions: The first part of the system prompt.
        max_steps: Model requests per run, at most.
        budget: How much history a request carries.
        conversation_id: The conversation runs join unless they name another.
        stream: Stream each response from a model that can
            (:class:`~satchel.agent.StreamingModel`): :meth:`run_stream` then yields
            :class:`~satchel.agent.TextDeltaEvent` events as the text arrives.
        router: Delivers the memory tools' ``send_message`` (an
            :class:`~satchel.agent.AgentTeam` passes its own, so messages to other
            agents wake them); also every tool's ``ctx.router``.
        builtins: Which built-in memory tools to add with ``memory``, their options and
            replacements (all four by default; see :class:`~satchel.builtin.BuiltinTools`).
        broker: Asks a human for consent: every tool's ``ctx.broker``.

    Example:
        >>> agent = Agent("ada", TestModel(["Hello!"]), memory=store)
        >>> (await agent.run("Hi")).reply
        'Hello!'
    """

    def __init__(
        self,
        name: str,
        model: Model,
        *,
        tools: ToolRegistry | None = None,
        memory: MemoryStore | None = None,
        rules: Sequence[ToolRule] = (),
        instructions: str = "",
        max_steps: int = 20,
        budget: ContextBudget | None = None,
        conversation_id: str = "default",
        router: MessageRouter | None = None,
        stream: bool = False,
        builtins: BuiltinTools | None = None,
        broker: PermissionBroker | None = None,
    ) -> None:
        if max_steps < 1:
            raise SatchelUsageError(f"max_steps must be at least 1, not {max_steps}.")
        self.name = name
        self.model = model
        self.memory = memory
        if router is None and memory is not None:
            router = MessageRouter(memory)
        self.router = router
        self.broker = broker
        self.tools = _tools_of(tools, memory, router, builtins)
        self.rules = list(rules)
        if "send_message" in self.tools and not any(
            isinstance(r, Terminal | Continue) and r.tool == "send_message" for r in self.rules
        ):
            self.rules.append(Terminal("send_message"))
        self.instructions = instructions
        self.max_steps = max_steps
        self.budget = budget or ContextBudget()
        self.conversation_id = conversation_id
        self.stream = stream
        self._count = counter_for(model.family)
        self._histories: dict[str, list[ChatMessage]] = {}
        self._summaries: dict[str, tuple[str, datetime | None]] = {}

    # -- running ---------------------------------------------------------------

    async def run(self, message: str | None, *, conversation_id: str | None = None) -> RunResult:
        """Run one turn for ``message`` and return its record (``None``: answer what
        already arrived in the conversation, such as another agent's message)."""
        result: RunResult | None = None
        async for event in self.run_stream(message, conversation_id=conversation_id):
            if isinstance(event, FinalEvent):
                result = event.result
        assert result is not None
        return result

    def run_sync(self, message: str | None, *, conversation_id: str | None = None) -> RunResult:
        """:meth:`run` from synchronous code.

        Raises:
            SatchelUsageError: called inside a running event loop.
        """
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return anyio.run(lambda: self.run(message, conversation_id=conversation_id))
        raise SatchelUsageError("run_sync() cannot run inside an event loop; await run().")

    async def run_stream(
        self, message: str | None, *, conversation_id: str | None = None
    ) -> AsyncIterator[RunEvent]:
        """Run one turn, yielding what happens as it happens; the last event is a
        :class:`~satchel.agent.FinalEvent` holding the run's record."""
        conversation = conversation_id or self.conversation_id
        run = RunResult(agent=self.name, conversation_id=conversation)
        history = await self._history(conversation)
        if message is not None:
            await self._add(run, history, ChatMessage(role="user", content=message))
        async for event in self._steps(run, history, TurnState()):
            yield event

    async def resume(self, paused: RunResult) -> RunResult:
        """Go on with a turn that stopped at ``needs_approval``, once a human decided
        (``satchel approvals``, or :meth:`~satchel.consent.PermissionBroker.resolve`):
        each held call is made again with its approval id (it runs if approved, and
        is ``denied`` otherwise), then the model is asked again.

        Raises:
            SatchelUsageError: ``paused`` did not stop at ``needs_approval``.
        """
        result: RunResult | None = None
        async for event in self.resume_stream(paused):
            if isinstance(event, FinalEvent):
                result = event.result
        assert result is not None
        return result

    async def resume_stream(self, paused: RunResult) -> AsyncIterator[RunEvent]:
        """:meth:`resume`, yielding events as :meth:`run_stream` does."""
        if paused.stop != "needs_approval":
            raise SatchelUsageError(
                f"Only a run that stopped at needs_approval can resume; this one stopped "
                f"at {paused.stop!r}."
            )
        run = RunResult(agent=self.name, conversation_id=paused.conversation_id)
        history = await self._history(paused.conversation_id)
        done = [c.name.partition("@")[0] for c, r in paused.tool_calls if r.ok]
        state = TurnState(calls=list(done), succeeded=list(done))
        held = [
            (call, str(result.error.details.get("approval_id", "")))
            for call, result in paused.tool_calls
            if result.error is not None and result.error.kind == "needs_approval"
        ]
        calls = tuple(
            ToolCall(f"{call.id or call.name}_approved", call.name, call.arguments)
            for call, _ in held
        )
        approvals = {
            again.id or "": approval for again, (_, approval) in zip(calls, held, strict=True)
        }
        await self._add(run, history, _calling("", calls))
        names = self.tools.names()
        async for event in self._run_calls(run, history, state, calls, names, approvals):
            yield event
        if run.stop not in ("terminal", "needs_approval"):
            async for event in self._steps(run, history, state):
                yield event
        else:
            yield FinalEvent(run)

    async def _steps(
        self, run: RunResult, history: list[ChatMessage], state: TurnState
    ) -> AsyncIterator[RunEvent]:
        """Ask the model and run its calls until the turn ends; yields the final
        event last."""
        for _ in range(self.max_steps):
            forced = next((f for r in self.rules if (f := r.forced_call(state))), None)
            if forced is not None:
                call = ToolCall(f"init_{len(state.calls)}", forced[0], forced[1])
                await self._add(run, history, _calling("", (call,)))
                async for event in self._run_calls(run, history, state, (call,), forced[:1]):
                    yield event
                continue
            allowed = self._allowed(state)
            request = await self._request(run, history, allowed)
            response: ModelResponse | None = None
            if self.stream and isinstance(self.model, StreamingModel):
                async for item in self.model.stream(request):
                    if isinstance(item, str):
                        yield TextDeltaEvent(item)
                    else:
                        response = item
                if response is None:
                    raise ModelError("the model's stream ended without a response", reason="server")
            else:
                response = await self.model.request(request)
            run.usage = run.usage + response.usage
            if response.text:
                yield TextEvent(response.text)
            if not response.tool_calls:
                blocked = next((b for r in self.rules if (b := r.blocks_exit(state))), None)
                await self._add(run, history, ChatMessage(role="assistant", content=response.text))
                if blocked is None:
                    run.reply, run.stop = response.text, "reply"
                    break
                await self._add(
                    run, history, ChatMessage(role="user", content=_RULE_NOTE + blocked)
                )
                continue
            await self._add(run, history, _calling(response.text, response.tool_calls))
            async for event in self._run_calls(run, history, state, response.tool_calls, allowed):
                yield event
            if run.stop in ("terminal", "needs_approval"):
                run.reply = run.reply or response.text
                break
            if not allowed:
                run.stop, run.reply = "rules", response.text
                break
        else:
            run.stop = "max_steps"
        yield FinalEvent(run)

    # -- one batch of calls ----------------------------------------------------

    async def _run_calls(
        self,
        run: RunResult,
        history: list[ChatMessage],
        state: TurnState,
        calls: Sequence[ToolCall],
        allowed: Sequence[str],
        approvals: dict[str, str] | None = None,
    ) -> AsyncIterator[RunEvent]:
        for call in calls:
            found = self.tools.get(call.name)
            name = found.spec.name if found is not None else call.name  # `tool@1` is `tool`
            permitted = name in allowed
            yield ToolCallEvent(call, permitted)
            unmet = state.unmet(found.spec.requires) if permitted and found is not None else []
            if unmet:
                result = _unmet(name, unmet)
            elif permitted:
                origin = f"agent:{self.name}"
                ctx = ToolContext(
                    agent=self.name,
                    origin=origin,
                    call_id=call.id,
                    approval_id=(approvals or {}).get(call.id or ""),
                    extras={"conversation_id": run.conversation_id},
                    memory=None
                    if self.memory is None
                    else AgentMemory(self.memory, self.name, RequestOrigin(channel=origin)),
                    router=self.router,
                    broker=self.broker,
                )
                result = await self.tools.call(call.name, call.arguments, ctx)
                state.calls.append(name)
                if result.ok:
                    state.last_output = result.output
                    state.succeeded.append(name)
            else:
                result = _refused(call.name, allowed)
            run.tool_calls.append((call, result))
            yield ToolResultEvent(call, result)
            await self._add(
                run,
                history,
                ChatMessage(
                    role="tool", content=result.to_text(), tool_call_id=call.id, name=call.name
                ),
                result,
            )
            if result.error is not None and result.error.kind == "needs_approval":
                approval = str(result.error.details.get("approval_id", ""))
                run.pending_approvals.append(approval)
                run.stop = "needs_approval"
                yield ApprovalEvent(call, approval)
            elif permitted and self._ends_turn(call.name) and result.ok:
                run.stop = "terminal"
                run.reply = run.reply or _said_to_user(call)

    def _ends_turn(self, tool: str) -> bool:
        verdicts = [v for r in self.rules if (v := r.ends_turn(tool)) is not None]
        return bool(verdicts) and False not in verdicts

    def _allowed(self, state: TurnState) -> list[str]:
        names: list[str] = self.tools.names()
        for rule in self.rules:
            names = list(rule.allowed(state, names))
        return names

    # -- the request -----------------------------------------------------------

    async def _request(
        self, run: RunResult, history: list[ChatMessage], allowed: list[str]
    ) -> ModelRequest:
        kept, summary = fit_history(history, self.budget, self._count)
        if self.budget.summarizer == "model":
            summary = await self._running_summary(run, history[: len(history) - len(kept)])
        parts = [self.instructions.strip()]
        if self.memory is not None:
            from satchel.builtin import render_context

            await _deliver_reminders(self.tools, self.name)
            parts.append(await render_context(self.memory, self.name, self.tools))
        else:
            parts.append(self.tools.usage_rules())
        if self.rules:
            parts.append("## Tool Rules\n" + "\n".join(f"- {r.render()}" for r in self.rules))
        if summary:
            parts.append("## Earlier in this conversation\n" + summary)
        offered = set(allowed)
        dialect: Dialect = (
            "anthropic" if getattr(self.model, "dialect", "") == "anthropic" else "openai"
        )
        schemas = [s for s in self.tools.schemas(dialect) if _schema_name(s) in offered]
        return ModelRequest(
            system="\n\n".join(p for p in parts if p),
            messages=kept,
            tools=schemas,
            tool_names=allowed,
            require_tool=bool(allowed) and len(allowed) < len(self.tools),
        )

    async def _running_summary(self, run: RunResult, left: list[ChatMessage]) -> str:
        """The model-written summary of the messages that ``left`` the prompt, folding
        in those the stored summary does not cover yet."""
        previous, through = self._summaries.get(run.conversation_id, ("", None))
        new = [m for m in left if through is None or m.created_at is None or m.created_at > through]
        if not new:
            return previous
        text, usage = await summarize(self.model, previous, new, words=self.budget.summary_words)
        run.usage = run.usage + usage
        stamps = [m.created_at for m in new if m.created_at is not None]
        covered = max(stamps) if stamps else datetime.now(UTC)
        self._summaries[run.conversation_id] = (text, covered)
        if self.memory is not None:
            await self.memory.add_message(
                self.name,
                "system",
                text,
                conversation_id=run.conversation_id,
                metadata={"kind": SUMMARY_KIND, "through": covered.isoformat()},
            )
        return text

    # -- history and persistence -----------------------------------------------

    async def _history(self, conversation: str) -> list[ChatMessage]:
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

    async def _add(
        self,
        run: RunResult,
        history: list[ChatMessage],
        message: ChatMessage,
        result: ToolResult | None = None,
    ) -> None:
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
        if message.role == "user" and content.startswith(_RULE_NOTE):
            role = "system"
        await self.memory.add_message(
            self.name,
            role,
            content or "(empty)",
            conversation_id=run.conversation_id,
            created_at=message.created_at,
            metadata=metadata or None,
        )


async def _deliver_reminders(tools: ToolRegistry, agent: str) -> None:
    """Deliver ``agent``'s due reminders (the productivity toolkit's
    ``schedule_reminder``) before its context is rendered, so the model sees them."""
    if "schedule_reminder" not in tools:
        return
    from satchel.toolkit import reminder_agenda

    agenda = reminder_agenda(tools)
    if agenda is not None:
        await agenda.fire_due(agent)


def _tools_of(
    tools: ToolRegistry | None,
    memory: MemoryStore | None,
    router: MessageRouter | None,
    builtins: BuiltinTools | None,
) -> ToolRegistry:
    if memory is None:
        return tools if tools is not None else ToolRegistry()
    builtin = (builtins or BuiltinTools()).build(memory, router=router)
    return builtin if tools is None else merged(builtin, tools)


def _schema_name(schema: dict[str, Any]) -> str:
    function = schema.get("function")
    if isinstance(function, dict):
        return str(function.get("name", ""))  # pyright: ignore[reportUnknownMemberType, reportUnknownArgumentType]
    return str(schema.get("name", ""))


def _calling(text: str, calls: Sequence[ToolCall]) -> ChatMessage:
    return ChatMessage(role="assistant", content=text, tool_calls=tuple(calls))


def _args_text(call: ToolCall) -> str:
    if isinstance(call.arguments, str):
        return call.arguments[:200]
    return json.dumps(call.arguments, ensure_ascii=False)[:200]


def _refused(tool: str, allowed: Sequence[str]) -> ToolResult:
    choice = ", ".join(allowed) if allowed else "no tool: answer in text"
    return ToolResult(
        tool,
        error=ErrorInfo(
            "denied",
            f"The tool rules do not allow {tool} now; nothing ran. You may call: {choice}.",
            {"allowed": list(allowed)},
        ),
    )


def _unmet(tool: str, unmet: Sequence[str]) -> ToolResult:
    names = ", ".join(unmet)
    return ToolResult(
        tool,
        error=ErrorInfo(
            "denied",
            f"{tool} requires {names} to have run successfully earlier in this turn; "
            f"nothing ran. Call {names} first, then {tool}.",
            {"requires": list(unmet)},
        ),
    )


def _said_to_user(call: ToolCall) -> str:
    if call.name != "send_message" or not isinstance(call.arguments, dict):
        return ""
    target = _mapping(call.arguments.get("target"))
    content = call.arguments.get("content")
    if target.get("type", "user") != "user" or content is None:
        return ""
    return str(content)


def _mapping(value: object) -> dict[str, Any]:
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
    and its result, and providers refuse anything between the two)."""
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
                None if (c := _mapping(item)).get("id") is None else str(c["id"]),
                str(c.get("name", "")),
                _mapping(c.get("arguments")),
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
