"""The per-call context injected into tools that ask for it, and the progress hook a
tool reports long work through."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol, cast, runtime_checkable

from satchel._errors import SatchelUsageError
from satchel.tools._services import (
    ToolBroker,
    ToolMemory,
    ToolRouter,
    ToolSharedBlocks,
    ToolSources,
)

__all__ = ["HumanAsker", "ProgressReporter", "ToolContext"]


class ProgressReporter(Protocol):
    """Receives a tool call's progress, e.g. as MCP ``notifications/progress`` to a
    client that sent a ``progressToken``. Called on the event loop.

    ``progress`` must grow from one report to the next; ``total`` is ``None`` when
    unknown.
    """

    async def __call__(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        """Report that ``progress`` of ``total`` is done, with a short ``message`` for
        a person."""
        ...


@runtime_checkable
class HumanAsker(Protocol):
    """Asks the human behind a request a yes/no question where they are, during the
    call (for example through the MCP client's elicitation)."""

    async def confirm(self, message: str, *, key: str | None = None) -> bool | None:
        """Ask ``message``. ``key`` names the question, so the same question asked
        again is recognised.

        Returns:
            True when approved, False when refused, ``None`` when the human could not
            be asked.
        """
        ...


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolContext:
    """Who is calling, and with what, passed to a tool that declares a parameter of this
    type. It never appears in a tool's schema.

    Under ``satchel serve`` and the agent runtime (:class:`~satchel.Agent`) it also
    carries what a tool author needs to act for the agent without global state: its
    memory (:attr:`memory`, scoped to :attr:`agent`), the :attr:`router` that delivers
    ``send_message``, and the :attr:`broker` that asks a human for consent. In a plain
    library call they are ``None`` unless the caller sets them.

    Example:
        >>> ctx = ToolContext(agent="alice", deps={"db": ...})
        >>> await registry.call("note", {"text": "hi"}, ctx=ctx)

        A tool that reads memory and asks before acting:

        >>> @tool
        ... async def forget_trip(ctx: ToolContext) -> str:
        ...     '''Forget the trip plans.'''
        ...     hits = await ctx.search("trip")
        ...     if ctx.broker is not None:
        ...         scope = ConsentScope.tool_execution("forget_trip", {}, agent=ctx.agent)
        ...         answer = await ctx.broker.request(scope, "forget the trip", ctx.origin or "")
        ...     ...
    """

    agent: str = "default"
    """The acting agent's id: whose memory a memory tool reads and writes."""
    deps: Any = None
    """The caller's own dependencies (a database handle, an HTTP client, settings)."""
    origin: str | None = None
    """The channel the request came from (``"cli"``, ``"mcp"``, ``"discord:123"``), so a
    consent prompt can reach the human where they are."""
    call_id: str | None = None
    """The provider's id for this tool call, when known."""
    approval_id: str | None = None
    """Set when a human-approved call is being executed."""
    extras: Mapping[str, Any] = field(default_factory=dict[str, Any])
    """Anything else an integration wants to hand to its tools."""
    progress: ProgressReporter | None = None
    """Where to report the progress of long work; ``None`` when the caller did not ask
    for it (see :meth:`report_progress`)."""
    human: HumanAsker | None = None
    """Asks the human behind this request a question during the call, where the
    channel can (a consent prompt for a guarded memory write); ``None`` otherwise."""
    memory: ToolMemory | None = None
    """The acting agent's memory: the store's methods without the ``agent`` argument,
    its writes through the permission gate with this request's origin; ``None`` when
    the caller has no store."""
    router: ToolRouter | None = None
    """Delivers messages to the user, other agents and channels (what ``send_message``
    uses); ``None`` when the caller has none."""
    broker: ToolBroker | None = None
    """Asks a human to approve an action and remembers the answer (``satchel
    approvals`` decides its requests); ``None`` when the caller has none."""
    conversation_id: str | None = None
    """The conversation the calling agent's turn belongs to, when an agent loop calls."""
    turn_started_at: datetime | None = None
    """When the current turn's first message was recorded: with :attr:`conversation_id`
    it marks the turn in progress, which ``search`` leaves out of its hits."""
    model: Any = None
    """The model the calling agent runs (a :class:`satchel.agent.Model`), for a tool
    that needs a model call of its own (summarise, classify); ``None`` outside an
    :class:`~satchel.Agent`. Pattern's ``ToolContext::model()``."""

    @property
    def shared_blocks(self) -> ToolSharedBlocks | None:
        """Block sharing for the acting agent (Pattern's shared block manager): share
        one of its blocks with another agent, stop sharing, list the blocks shared with
        it or by it. ``None`` when :attr:`memory` cannot share (or there is none).

        Example:
            >>> if ctx.shared_blocks is not None:
            ...     await ctx.shared_blocks.share_block("plan", "bob", Permission.READ_ONLY)
        """
        memory = self.memory
        return memory if isinstance(memory, ToolSharedBlocks) else None

    async def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        """Report progress to the caller if it asked for it (over MCP: a client that sent
        a ``progressToken``); otherwise do nothing.

        Example:
            >>> for done, item in enumerate(items, 1):
            ...     await ctx.report_progress(done, len(items), f"imported {item}")
        """
        if self.progress is not None:
            await self.progress(progress, total, message)

    def sources(self) -> ToolSources:
        """The acting agent's sources (:class:`satchel.sources.SourceIndex`): the
        folders and files added with ``satchel sources add``, to search, grep and open.

        Example:
            >>> hits = await ctx.sources().search("lease renewal")
            >>> hits[0].file, hits[0].start
            ('docs/lease.pdf', 1)

        Raises:
            SatchelUsageError: This context carries no memory to keep sources in.
        """
        opener = getattr(self.memory, "sources", None)
        if opener is None:
            raise SatchelUsageError(
                "This tool context carries no memory, so no sources: run the tool under "
                "`satchel serve` or an Agent with memory, or pass "
                "ToolContext(memory=AgentMemory(store, agent))."
            )
        return cast("ToolSources", opener())

    async def search(self, query: str, *, limit: int = 10) -> list[Any]:
        """Search the acting agent's archival memory and conversations (hybrid search,
        best first), as :class:`~satchel.memory.SearchHit` records;
        :meth:`AgentMemory.search <satchel.memory.AgentMemory.search>` takes domains,
        filters and a mode.

        Raises:
            SatchelUsageError: This context carries no memory.
        """
        if self.memory is None:
            raise SatchelUsageError(
                "This tool context carries no memory: run the tool under `satchel serve` "
                "or an Agent with memory, or pass ToolContext(memory=AgentMemory(store, "
                "agent))."
            )
        return await self.memory.search(query, limit=limit)
