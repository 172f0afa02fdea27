"""What the built-in tools show a model about a block, and the one place where the
store's plain ``ValueError`` (a bad label, an empty tag) becomes words a model can act
on."""

from __future__ import annotations

from collections.abc import Awaitable
from datetime import datetime
from typing import Annotated, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from satchel._errors import ToolRetry
from satchel.memory import Block

__all__ = ["BlockInfo", "BlockWritten", "Label", "block_info", "block_written", "checked"]

_T = TypeVar("_T")

Label = Annotated[
    str,
    Field(
        min_length=1,
        max_length=300,
        description=("The block's label as shown in memory (owner/label if shared with you)."),
    ),
]
"""A block label as the built-in tools accept it."""


class BlockInfo(BaseModel):
    """One block as a built-in tool reports it."""

    model_config = ConfigDict(frozen=True)

    label: str = Field(description="How you address the block.")
    kind: Literal["core", "working", "archival"] = Field(
        description="core: always in context; working: loaded in context; archival: stored."
    )
    description: str = Field(description="What the block is for.")
    chars: int = Field(description="Length of the value in characters.")
    char_limit: int | None = Field(description="The most characters it may hold, if limited.")
    permission: str = Field(description="What you may do with it.")
    version: int = Field(description="Goes up by one on every write.")
    shared_from: str | None = Field(
        default=None, description="The agent that owns it and shared it with you, if any."
    )
    tags: list[str] = Field(default_factory=list[str])
    created_at: datetime = Field(description="When it was created (UTC).")
    updated_at: datetime = Field(description="When it was last written (UTC).")
    value: str | None = Field(default=None, description="The full text, when included.")


class BlockWritten(BaseModel):
    """A block as a write left it: where it stands, without its description, tags and
    times (a write result repeats nothing the model already has: an append of a line
    once came back with the block's whole description)."""

    model_config = ConfigDict(frozen=True)

    label: str = Field(description="How you address the block.")
    kind: Literal["core", "working", "archival"] = Field(description="Where it is now.")
    chars: int = Field(description="Length of the value in characters.")
    char_limit: int | None = Field(description="The most characters it may hold, if limited.")
    permission: str = Field(description="What you may do with it.")
    version: int = Field(description="Its version after the write.")
    shared_from: str | None = Field(
        default=None, description="The agent that owns it and shared it with you, if any."
    )


def block_written(block: Block, agent: str) -> BlockWritten:
    """The short account of ``block`` after a write, as ``agent`` sees it."""
    shared = block.agent != agent
    return BlockWritten(
        label=block.address_for(agent),
        kind=block.kind.value,
        chars=block.chars,
        char_limit=block.char_limit,
        permission=block.shares.get(agent, block.permission) if shared else block.permission,
        version=block.version,
        shared_from=block.agent if shared else None,
    )


def block_info(block: Block, agent: str, *, with_value: bool = False) -> BlockInfo:
    """Describe ``block`` as ``agent`` sees it (its address, and its owner when
    shared)."""
    shared = block.agent != agent
    return BlockInfo(
        label=block.address_for(agent),
        kind=block.kind.value,
        description=block.description,
        chars=block.chars,
        char_limit=block.char_limit,
        permission=(block.shares.get(agent, block.permission) if shared else block.permission),
        version=block.version,
        shared_from=block.agent if shared else None,
        tags=list(block.tags),
        created_at=block.created_at,
        updated_at=block.updated_at,
        value=block.value if with_value else None,
    )


async def checked(call: Awaitable[_T]) -> _T:
    """Await a store call, turning the ``ValueError`` it raises for invalid input into
    :class:`~satchel.ToolRetry` (the model sent something the store cannot take).

    Memory errors (:class:`~satchel.MemoryStoreError`) pass through: the registry maps
    them to result kinds itself.
    """
    try:
        return await call
    except ValueError as exc:
        text = str(exc).rstrip(".")
        raise ToolRetry(f"Invalid arguments: {text}. Fix them and try again.") from exc
