""":class:`AgentTeam`: several agents on one memory store, where ``send_message`` to
an agent or a group wakes the recipients in the same runtime.

A message to ``{type: agent, id}`` lands in the recipient's conversation (as the
:class:`~satchel.builtin.MessageRouter` records it) and the recipient then runs a turn
to answer it. A message to ``{type: group, name}`` wakes every other member in the
group's order (round-robin), or only the member a ``supervisor`` picks. Wakes are
bounded by ``max_wakes`` per :meth:`AgentTeam.run`, so two agents that keep messaging
each other stop.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from satchel._errors import SatchelUsageError
from satchel.agent._agent import Agent
from satchel.agent._models import Model
from satchel.agent._run import RunResult
from satchel.builtin import GroupTarget, MessageRouter, OutgoingMessage
from satchel.memory import MemoryStore

__all__ = ["AgentTeam", "Supervisor", "TeamResult"]

Supervisor = Callable[[OutgoingMessage, Sequence[str]], str | None]
"""Picks which member of a group answers a group message (``None``: nobody)."""


@dataclass(kw_only=True)
class TeamResult:
    """What happened in one :meth:`AgentTeam.run`.

    Attributes:
        runs: Every turn, in the order they ran (the first is the user's agent).
        stopped_early: ``max_wakes`` was reached with recipients still waiting.
    """

    runs: list[RunResult] = field(default_factory=list[RunResult])
    stopped_early: bool = False

    @property
    def reply(self) -> str:
        """The first turn's reply to the user (or the latest turn's, if it had none)."""
        for run in self.runs:
            if run.reply:
                return run.reply
        return ""


class AgentTeam:
    """Agents that talk to each other through ``send_message``.

    Args:
        store: The memory store every agent of the team uses.
        groups: Group name to member agent names, in speaking order.
        supervisor: Picks the one member who answers a group message; without one,
            every other member answers in turn.
        max_wakes: Turns that messages between agents may cause per :meth:`run`.

    Example:
        >>> team = AgentTeam(store, groups={"crew": ["ada", "bob"]})
        >>> team.agent("ada", ada_model)
        >>> team.agent("bob", bob_model)
        >>> result = await team.run("ada", "Ask bob what he thinks.")
    """

    def __init__(
        self,
        store: MemoryStore,
        *,
        groups: Mapping[str, Sequence[str]] | None = None,
        supervisor: Supervisor | None = None,
        max_wakes: int = 10,
    ) -> None:
        if max_wakes < 0:
            raise SatchelUsageError(f"max_wakes must be 0 or more, not {max_wakes}.")
        self.store = store
        self.supervisor = supervisor
        self.max_wakes = max_wakes
        self.router = MessageRouter(store, groups=groups, agents=self._landed)
        self.agents: dict[str, Agent] = {}
        self._waiting: deque[str] = deque()
        self._picked: dict[int, str | None] = {}

    def agent(self, name: str, model: Model, **options: Any) -> Agent:
        """Make an agent of this team (options as for :class:`Agent`; its memory is the
        team's store and its ``send_message`` goes through the team).

        Raises:
            SatchelUsageError: the team has an agent of that name already.
        """
        if name in self.agents:
            raise SatchelUsageError(f"The team has an agent called {name!r} already.")
        made = Agent(name, model, memory=self.store, router=self.router, **options)
        self.agents[name] = made
        return made

    async def run(
        self,
        name: str,
        message: str,
        *,
        conversation_id: str | None = None,
        origin: str | None = None,
    ) -> TeamResult:
        """Run ``name``'s turn for ``message``, then the turns of the agents it (and
        they) sent messages to, until nobody is waiting or ``max_wakes`` is reached.

        ``conversation_id`` and ``origin`` are the first turn's (see
        :meth:`Agent.run`).

        Raises:
            SatchelUsageError: no agent called ``name`` in the team.
        """
        first = self.agents.get(name)
        if first is None:
            raise SatchelUsageError(
                f"No agent called {name!r} in the team; it has {sorted(self.agents)}."
            )
        self._waiting.clear()
        result = TeamResult(
            runs=[await first.run(message, conversation_id=conversation_id, origin=origin)]
        )
        wakes = 0
        while self._waiting:
            if wakes >= self.max_wakes:
                result.stopped_early = True
                break
            recipient = self._waiting.popleft()
            wakes += 1
            result.runs.append(await self.agents[recipient].run(None))
        self._waiting.clear()
        self._picked.clear()
        return result

    async def _landed(self, recipient: str, message: OutgoingMessage) -> None:
        """The router's hook: ``message`` landed in ``recipient``'s conversation."""
        if recipient not in self.agents:
            return  # an agent outside the team reads it when it next runs
        target = message.target
        if isinstance(target, GroupTarget) and self.supervisor is not None:
            key = id(message)
            if key not in self._picked:
                members = [
                    m for m in self.router.groups.get(target.name, ()) if m != message.sender
                ]
                self._picked[key] = self.supervisor(message, members)
            if self._picked[key] != recipient:
                return
        self._waiting.append(recipient)
