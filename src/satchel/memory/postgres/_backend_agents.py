"""The agent and message steps of
:class:`~satchel.memory.postgres._backend.PostgresBackend`: setting an agent up,
describing agents, and recording and listing conversation messages.

:class:`AgentSteps` is a part the backend holds, with the backend's
:class:`Runner`.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

import numpy as np
import numpy.typing as npt

from satchel.memory._backend import NewBlock, NewMessage
from satchel.memory._models import AgentSummary, Block, Message
from satchel.memory.postgres import _agents
from satchel.memory.postgres._messages import insert_message, list_messages
from satchel.memory.postgres._runner import Runner

__all__ = ["AgentSteps"]

F32 = npt.NDArray[np.float32]


class AgentSteps:
    """The agent and message steps of
    :class:`~satchel.memory.postgres._backend.PostgresBackend` (see the module
    docstring).

    Args:
        runner: How each step runs on the backend's database.
    """

    def __init__(self, runner: Runner) -> None:
        self.runner = runner

    # --- agents -------------------------------------------------------------------

    async def initialise_agent(
        self, agent: str, template: str, blocks: Sequence[tuple[NewBlock, F32 | None]]
    ) -> list[Block] | None:
        model = self.runner.model
        return await self.runner.run(
            lambda conn: _agents.initialise(conn, agent, template, blocks, model)
        )

    async def is_set_up(self, agent: str) -> bool:
        return await self.runner.run(lambda conn: _agents.is_set_up(conn, agent))

    async def agent_summaries(self, agent: str | None) -> list[AgentSummary]:
        return await self.runner.run(lambda conn: _agents.summaries(conn, agent))

    # --- messages -----------------------------------------------------------------

    async def insert_message(self, new: NewMessage, vector: F32 | None) -> Message:
        model = self.runner.model
        return await self.runner.run(
            lambda conn: insert_message(conn, **new, vector=vector, model=model)
        )

    async def list_messages(
        self,
        agent: str,
        *,
        conversation_id: str | None,
        limit: int,
        before: datetime | None,
    ) -> list[Message]:
        return await self.runner.run(
            lambda conn: list_messages(
                conn, agent, conversation_id=conversation_id, limit=limit, before=before
            )
        )
