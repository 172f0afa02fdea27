"""The per-call context injected into tools that ask for it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["ToolContext"]


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolContext:
    """Who is calling, and with what, passed to a tool that declares a parameter of this
    type. It never appears in a tool's schema.

    Example:
        >>> ctx = ToolContext(agent="alice", deps={"db": ...})
        >>> await registry.call("note", {"text": "hi"}, ctx=ctx)
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
