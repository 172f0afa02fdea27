"""The input and output models of the ``context`` tool: one model per operation, and
what an operation returns. Their field names are the public contract (DESIGN §5)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field

from satchel.builtin._views import BlockInfo, Label

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


class ContextAppend(_Op):
    """Add content at the end of a block, on a new line."""

    operation: Literal["append"]
    label: Label
    content: str = Field(min_length=1, validation_alias=_TEXT, description="The text to add.")


class ContextReplace(_Op):
    """Replace one exact passage of a block; the old text must occur exactly once."""

    operation: Literal["replace"]
    label: Label
    old: str = Field(
        min_length=1,
        validation_alias=_OLD,
        description="The exact passage to replace; it must occur once.",
    )
    new: str = Field(
        validation_alias=_NEW,
        description="The text to put in its place (empty to delete the passage).",
    )


class ContextCreate(_Op):
    """Create a new block in your context; fails if the label is taken."""

    operation: Literal["create"]
    label: Label
    value: str = Field(validation_alias=_VALUE, description="The new block's text.")
    description: str = Field(default="", description="What the block is for.")


class ContextSet(_Op):
    """Overwrite a block's whole value (creating the block if needed); returns the old
    value."""

    operation: Literal["set"]
    label: Label
    value: str = Field(validation_alias=_VALUE, description="The block's new full text.")
    description: str | None = Field(
        default=None, description="What the block is for; leave out to keep the current one."
    )


class ContextArchive(_Op):
    """Move a block out of your context into archival memory (it stays searchable)."""

    operation: Literal["archive"]
    label: Label
    target_label: str | None = Field(
        default=None,
        min_length=1,
        max_length=300,
        description="Save the block's text into this archival entry instead (created, or "
        "overwritten if it exists) and remove the block; removing needs admin. Leave out "
        "to archive the block itself.",
    )


class ContextLoad(_Op):
    """Load an archival block into your context as working memory. An entry search
    shows as person/label (the person's, seen from a project) loads as a copy."""

    operation: Literal["load"]
    label: Label
    target_label: str | None = Field(
        default=None,
        min_length=1,
        max_length=300,
        description="Load a copy as a new working block with this label and keep the "
        "archival entry. Leave out to move the entry itself into working memory.",
    )


class ContextSwap(_Op):
    """Archive one block and load another in a single step: both happen or neither."""

    operation: Literal["swap"]
    archive_label: str = Field(
        min_length=1, max_length=300, description="The block to move out of context."
    )
    load_label: str = Field(
        min_length=1, max_length=300, description="The archival block to load into context."
    )
    archive_target: str | None = Field(
        default=None,
        min_length=1,
        max_length=300,
        description="As archive's target_label: save into this archival entry and remove "
        "the block (needs admin).",
    )
    load_target: str | None = Field(
        default=None,
        min_length=1,
        max_length=300,
        description="As load's target_label: load a copy under this new label.",
    )


class ContextList(_Op):
    """List your core and working blocks: labels, sizes and limits, then their values."""

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
]
"""The input of ``context``: one operation, chosen by ``operation``."""


class ContextOutput(BaseModel):
    """What a ``context`` operation did."""

    message: str = Field(description="One sentence saying what happened.")
    block: BlockInfo | None = Field(
        default=None, description="The block written or moved, as it is now."
    )
    previous_value: str | None = Field(
        default=None, description="set: the value before the write (absent if newly created)."
    )
    blocks: list[BlockInfo] = Field(
        default_factory=list[BlockInfo],
        description="list: every core and working block with its value; swap: the archived "
        "block, then the loaded one.",
    )
