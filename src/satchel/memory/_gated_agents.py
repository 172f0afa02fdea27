"""Agents and messages in :class:`~satchel.memory.GatedStore`: setting an agent up from
its template, describing agents, and recording and listing conversation messages.

:class:`AgentsAndMessages` is a part of :class:`~satchel.memory.GatedStore` (its base),
kept in its own module; it holds no state of its own.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

import numpy as np
import numpy.typing as npt

from satchel._errors import AlreadyExistsError, InvalidInputError, VersionConflictError
from satchel.memory._backend import MemoryBackend, NewBlock, NewMessage
from satchel.memory._gated_writes import WriteRules
from satchel.memory._models import (
    AgentSummary,
    Block,
    Message,
    Role,
    normalise_tags,
    utc_now,
    validate_agent,
)
from satchel.memory._template import AgentTemplate, default_template
from satchel.memory._vector_upkeep import VectorUpkeep

__all__ = ["AgentsAndMessages"]

logger = logging.getLogger("satchel.memory")

F32 = npt.NDArray[np.float32]
_ROLES = ("user", "assistant", "system", "tool")
_RETRIES = 5


class AgentsAndMessages:
    """Agent set-up and messages of :class:`~satchel.memory.GatedStore` (see the module
    docstring).

    Args:
        backend: The store's database steps.
        vectors: The store's embedding upkeep.
        rules: The store's write policy.
    """

    def __init__(self, backend: MemoryBackend, vectors: VectorUpkeep, rules: WriteRules) -> None:
        self.backend = backend
        self._vectors = vectors
        self.rules = rules

    async def ensure_agent(self, agent: str, template: AgentTemplate | None = None) -> list[Block]:
        """See :meth:`MemoryStore.ensure_agent`."""
        validate_agent(agent)
        if await self.backend.is_set_up(agent):
            return []
        chosen = default_template() if template is None else template
        blocks: list[tuple[NewBlock, F32 | None]] = []
        for spec in chosen.blocks:  # a BlockTemplate has exactly NewBlock's block fields
            fields = spec.model_dump()
            fields["metadata"] = fields["metadata"] or None
            fields["tags"] = normalise_tags(fields["tags"])
            new = NewBlock(agent=agent, **fields, hard_limit=self.rules.hard_limit)
            blocks.append((new, await self._vectors.embed_one(spec.value)))
        for _ in range(_RETRIES):
            try:
                made = await self.backend.initialise_agent(agent, chosen.name, blocks)
            except AlreadyExistsError:  # a block of that label appeared meanwhile
                continue
            if made:
                logger.info(
                    "agent %r set up from template %r: %s",
                    agent,
                    chosen.name,
                    ", ".join(b.label for b in made),
                )
            return made or []
        raise VersionConflictError(f"setting up agent {agent!r} kept conflicting; try again")

    async def describe_agents(self, agent: str | None = None) -> list[AgentSummary]:
        """See :meth:`MemoryStore.describe_agents`."""
        if agent is not None:
            validate_agent(agent)
        return await self.backend.agent_summaries(agent)

    async def add_message(
        self,
        agent: str,
        role: Role,
        content: str,
        *,
        conversation_id: str = "default",
        created_at: datetime | None = None,
        tags: Sequence[str] = (),
        metadata: Mapping[str, Any] | None = None,
    ) -> Message:
        """See :meth:`MemoryStore.add_message`."""
        validate_agent(agent)
        if role not in _ROLES:
            raise InvalidInputError(f"role must be one of {_ROLES}, got {role!r}")
        if created_at is not None and created_at.tzinfo is None:
            raise InvalidInputError("datetimes given to the memory store must be timezone-aware")
        new = NewMessage(
            agent=agent,
            role=role,
            content=content,
            conversation_id=conversation_id,
            created_at=created_at or utc_now(),
            tags=normalise_tags(tags),
            metadata=metadata,
        )
        return await self.backend.insert_message(new, await self._vectors.embed_one(content))

    async def list_messages(
        self,
        agent: str,
        *,
        conversation_id: str | None = None,
        limit: int = 50,
        before: datetime | None = None,
    ) -> list[Message]:
        """See :meth:`MemoryStore.list_messages`."""
        validate_agent(agent)
        if limit < 1:
            raise InvalidInputError("limit must be at least 1")
        return await self.backend.list_messages(
            agent, conversation_id=conversation_id, limit=limit, before=before
        )
