"""``satchel chat``: an interactive session with an agent, on the same API as
``satchel run`` (:class:`satchel.agent.Agent`), with streamed replies, visible tool
calls, approvals and memory consent asked inline, and slash commands for memory.

Lines are read from standard input, so a session can also be scripted (the tests pipe
one in); they are read on the event loop (:mod:`satchel.cli._stdin`), so Ctrl-C ends
the session at the prompt as it does while the model answers or a tool runs
(:mod:`satchel.cli._interrupt`). Approvals for destructive ``--tools`` go through the
database's approval store, exactly as under ``serve``: a request another terminal
approves with ``satchel approvals`` works too.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from satchel.agent import (
    Agent,
    ApprovalEvent,
    FinalEvent,
    RunEvent,
    RunResult,
    TextDeltaEvent,
    TextEvent,
    ToolCallEvent,
    ToolResultEvent,
)
from satchel.builtin import render_context
from satchel.cli._agent_setup import (
    DEFAULT_TIMEOUT,
    AgentOptions,
    AgentSetup,
    BaseUrlOption,
    ConversationOption,
    LazyOption,
    MaxCallsOption,
    MaxStepsOption,
    ModelOption,
    MountOption,
    TimeoutOption,
    ToolsOption,
    agent_setup,
    opened_agent,
)
from satchel.cli._agents import AgentOption
from satchel.cli._builtin_options import NoMemoryOption, ReplaceOption
from satchel.cli._channels import ChannelsOption
from satchel.cli._embed_options import EmbedBaseUrlOption, EmbedderOption
from satchel.cli._interrupt import cancelled_by_ctrl_c, stops_on_ctrl_c
from satchel.cli._stdin import StdinLines
from satchel.cli._store import DbOption
from satchel.consent import Decision, PermissionBroker
from satchel.memory import ConsentRequest, Domain, MemoryStore

__all__ = ["chat"]

_HELP = (
    "Commands: /memory (the rendered memory), /blocks (a table of blocks), "
    "/search QUERY, /help, /quit. Anything else is said to the agent."
)


def chat(
    model: ModelOption = "openai:gpt-4o-mini",
    base_url: BaseUrlOption = None,
    agent: AgentOption = "default",
    conversation: ConversationOption = "default",
    db: DbOption = None,
    embedder: EmbedderOption = None,
    embed_base_url: EmbedBaseUrlOption = None,
    tools: ToolsOption = None,
    mount: MountOption = None,
    lazy: LazyOption = False,
    replace: ReplaceOption = None,
    no_memory: NoMemoryOption = False,
    max_steps: MaxStepsOption = 20,
    max_calls: MaxCallsOption = None,
    channels: ChannelsOption = None,
    timeout: TimeoutOption = DEFAULT_TIMEOUT,
) -> None:
    """Talk with an agent: replies stream in, tool calls show, approvals are asked here.

    Type /help for the memory commands; /quit or end of input leaves; Ctrl-C leaves at
    once, even mid-answer (the turn is kept as interrupted; exit status 130).
    """
    with stops_on_ctrl_c(newline=True):
        options = AgentOptions(
            model=model, base_url=base_url, agent=agent, conversation=conversation, db=db,
            embedder=embedder, embed_base_url=embed_base_url,
            tools=tools or (), mounts=mount or (), lazy=lazy, replace=replace or (),
            no_memory=no_memory, max_steps=max_steps, max_calls=max_calls,
            channels=channels, timeout=timeout,
        )  # fmt: skip
        setup = agent_setup(options)
        anyio.run(_Session(Console(highlight=False), agent).main, setup)


class _Session:
    def __init__(self, console: Console, agent: str) -> None:
        self.console = console
        self.agent_name = agent
        self._lines: StdinLines | None = None

    async def ask(self, question: str) -> str | None:
        """A line from the person, or ``None`` at the end of input."""
        self.console.print(question, end="")
        if self._lines is None:
            self._lines = StdinLines()
        return await self._lines.readline()

    async def consent(self, request: ConsentRequest, /) -> bool:
        """Memory consent, asked inline."""
        answer = await self.ask(f"[yellow]Allow:[/] {escape(request.reason)}? [y/N] ")
        return (answer or "").strip().lower() in ("y", "yes")

    async def main(self, setup: AgentSetup) -> None:
        async with opened_agent(setup, origin="chat", consent=self.consent, stream=True) as (
            runner,
            broker,
        ):
            assert runner.memory is not None
            self.console.print(f"[dim]satchel chat with {self.agent_name}. {_HELP}[/]")
            async with cancelled_by_ctrl_c():
                await self._loop(runner, runner.memory, broker)

    async def _loop(self, runner: Agent, store: MemoryStore, broker: PermissionBroker) -> None:
        while (line := await self.ask("[bold cyan]you>[/] ")) is not None:
            text = line.strip()
            if not text:
                continue
            if text in ("/quit", "/exit"):
                return
            if text.startswith("/"):
                await self._command(text, store, runner)
                continue
            result = await self._show(runner.run_stream(text))
            while result.stop == "needs_approval":
                if not await self._decide(result, broker):
                    break
                result = await self._show(runner.resume_stream(result))

    async def _show(self, events: Any) -> RunResult:
        streamed = False
        result: RunResult | None = None
        event: RunEvent
        async for event in events:
            match event:
                case TextDeltaEvent(delta=delta):
                    if not streamed:
                        self.console.print("[bold green]agent>[/] ", end="")
                        streamed = True
                    self.console.print(escape(delta), end="")
                case TextEvent(text=text):
                    if streamed:
                        self.console.print()
                        streamed = False
                    else:
                        self.console.print(f"[bold green]agent>[/] {escape(text)}")
                case ToolCallEvent(call=call, allowed=allowed):
                    shown = json.dumps(call.arguments, ensure_ascii=False)[:160]
                    mark = "" if allowed else " [red](not allowed now)[/]"
                    self.console.print(f"[dim]  -> {call.name}({escape(shown)}){mark}[/]")
                case ToolResultEvent(result=outcome):
                    if outcome.error is None:
                        self.console.print("[dim]  <- ok[/]")
                    else:
                        message = escape(outcome.error.message[:200])
                        self.console.print(f"[dim]  <- {outcome.error.kind}: {message}[/]")
                case ApprovalEvent(call=call, approval_id=approval):
                    self.console.print(f"[yellow]  {call.name} waits for approval {approval}[/]")
                case FinalEvent(result=done):
                    result = done
        assert result is not None
        if result.stop == "terminal" and result.reply:
            self.console.print(f"[bold green]agent>[/] {escape(result.reply)}")
        elif result.stop in ("max_steps", "rules", "repeated"):
            self.console.print(f"[dim](the turn stopped early: {result.stop})[/]")
        return result

    async def _decide(self, result: RunResult, broker: PermissionBroker) -> bool:
        """Ask about each pending approval; ``False`` when the person left."""
        for approval in result.pending_approvals:
            request = await broker.get(approval)
            reason = request.reason if request is not None else approval
            answer = await self.ask(f"[yellow]Approve[/] {escape(reason)}? [y/N] ")
            if answer is None:
                return False
            decision = (
                Decision.approve_once()
                if answer.strip().lower() in ("y", "yes")
                else Decision.deny()
            )
            await broker.resolve(approval, decision, by="chat")
        return True

    async def _command(self, text: str, store: MemoryStore, runner: Agent) -> None:
        command, _, argument = text.partition(" ")
        if command == "/memory":
            self.console.print(escape(await render_context(store, self.agent_name, runner.tools)))
        elif command == "/blocks":
            table = Table("label", "kind", "chars", "permission")
            for block in await store.list_blocks(self.agent_name):
                limit = "" if block.char_limit is None else f"/{block.char_limit}"
                table.add_row(
                    escape(block.label), block.kind.value, f"{block.chars}{limit}",
                    block.permission.value,
                )  # fmt: skip
            self.console.print(table)
        elif command == "/search" and argument.strip():
            hits = await store.search(self.agent_name, argument, domains=Domain.ALL, limit=10)
            if not hits:
                self.console.print("[dim]no hits[/]")
            for hit in hits:
                self.console.print(f"[dim]{hit.score:.3f}[/] {escape(hit.text[:200])}")
        else:
            self.console.print(f"[dim]{_HELP}[/]")
