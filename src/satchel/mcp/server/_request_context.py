"""What :class:`~satchel.ToolContext` a request over MCP gets: its agent (fixed, or the
connection's as an :class:`~satchel.mcp.AgentResolver` decides), its origin and id,
the client channel (progress, and the human when the client can be asked during the
call), and the server's services (memory scoped to the agent, router, broker)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from satchel.mcp.server._channel import CLIENT_CHANNEL_KEY, ClientChannel
from satchel.mcp.server._projects import AgentResolver
from satchel.memory import AgentMemory, MemoryStore, RequestOrigin
from satchel.tools import ToolContext

if TYPE_CHECKING:
    from satchel.builtin import MessageRouter
    from satchel.consent import PermissionBroker

__all__ = ["ContextFactory", "RequestContexts"]

ContextFactory = Callable[[ClientChannel], ToolContext]
"""Builds the :class:`~satchel.ToolContext` of a request from its channel."""


@dataclass(frozen=True, kw_only=True, slots=True)
class RequestContexts:
    """Builds each request's :class:`~satchel.ToolContext` (see
    :class:`~satchel.mcp.SatchelServer` for what each field means)."""

    agent: str = "default"
    agents: AgentResolver | None = None
    factory: ContextFactory | None = None
    memory: MemoryStore | None = None
    router: MessageRouter | None = None
    broker: PermissionBroker | None = None

    async def resolve(self, channel: ClientChannel) -> ToolContext:
        """The context of a request, for the agent ``agents`` decides."""
        agent = None if self.agents is None else await self.agents.agent_for(channel)
        return self.build(channel, agent=agent)

    def build(self, channel: ClientChannel, *, agent: str | None = None) -> ToolContext:
        """The context of a request, for ``agent`` when given."""
        progress = channel.progress_reporter()
        # A question asked during the call needs a client that can elicit and a
        # connection on which the answer comes back within the call (a 2026-07-28
        # connection would need the whole call retried, which a write already under way
        # cannot do; those clients answer through `satchel approvals`).
        human = channel if channel.can_elicit and not channel.is_modern else None
        if self.factory is None:
            request_id = channel.request_id
            ctx = ToolContext(
                agent=self.agent if agent is None else agent,
                origin=channel.origin or "mcp",
                call_id=None if request_id is None else str(request_id),
                extras={CLIENT_CHANNEL_KEY: channel},
                progress=progress,
                human=human,
            )
        else:
            ctx = self.factory(channel)
            if agent is not None and ctx.agent != agent:
                ctx = replace(ctx, agent=agent)
            if ctx.extras.get(CLIENT_CHANNEL_KEY) is not channel:
                ctx = replace(ctx, extras={**ctx.extras, CLIENT_CHANNEL_KEY: channel})
            if ctx.progress is None and progress is not None:
                ctx = replace(ctx, progress=progress)
            if ctx.human is None and human is not None:
                ctx = replace(ctx, human=human)
        return self._with_services(ctx)

    def _with_services(self, ctx: ToolContext) -> ToolContext:
        """``ctx`` with the memory (scoped to its agent), router and broker, where the
        context has none of its own."""
        update: dict[str, Any] = {}
        if ctx.memory is None and self.memory is not None:
            update["memory"] = AgentMemory(self.memory, ctx.agent, RequestOrigin.of(ctx))
        if ctx.router is None and self.router is not None:
            update["router"] = self.router
        if ctx.broker is None and self.broker is not None:
            update["broker"] = self.broker
        return replace(ctx, **update) if update else ctx
