"""MCP prompts: the hook through which a server offers ready-made messages (an agent's
memory, for clients that ignore server instructions) next to its tools.

A provider lists prompts and renders one by name for the acting agent; the server maps
them to ``prompts/list`` and ``prompts/get``. The server answers an unknown name, or a
missing required argument, with a JSON-RPC "invalid params" error before the provider
is asked, so :meth:`PromptProvider.get_prompt` only sees names it listed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from satchel.tools import ToolContext

__all__ = ["PromptArgument", "PromptContent", "PromptInfo", "PromptMessage", "PromptProvider"]


class PromptArgument(BaseModel):
    """One argument a prompt takes."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    description: str | None = None
    required: bool = False


class PromptInfo(BaseModel):
    """One prompt as listed to the client."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(description="The name a client passes to prompts/get, e.g. 'memory'.")
    title: str | None = Field(default=None, description="A human-readable name for display.")
    description: str | None = None
    arguments: tuple[PromptArgument, ...] = ()


class PromptMessage(BaseModel):
    """One text message of a rendered prompt."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    role: Literal["user", "assistant"] = "user"
    text: str


class PromptContent(BaseModel):
    """A rendered prompt: the messages a client puts into its conversation."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    description: str | None = None
    messages: tuple[PromptMessage, ...]


@runtime_checkable
class PromptProvider(Protocol):
    """Lists and renders prompts for the agent of a request."""

    async def list_prompts(self, ctx: ToolContext) -> Sequence[PromptInfo]:
        """Every prompt the agent in ``ctx`` can get."""
        ...

    async def get_prompt(
        self, name: str, arguments: Mapping[str, str], ctx: ToolContext
    ) -> PromptContent:
        """The prompt ``name`` (one :meth:`list_prompts` gave), rendered now."""
        ...
