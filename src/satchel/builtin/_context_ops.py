"""The input and output models of the ``context`` tool: one model per operation, and
what an operation returns. Their field names are the public contract (DESIGN §5)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field

from satchel.builtin._seed_forms import OPERATION_ALIASES, operation_names
from satchel.builtin._views import BlockInfo, BlockWritten, Label

__all__ = [
    "ContextAppend",
    "ContextArchive",
    "ContextCreate",
    "ContextList",
    "ContextLoad",
    "ContextOperation",
    "ContextOutput",
    "ContextReplace",
    "ContextSet",
    "ContextSwap",
]


class _Op(BaseModel):
    model_config = ConfigDict(extra="forbid")


# The names a model is likely to send for a text field, besides the one the schema
# publishes (first): ``content`` and ``value`` for each other, as ``append`` and
# ``create``/``set`` differ, and Letta's ``old_content``/``new_content`` and
# ``old_str``/``new_str`` for ``replace``. Only the first is in the schema.
_TEXT = AliasChoices("content", "value")
_VALUE = AliasChoices("value", "content")
_OLD = AliasChoices("old", "old_content", "old_str")
_NEW = AliasChoices("new", "new_content", "new_str")
_ABOUT = "What the block is for (set: omit to keep it)."
# Pattern's swap (seed 000) names its blocks ``archive`` and ``load``.
_ARCHIVE = AliasChoices("archive_label", "archive")
_LOAD = AliasChoices("load_label", "load")


class ContextAppend(_Op):
    """Add a line to a block."""

    operation: Literal["append"]
    label: Label
    content: str = Field(min_length=1, validation_alias=_TEXT, description="The text to add.")


class ContextReplace(_Op):
    """Replace text that occurs exactly once."""

    operation: Literal["replace"]
    label: Label
    old: str = Field(
        min_length=1,
        validation_alias=_OLD,
        description="The exact text to replace.",
    )
    new: str = Field(
        validation_alias=_NEW,
        description="Its replacement (empty deletes it).",
    )


class ContextCreate(_Op):
    """New block; fails if the label exists."""

    operation: Literal["create"]
    label: Label
    value: str = Field(validation_alias=_VALUE, description="The full text.")
    description: str | None = Field(default=None, description=_ABOUT)


class ContextSet(_Op):
    """Overwrite or create a block; returns the old value."""

    operation: Literal["set"]
    label: Label
    value: str = Field(validation_alias=_VALUE, description="The full text.")
    description: str | None = Field(default=None, description=_ABOUT)


class ContextArchive(_Op):
    """Move a block to archival memory (searchable)."""

    operation: Literal["archive"]
    label: Label
    target_label: str | None = Field(
        default=None,
        min_length=1,
        max_length=300,
        description="Archive into this entry, deleting the block (needs admin).",
    )


class ContextLoad(_Op):
    """Load an archival entry into context (owner/label: a copy)."""

    operation: Literal["load"]
    label: Label
    target_label: str | None = Field(
        default=None,
        min_length=1,
        max_length=300,
        description="Load a copy under this label.",
    )


class ContextSwap(_Op):
    """Archive one block, load another, atomically."""

    operation: Literal["swap"]
    archive_label: str = Field(
        min_length=1, max_length=300, validation_alias=_ARCHIVE, description="The block to archive."
    )
    load_label: str = Field(
        min_length=1,
        max_length=300,
        validation_alias=_LOAD,
        description="The archival entry to load.",
    )
    archive_target: str | None = Field(
        default=None,
        min_length=1,
        max_length=300,
        description="As archive's target_label.",
    )
    load_target: str | None = Field(
        default=None,
        min_length=1,
        max_length=300,
        description="As load's target_label.",
    )


class ContextList(_Op):
    """Show your core and working blocks."""

    operation: Literal["list"]


ContextOperation = Annotated[
    ContextAppend
    | ContextReplace
    | ContextCreate
    | ContextSet
    | ContextArchive
    | ContextLoad
    | ContextSwap
    | ContextList,
    Field(discriminator="operation"),
    operation_names(OPERATION_ALIASES["context"]),
]
"""The input of ``context``: one operation, chosen by ``operation`` (also read in
Pattern's forms: ``"Append"``, ``"load_from_archival"``; see docs/compat.md)."""


class ContextOutput(BaseModel):
    """What a ``context`` operation did."""

    message: str = Field(description="One sentence saying what happened.")
    block: BlockWritten | None = Field(
        default=None, description="The block written or moved: size, limit, version."
    )
    previous_value: str | None = Field(
        default=None, description="set: the value before the write (absent if newly created)."
    )
    blocks: list[BlockInfo] = Field(
        default_factory=list[BlockInfo],
        description="list: every core and working block with its value; swap: the archived "
        "block, then the loaded one.",
    )
