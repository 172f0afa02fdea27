"""Which agent's memory a connection uses: a fixed one, or its project's
(``satchel serve --agent auto``).

:class:`ProjectAgents` asks each connection's client for its workspace roots
(``roots/list``) the first time the connection needs memory, and uses the memory of the
project at the first root (:func:`~satchel.memory.project_for_root`), set up on first
use with the person's global blocks shared in (:func:`~satchel.memory.ensure_project`).
The answer is kept for the connection until the client says its roots changed
(``notifications/roots/list_changed``). A client that announces no roots (Claude
Desktop), or cannot be asked on this connection (the 2026-07-28 protocol deprecates
roots, and its connections carry no server-to-client requests), gets the project at the
fallback root when one was given (``serve --project-root``, which ``satchel install``
sets to the editor's ``${workspaceFolder}``), else the person's own agent.
"""

from __future__ import annotations

import logging
import weakref
from collections.abc import Awaitable, Callable, Collection
from typing import Protocol, runtime_checkable

from satchel._errors import InvalidInputError, SatchelError
from satchel.mcp.server._channel import ClientChannel
from satchel.memory import (
    DEFAULT_GLOBAL_LABELS,
    AgentTemplate,
    MemoryStore,
    Project,
    ensure_project,
    project_for_root,
)

__all__ = ["AgentResolver", "ProjectAgents"]

logger = logging.getLogger("satchel.mcp.projects")


@runtime_checkable
class AgentResolver(Protocol):
    """Decides the agent of each request from its connection."""

    async def agent_for(self, channel: ClientChannel) -> str:
        """The agent whose memory this request uses."""
        ...

    def forget(self, channel: ClientChannel) -> None:
        """Decide again on the next request of this connection (its roots changed)."""
        ...


class ProjectAgents:
    """Each connection's agent is the project its client has open (see the module doc).

    Args:
        store: The memory store.
        person: The person's own agent: used without roots, and the owner of the
            global blocks shared into every project.
        template: The starting blocks of new agents (``None``: ``persona`` and
            ``human``).
        global_labels: The labels of ``person``'s blocks shared into every project
            (blocks tagged ``global`` are shared too).
        on_project: Awaited once per connection that resolved to a project (for
            example to mirror its memory).
        fallback_root: The workspace used when the client gives no roots (a path or
            ``file://`` URI); ``None``: the person's own agent then.
    """

    def __init__(
        self,
        store: MemoryStore,
        *,
        person: str = "default",
        template: AgentTemplate | None = None,
        global_labels: Collection[str] = DEFAULT_GLOBAL_LABELS,
        on_project: Callable[[Project], Awaitable[None]] | None = None,
        fallback_root: str | None = None,
    ) -> None:
        self.store = store
        self.person = person
        self.template = template
        self.global_labels = tuple(global_labels)
        self._on_project = on_project
        self.fallback_root = fallback_root
        self._agents: weakref.WeakKeyDictionary[object, str] = weakref.WeakKeyDictionary()

    async def agent_for(self, channel: ClientChannel) -> str:
        """The agent of the project at the client's first root, else ``person``."""
        known = self._agents.get(channel.connection)
        if known is not None:
            return known
        project = await self._project(channel)
        agent = self.person if project is None else project.agent
        if project is not None:
            try:
                await ensure_project(
                    self.store,
                    project,
                    person=self.person,
                    template=self.template,
                    global_labels=self.global_labels,
                )
            except SatchelError as exc:  # the project's memory cannot be set up
                logger.error("setting up %r failed (%s): using %r", agent, exc, self.person)
                project, agent = None, self.person
        if project is not None and self._on_project is not None:
            await self._on_project(project)
        self._agents[channel.connection] = agent
        return agent

    def forget(self, channel: ClientChannel) -> None:
        """Ask the client for its roots again on its next request."""
        self._agents.pop(channel.connection, None)

    async def _project(self, channel: ClientChannel) -> Project | None:
        roots = await channel.list_roots()
        client = channel.client_name or "the client"
        if roots:
            root, where = roots[0], f"{client} works in"
        elif self.fallback_root is not None:
            root, where = self.fallback_root, f"{client} gave no roots; --project-root is"
        else:
            logger.info("%s announced no workspace roots: using agent %r", client, self.person)
            return None
        try:
            project = project_for_root(root)
        except InvalidInputError as exc:
            logger.warning("%s: %s; using agent %r", client, exc.message, self.person)
            return None
        logger.info("%s %s: using agent %r", where, project.key, project.agent)
        return project
