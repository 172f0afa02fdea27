""":class:`Agent`: a model, its tools and its memory, in a loop that the tool rules
constrain and that records every message in the memory store.

One run is one turn: the user's message, then model requests and tool calls until the
model answers without calling a tool, a terminal tool runs (``send_message`` by
default), a call waits for approval, the rules allow nothing more, the model makes the
same call once too often, or the step limit is hit. Each user message, assistant
message, tool call and tool result is written to the store's conversations as it
happens (so ``search`` finds them and a later process resumes the conversation).

A turn that is cancelled midway (Ctrl-C) is recorded as interrupted
(:mod:`satchel.agent._agent_history`).

The agent is composed of parts that own their state: a
:class:`~satchel.agent._agent_history.ConversationLog` (loading and recording the
conversation), a :class:`~satchel.agent._agent_calls.ToolRunner` (running a batch of
tool calls under the rules), and :func:`~satchel.agent._agent_request.build_request`
(building each model request); this module holds construction and the loop.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import anyio

from satchel._errors import ModelError, SatchelUsageError
from satchel.agent._agent_calls import ToolRunner
from satchel.agent._agent_history import RULE_NOTE, ConversationLog
from satchel.agent._agent_request import build_request
from satchel.agent._context import ContextBudget, counter_for
from satchel.agent._messages import ChatMessage, ModelRequest, ModelResponse
from satchel.agent._models import Model, StreamingModel
from satchel.agent._run import FinalEvent, RunEvent, RunResult, TextDeltaEvent, TextEvent
from satchel.builtin import BuiltinTools, MessageRouter
from satchel.memory import MemoryStore
from satchel.providers import ToolCall
from satchel.registry import BaseRegistry, ToolRegistry, merged
from satchel.rules import Continue, Terminal, ToolRule, TurnState
from satchel.tools import ToolResult

if TYPE_CHECKING:
    from satchel.consent import PermissionBroker

__all__ = ["Agent"]


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
        tools: BaseRegistry | None = None,
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
        if router is None and memory is not None:
            router = MessageRouter(memory)
        tools = _tools_of(tools, memory, router, builtins)
        rules = list(rules)
        if "send_message" in tools and not any(
            isinstance(r, Terminal | Continue) and r.tool == "send_message" for r in rules
        ):
            rules.append(Terminal("send_message"))
        self.instructions = instructions
        self.max_steps = max_steps
        self.conversation_id = conversation_id
        self.stream = stream
        self._log = ConversationLog(name, memory)
        self._runner = ToolRunner(
            tools,
            rules,
            router,
            broker,
            log=self._log,
            budget=budget or ContextBudget(),
            count=counter_for(model.family),
        )
        self.model = model

    # -- the parts' state, as attributes ---------------------------------------

    @property
    def name(self) -> str:
        """The agent's name: whose memory it reads and writes."""
        return self._log.name

    @name.setter
    def name(self, value: str) -> None:
        self._log.name = value

    @property
    def model(self) -> Model:
        """The model that answers; also every tool's ``ctx.model``."""
        return self._runner.model

    @model.setter
    def model(self, value: Model) -> None:
        self._runner.model = value

    @property
    def memory(self) -> MemoryStore | None:
        """The memory store, or ``None``."""
        return self._log.memory

    @memory.setter
    def memory(self, value: MemoryStore | None) -> None:
        self._log.memory = value

    @property
    def tools(self) -> BaseRegistry:
        """The tools the agent may call."""
        return self._runner.tools

    @tools.setter
    def tools(self, value: BaseRegistry) -> None:
        self._runner.tools = value

    @property
    def rules(self) -> list[ToolRule]:
        """The tool rules (``send_message`` is terminal unless one says otherwise)."""
        return self._runner.rules

    @rules.setter
    def rules(self, value: list[ToolRule]) -> None:
        self._runner.rules = value

    @property
    def router(self) -> MessageRouter | None:
        """Delivers ``send_message``; every tool's ``ctx.router``."""
        return self._runner.router

    @router.setter
    def router(self, value: MessageRouter | None) -> None:
        self._runner.router = value

    @property
    def broker(self) -> PermissionBroker | None:
        """Asks a human for consent; every tool's ``ctx.broker``."""
        return self._runner.broker

    @broker.setter
    def broker(self, value: PermissionBroker | None) -> None:
        self._runner.broker = value

    @property
    def budget(self) -> ContextBudget:
        """How much history a request carries, and how large a tool result is kept."""
        return self._runner.budget

    @budget.setter
    def budget(self, value: ContextBudget) -> None:
        self._runner.budget = value

    # -- running ---------------------------------------------------------------

    async def execute_tool(
        self, name: str, args: dict[str, Any], *, conversation_id: str | None = None
    ) -> ToolResult:
        """Call one of the agent's tools outside a turn, as the agent: the same
        registry call a turn makes, with the agent's context (its memory, router,
        broker and model). Pattern's ``agent.execute_tool(name, args)``; the tool rules
        of a turn do not apply, and nothing is recorded in the conversation.

        Never raises for a tool's error: the :class:`~satchel.ToolResult` carries it.

        Example:
            >>> result = await agent.execute_tool(
            ...     "context", {"operation": "append", "label": "human",
            ...                 "content": "User prefers dark mode"})
            >>> result.ok
            True
        """
        ctx = self._runner.context(conversation_id or self.conversation_id)
        return await self.tools.call(name, args, ctx)

    async def run(
        self,
        message: str | None,
        *,
        conversation_id: str | None = None,
        origin: str | None = None,
    ) -> RunResult:
        """Run one turn for ``message`` and return its record (``None``: answer what
        already arrived in the conversation, such as another agent's message).

        ``origin`` names where the message came from (``telegram:123456789``): every
        tool call of the turn carries it (``ctx.origin``), so a consent request is
        announced there and ``send_message`` knows the channel; by default
        ``agent:<name>``."""
        result: RunResult | None = None
        async for event in self.run_stream(message, conversation_id=conversation_id, origin=origin):
            if isinstance(event, FinalEvent):
                result = event.result
        assert result is not None
        return result

    def run_sync(
        self,
        message: str | None,
        *,
        conversation_id: str | None = None,
        origin: str | None = None,
    ) -> RunResult:
        """:meth:`run` from synchronous code.

        Raises:
            SatchelUsageError: called inside a running event loop.
        """
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return anyio.run(
                lambda: self.run(message, conversation_id=conversation_id, origin=origin)
            )
        raise SatchelUsageError("run_sync() cannot run inside an event loop; await run().")

    async def run_stream(
        self,
        message: str | None,
        *,
        conversation_id: str | None = None,
        origin: str | None = None,
    ) -> AsyncIterator[RunEvent]:
        """Run one turn, yielding what happens as it happens; the last event is a
        :class:`~satchel.agent.FinalEvent` holding the run's record (``origin`` as in
        :meth:`run`)."""
        conversation = conversation_id or self.conversation_id
        started = datetime.now(UTC)
        run = RunResult(
            agent=self.name, conversation_id=conversation, started_at=started, origin=origin
        )
        history = await self._log.load(conversation)
        if message is not None:
            await self._log.add(
                run, history, ChatMessage(role="user", content=message, created_at=started)
            )
        async for event in self._log.interruptible(
            run, history, self._steps(run, history, TurnState())
        ):
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
        run = RunResult(
            agent=self.name,
            conversation_id=paused.conversation_id,
            started_at=paused.started_at or datetime.now(UTC),
            origin=paused.origin,
        )
        history = await self._log.load(paused.conversation_id)
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
        await self._log.add(run, history, _calling("", calls))
        resumed = self._resumed(run, history, state, calls, approvals)
        async for event in self._log.interruptible(run, history, resumed):
            yield event

    async def _resumed(
        self,
        run: RunResult,
        history: list[ChatMessage],
        state: TurnState,
        calls: Sequence[ToolCall],
        approvals: dict[str, str],
    ) -> AsyncIterator[RunEvent]:
        async for event in self._runner.run_calls(
            run, history, state, calls, self.tools.names(), approvals
        ):
            yield event
        if run.stop not in ("terminal", "needs_approval", "repeated"):
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
            forced = self._runner.forced_call(state)
            if forced is not None:
                call = ToolCall(f"init_{len(state.calls)}", forced[0], forced[1])
                await self._log.add(run, history, _calling("", (call,)))
                async for event in self._runner.run_calls(run, history, state, (call,), forced[:1]):
                    yield event
                continue
            allowed = self._runner.allowed(state)
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
                blocked = self._runner.blocks_exit(state)
                await self._log.add(
                    run, history, ChatMessage(role="assistant", content=response.text)
                )
                if blocked is None:
                    run.reply, run.stop = response.text, "reply"
                    break
                await self._log.add(
                    run, history, ChatMessage(role="user", content=RULE_NOTE + blocked)
                )
                continue
            await self._log.add(run, history, _calling(response.text, response.tool_calls))
            async for event in self._runner.run_calls(
                run, history, state, response.tool_calls, allowed
            ):
                yield event
            if run.stop in ("terminal", "needs_approval", "repeated"):
                run.reply = run.reply or response.text
                break
            if not allowed:
                run.stop, run.reply = "rules", response.text
                break
        else:
            run.stop = "max_steps"
        yield FinalEvent(run)

    async def _request(
        self, run: RunResult, history: list[ChatMessage], allowed: list[str]
    ) -> ModelRequest:
        return await build_request(
            model=self.model,
            instructions=self.instructions,
            log=self._log,
            runner=self._runner,
            run=run,
            history=history,
            allowed=allowed,
        )


def _tools_of(
    tools: BaseRegistry | None,
    memory: MemoryStore | None,
    router: MessageRouter | None,
    builtins: BuiltinTools | None,
) -> BaseRegistry:
    if memory is None:
        return tools if tools is not None else ToolRegistry()
    builtin = (builtins or BuiltinTools()).build(memory, router=router)
    return builtin if tools is None else merged(builtin, tools)


def _calling(text: str, calls: Sequence[ToolCall]) -> ChatMessage:
    return ChatMessage(role="assistant", content=text, tool_calls=tuple(calls))
