"""The tool *definition*: plain, serialisable data, kept apart from the code that runs it."""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from typing import Any, cast

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "NAME_PATTERN",
    "READ_ACTIONS",
    "OperationSpec",
    "ToolAnnotations",
    "ToolSpec",
    "derive_summary",
    "destructive_by_action",
    "read_only_by_action",
]

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
    :class:`~satchel.MetaTools`). Left unset on a tool whose ``actions`` include
    ``delete``, it defaults to ``True`` (see :func:`destructive_by_action`)."""
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
    memory_gated: bool = False
    """The tool writes memory only through a memory store's permission gate, where the
    block's permission decides what runs, what asks a human and what is denied
    (DESIGN §4). satchel's approval gates (:func:`~satchel.consent.with_approval`,
    ``satchel serve``, ``invoke_tool``) leave such a tool to that gate; its annotations
    still reach MCP clients. The built-in ``context``, ``recall`` and ``search`` set it;
    a tool that replaces one of them does not, unless it says so itself."""
    version: str | None = None
    """The tool's version when several are registered side by side (``"1"``, ``"2"``);
    a registry calls the latest (or a pinned default) by the bare name and an older
    one as ``name@version``."""
    deprecated: str | None = None
    """Set on a deprecated version: the notice its results carry, so a model moves on."""
    requires: tuple[str, ...] = ()
    """Tools that must have run (and succeeded) earlier in the same turn before this one
    may run; the agent runtime enforces it and the registry checks the names."""
    examples: tuple[str, ...] = ()
    """Example requests the tool serves, in a user's words: ``discover_tools`` ranks by
    them (as it does by the requests it learned from use) and ``get_tool_schema`` shows
    them."""

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
            named = cast("dict[str, Any]", args)  # what isinstance cannot say
            op = self.operations.get(str(named.get("operation")))
            if op is not None:
                return op.annotations
        return self.annotations

    def is_destructive(self, args: Any = None) -> bool:
        """Whether a call with ``args`` is destructive (per operation when known; with
        no arguments, whether any part of the tool is)."""
        if args is None and self.operations:
            return any(op.annotations.destructive is True for op in self.operations.values())
        return self.annotations_for(args).destructive is True


_DELETE: str = "delete"

READ_ACTIONS: frozenset[str] = frozenset(
    {
        "read",
        "get",
        "list",
        "search",
        "find",
        "query",
        "view",
        "show",
        "lookup",
        "describe",
        "count",
    }
)
"""Actions that only read: a tool without operations whose ``actions`` are all among
them is read-only by default (:func:`read_only_by_action`)."""


def _deletes(operation: str) -> bool:
    name = operation.lower()
    return name == _DELETE or name.startswith(("delete", "remove")) or name.endswith("_delete")


def destructive_by_action(
    actions: Collection[str],
    base: ToolAnnotations,
    operations: Collection[str] = (),
    overrides: Mapping[str, ToolAnnotations] | None = None,
) -> tuple[ToolAnnotations, dict[str, ToolAnnotations]]:
    """The annotations of a tool declared the AgenticPal way: with ``delete`` among its
    ``actions`` and no explicit ``destructive``, it is destructive by default.

    For a tool without operations, ``base`` becomes destructive. For a multi-operation
    tool, nothing changes when any operation's override sets ``destructive`` (the author
    said which ones are); otherwise the operations named for deleting (``delete``,
    ``delete_*``, ``remove*``, ``*_delete``) become destructive, or, when none is, every
    operation not marked read-only.

    Returns:
        ``base`` and the per-operation ``overrides``, with the defaults applied.

    Example:
        >>> base, _ = destructive_by_action(["delete"], ToolAnnotations())
        >>> base.destructive
        True
    """
    extra = dict(overrides or {})
    if _DELETE not in actions or base.destructive is not None:
        return base, extra
    if not operations:
        return base.merged(ToolAnnotations(destructive=True)), extra
    if any(o.destructive is not None for o in extra.values()):
        return base, extra
    named = [op for op in operations if _deletes(op)]
    if not named:
        named = [op for op in operations if base.merged(extra.get(op, base)).read_only is not True]
    on = ToolAnnotations(destructive=True)
    for op in named:
        extra[op] = extra[op].merged(on) if op in extra else on
    return base, extra


def read_only_by_action(actions: Collection[str], base: ToolAnnotations) -> ToolAnnotations:
    """``base`` marked read-only when the tool declares ``actions`` the AgenticPal way,
    every one of them only reads (:data:`READ_ACTIONS`), and it says nothing itself about
    ``read_only``. Multi-operation tools keep their operations' own annotations.

    Example:
        >>> read_only_by_action(["read", "search"], ToolAnnotations()).read_only
        True
        >>> read_only_by_action(["read", "update"], ToolAnnotations()).read_only is None
        True
    """
    if not actions or base.read_only is not None or base.destructive is True:
        return base
    if all(a.lower() in READ_ACTIONS for a in actions):
        return base.merged(ToolAnnotations(read_only=True))
    return base


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
