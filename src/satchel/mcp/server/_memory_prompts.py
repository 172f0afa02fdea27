"""An agent's memory as an MCP prompt, for clients that ignore server instructions.

The server's ``instructions`` hold the agent's rendered context as it was when the
server started, and many clients never show them to the model. The ``memory`` prompt
renders the same text again at each ``prompts/get``, so a person can insert the
agent's current memory into a conversation (Claude Desktop's "+" menu, for example).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

from satchel.builtin import render_context
from satchel.mcp.server._prompts import PromptContent, PromptInfo, PromptMessage
from satchel.memory import MemoryStore
from satchel.registry import BaseRegistry
from satchel.tools import ToolContext

__all__ = ["MEMORY_PROMPT", "MemoryPrompts"]

MEMORY_PROMPT: Final = "memory"
"""The name of the prompt that renders the agent's memory."""


class MemoryPrompts:
    """Serves the ``memory`` prompt: the acting agent's rendered context (core and
    working blocks, then the tool rules), the same text as the server instructions but
    current (a :class:`~satchel.mcp.PromptProvider`).

    Args:
        store: The memory store.
        registry: The tools whose usage rules the rendered context includes.

    Example:
        >>> server = create_server(tools, prompts=MemoryPrompts(store, tools))
    """

    def __init__(self, store: MemoryStore, registry: BaseRegistry | None = None) -> None:
        self.store = store
        self.registry = registry

    async def list_prompts(self, ctx: ToolContext) -> Sequence[PromptInfo]:
        """The one prompt, ``memory``; it takes no arguments."""
        return [
            PromptInfo(
                name=MEMORY_PROMPT,
                title="Agent memory",
                description=f"The current memory of the agent {ctx.agent!r} (its core and "
                "working blocks) and the rules of its memory tools: the server "
                "instructions, rendered now. For clients that do not pass server "
                "instructions to the model.",
            )
        ]

    async def get_prompt(
        self, name: str, arguments: Mapping[str, str], ctx: ToolContext
    ) -> PromptContent:
        """The ``memory`` prompt as one user message."""
        text = await render_context(self.store, ctx.agent, self.registry)
        return PromptContent(
            description=f"The memory of the agent {ctx.agent!r}, as of now.",
            messages=(PromptMessage(role="user", text=text),),
        )
