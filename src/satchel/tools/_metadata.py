"""What every way of defining a tool says about it besides its name, description and
schema: one :class:`ToolOptions` for the keyword arguments people write, one
:class:`ToolMetadata` model that the definition code passes along.

``@tool``, :class:`~satchel.FunctionTool`, :class:`~satchel.RawTool` and
:meth:`~satchel.ToolRegistry.register_raw` all take ``**options: Unpack[ToolOptions]``,
so the keywords are declared once; :meth:`ToolMetadata.of` turns them into the model.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Final, TypedDict, cast

from pydantic import BaseModel, ConfigDict, Field

from satchel._errors import SatchelUsageError
from satchel.schema import OperationInfo
from satchel.tools._spec import (
    OperationSpec,
    ToolAnnotations,
    ToolSpec,
    derive_summary,
    destructive_by_action,
    read_only_by_action,
)

__all__ = [
    "MAX_EXAMPLES",
    "MAX_EXAMPLE_CHARS",
    "VERSION_PATTERN",
    "ToolMetadata",
    "ToolOptions",
    "build_spec",
    "check_examples",
    "check_version",
]

VERSION_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,31}$")
"""What a tool version may look like: ``1``, ``2``, ``2.1``, ``2024-06``, ``beta``."""


def check_version(version: object) -> str | None:
    """``version`` if it is ``None`` or a valid version string (any other value, such
    as the int an untyped caller may set, is refused).

    Raises:
        SatchelUsageError: the version is not a string, is empty or too long, or has
            other characters than letters, digits, ``.``, ``_`` and ``-``.
    """
    if version is None:
        return None
    if not isinstance(version, str) or not VERSION_PATTERN.fullmatch(version):
        raise SatchelUsageError(
            f"Tool version {version!r} is invalid: use up to 32 letters, digits, '.', '_' "
            "or '-', starting with a letter or digit (such as \"2\").",
            details={"version": repr(version)},
        )
    return version


class ToolOptions(TypedDict, total=False):
    """The optional keywords every way of defining a tool accepts.

    Attributes:
        summary: A one-line summary for tool search (default: the description's first
            sentence, trimmed).
        usage_rule: A rule rendered into the agent's context
            (:meth:`~satchel.ToolRegistry.usage_rules`).
        category: A category for the meta-tools' indexes.
        actions: What the tool does (``read``, ``create``, ``update``, ``delete``...);
            ``delete`` makes it destructive unless ``destructive`` says otherwise.
        read_only: It changes nothing.
        destructive: It may delete or overwrite something (held for approval).
        idempotent: Calling it twice changes nothing more.
        open_world: It reaches outside entities (the web, another service).
        version: The tool's version, when several are registered side by side.
        deprecated: Marks this version deprecated; its results carry this notice.
        requires: Tools that must have run earlier in the same turn (the agent runtime
            enforces it; the registry checks the names when the tool is registered).
        examples: Example requests the tool serves, in a user's words ("mail Bob the
            report"); ``discover_tools`` ranks by them and ``get_tool_schema`` shows
            them.
    """

    summary: str | None
    usage_rule: str | None
    category: str | None
    actions: Sequence[str]
    read_only: bool | None
    destructive: bool | None
    idempotent: bool | None
    open_world: bool | None
    version: str | None
    deprecated: str | None
    requires: Sequence[str]
    examples: Sequence[str]


MAX_EXAMPLES: Final = 50
"""The most example requests one tool may carry."""
MAX_EXAMPLE_CHARS: Final = 500
"""The longest example request, in characters."""


def check_examples(examples: Any, *, tool: str = "") -> tuple[str, ...]:
    """``examples`` as a tuple of distinct, whitespace-folded, non-empty strings.

    Raises:
        SatchelUsageError: ``examples`` is a single string or not a sequence of strings,
            has more than :data:`MAX_EXAMPLES` items, or one is longer than
            :data:`MAX_EXAMPLE_CHARS`.

    Example:
        >>> check_examples(["add 2 and 3", "  add 2   and 3 "])
        ('add 2 and 3',)
    """
    where = f"Tool {tool!r}: " if tool else ""
    if isinstance(examples, str) or not isinstance(examples, Sequence):
        raise SatchelUsageError(f"{where}examples must be a list of strings, not {examples!r}.")
    out: dict[str, None] = {}
    for item in cast(Sequence[Any], examples):
        if not isinstance(item, str):
            raise SatchelUsageError(f"{where}every example must be a string, not {item!r}.")
        text = " ".join(item.split())
        if len(text) > MAX_EXAMPLE_CHARS:
            raise SatchelUsageError(
                f"{where}an example is {len(text)} characters; keep each under {MAX_EXAMPLE_CHARS}."
            )
        if text:
            out[text] = None
    if len(out) > MAX_EXAMPLES:
        raise SatchelUsageError(f"{where}{len(out)} examples; give at most {MAX_EXAMPLES}.")
    return tuple(out)


class ToolMetadata(BaseModel):
    """A tool's description data other than name, description and schemas, as one
    value.

    Example:
        >>> ToolMetadata.of({"category": "math", "read_only": True}).annotations.read_only
        True
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    summary: str | None = None
    """See :class:`ToolOptions`."""
    usage_rule: str | None = None
    """See :class:`ToolOptions`."""
    category: str | None = None
    """See :class:`ToolOptions`."""
    actions: tuple[str, ...] = ()
    """See :class:`ToolOptions`."""
    annotations: ToolAnnotations = Field(default_factory=ToolAnnotations)
    """The tool-level hints (``read_only``, ``destructive``, ...)."""
    operation_annotations: Mapping[str, ToolAnnotations] = Field(
        default_factory=dict[str, ToolAnnotations]
    )
    """Hints per operation of a multi-operation tool, over the tool-level ones."""
    version: str | None = None
    """See :class:`ToolOptions`."""
    deprecated: str | None = None
    """See :class:`ToolOptions`."""
    requires: tuple[str, ...] = ()
    examples: tuple[str, ...] = ()
    """See :class:`ToolOptions`."""

    @classmethod
    def of(
        cls,
        options: ToolOptions,
        *,
        operation_annotations: Mapping[str, ToolAnnotations] | None = None,
    ) -> ToolMetadata:
        """The metadata the keyword arguments ``options`` describe."""
        return cls(
            summary=options.get("summary"),
            usage_rule=options.get("usage_rule"),
            category=options.get("category"),
            actions=tuple(options.get("actions", ())),
            annotations=ToolAnnotations(
                read_only=options.get("read_only"),
                destructive=options.get("destructive"),
                idempotent=options.get("idempotent"),
                open_world=options.get("open_world"),
            ),
            operation_annotations=dict(operation_annotations or {}),
            version=check_version(options.get("version")),
            deprecated=options.get("deprecated"),
            requires=tuple(options.get("requires", ())),
            examples=check_examples(options.get("examples", ())),
        )


def build_spec(
    *,
    name: str,
    description: str,
    input_schema: dict[str, Any],
    output_schema: dict[str, Any] | None,
    operations: Mapping[str, OperationInfo],
    meta: ToolMetadata,
    output_wrapped: bool = False,
    memory_gated: bool = False,
) -> ToolSpec:
    """The :class:`~satchel.ToolSpec` of a tool, from its checked schemas and metadata:
    the one place that applies the annotation defaults (:func:`destructive_by_action`)
    and builds each operation's spec.

    Raises:
        SatchelUsageError: annotations are given for an operation the tool lacks.
    """
    unknown = set(meta.operation_annotations) - set(operations)
    if unknown:
        raise SatchelUsageError(
            f"Tool {name!r}: annotations given for unknown operations {sorted(unknown)}; "
            f"its operations are {sorted(operations)}."
        )
    base, overrides = destructive_by_action(
        meta.actions, meta.annotations, tuple(operations), meta.operation_annotations
    )
    if not operations:
        base = read_only_by_action(meta.actions, base)
    specs = {
        op: OperationSpec(
            name=op,
            fields=tuple(info.fields),
            required=tuple(info.required),
            annotations=base.merged(overrides[op]) if op in overrides else base,
        )
        for op, info in operations.items()
    }
    return ToolSpec(
        name=name,
        description=description,
        summary=meta.summary or derive_summary(description),
        input_schema=input_schema,
        output_schema=output_schema,
        output_wrapped=output_wrapped,
        usage_rule=meta.usage_rule,
        category=meta.category,
        actions=meta.actions,
        annotations=base,
        operations=specs,
        memory_gated=memory_gated,
        version=meta.version,
        deprecated=meta.deprecated,
        requires=meta.requires,
        examples=meta.examples,
    )
