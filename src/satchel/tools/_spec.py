"""The tool *definition*: plain, serialisable data, kept apart from the code that runs it."""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["NAME_PATTERN", "OperationSpec", "ToolAnnotations", "ToolSpec", "derive_summary"]

NAME_PATTERN = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
"""Every tool name (prefix included) must match this: the strictest rule among providers."""

_SUMMARY_MAX_WORDS = 12
_SENTENCE_END = re.compile(r"(?<=[.!?。])\s")


class ToolAnnotations(BaseModel):
    """Behaviour hints about a tool, mapped to MCP's ``*Hint`` annotations.

    A hint left as ``None`` is unknown; satchel treats an unknown ``destructive`` as
    ``False`` when deciding on approval.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    read_only: bool | None = None
    """The tool does not change its environment."""
    destructive: bool | None = None
    """The tool may delete or overwrite something (needs a human's approval in
    :class:`~satchel.MetaTools`)."""
    idempotent: bool | None = None
    """Calling it twice with the same arguments has no further effect."""
    open_world: bool | None = None
    """The tool reaches outside entities (the web, another service)."""

    def merged(self, override: ToolAnnotations) -> ToolAnnotations:
        """Return these annotations with every hint that ``override`` sets replaced."""
        data = self.model_dump()
        data.update(override.model_dump(exclude_none=True))
        return ToolAnnotations(**data)


class OperationSpec(BaseModel):
    """One operation of a multi-operation tool."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    fields: tuple[str, ...] = ()
    """The operation's own argument names, ``operation`` excluded."""
    required: tuple[str, ...] = ()
    """The names among :attr:`fields` that the operation requires."""
    annotations: ToolAnnotations = Field(default_factory=ToolAnnotations)
    """The tool's annotations with this operation's own overrides applied."""


class ToolSpec(BaseModel):
    """Everything a model, a provider or a catalog needs to know about a tool.

    A spec is data only: it never holds the callable. Its schemas are normalised
    (no ``$ref``, no titles, top-level ``type: object``) and adapted per provider
    by :func:`satchel.schema.tool_definition`.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    description: str
    summary: str
    """A short line (about 15 tokens) for catalogs and ``discover_tools``."""
    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None = None
    """The schema of the structured output; ``None`` when the tool returns free text."""
    output_wrapped: bool = False
    """True when a non-object output is sent as ``{"result": value}``."""
    usage_rule: str | None = None
    category: str | None = None
    actions: tuple[str, ...] = ()
    annotations: ToolAnnotations = Field(default_factory=ToolAnnotations)
    operations: dict[str, OperationSpec] = Field(default_factory=dict[str, OperationSpec])
    """Per-operation facts of a multi-operation tool; empty for an ordinary tool."""

    @property
    def is_write(self) -> bool:
        """True unless the tool (and every operation) is marked read-only."""
        if self.operations:
            return any(op.annotations.read_only is not True for op in self.operations.values())
        return self.annotations.read_only is not True

    def annotations_for(self, args: Any) -> ToolAnnotations:
        """The annotations that apply to a call with ``args`` (an operation's own, when
        the tool has operations and ``args`` names one)."""
        if self.operations and isinstance(args, dict):
            op = self.operations.get(str(args.get("operation")))  # pyright: ignore[reportUnknownMemberType,reportUnknownArgumentType]
            if op is not None:
                return op.annotations
        return self.annotations

    def is_destructive(self, args: Any = None) -> bool:
        """Whether a call with ``args`` is destructive (per operation when known; with
        no arguments, whether any part of the tool is)."""
        if args is None and self.operations:
            return any(op.annotations.destructive is True for op in self.operations.values())
        return self.annotations_for(args).destructive is True


def derive_summary(description: str, *, max_words: int = _SUMMARY_MAX_WORDS) -> str:
    """The first sentence of ``description``, cut to about ``max_words`` words.

    Example:
        >>> derive_summary("Add two integers. Returns their sum.")
        'Add two integers.'
    """
    text = " ".join(description.split())
    if not text:
        return ""
    first = _SENTENCE_END.split(text, maxsplit=1)[0]
    words = first.split(" ")
    if len(words) <= max_words:
        return first
    return " ".join(words[:max_words]).rstrip(",;:") + "…"
