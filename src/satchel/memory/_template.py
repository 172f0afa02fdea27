"""The blocks a new agent starts with: Letta's ``persona`` and ``human``, or a template.

:meth:`~satchel.memory.MemoryStore.ensure_agent` creates an agent's starting blocks the
first time the agent is used, once: a block the user deletes later is not created again.
What it creates is an :class:`AgentTemplate`: :func:`default_template` (the two core
blocks Letta users expect), :func:`empty_template` (none), or a file a person writes
(:func:`load_template`), TOML or JSON chosen by its extension::

    # my-agent.toml
    [[blocks]]
    label = "persona"
    description = "Who you are and how you speak."
    value = "I am Sam, a terse assistant for a small bakery."
    char_limit = 3000

    [[blocks]]
    label = "orders"
    kind = "working"
    description = "Open customer orders: who, what, when due."

Every field but ``label`` has a default (those of
:meth:`~satchel.memory.MemoryStore.create_block`); an unknown field is an error, so a
typo never passes silently.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Annotated, Any, Final, Self, cast

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from satchel._errors import InvalidInputError, SatchelUsageError
from satchel.memory._models import BlockKind, Permission, validate_label

__all__ = [
    "CORE_CHAR_LIMIT",
    "AgentTemplate",
    "BlockTemplate",
    "default_template",
    "empty_template",
    "load_template",
]

CORE_CHAR_LIMIT: Final = 5000
"""The char limit of the default ``persona`` and ``human`` blocks: Letta's classic
per-block limit. About 1,200 tokens each, so both cost the context window under 2,500
tokens when full, while holding a page of facts; past it the model is told to summarise
or archive rather than let the block grow without bound."""

_PERSONA_DESCRIPTION = (
    "Who you are: your name, role, personality, tone and the way you work. Keep it in "
    "the first person. Change it when the user asks you to behave differently or you "
    "settle on a lasting habit; not for facts about the user (those go in 'human') or "
    "for passing details of one conversation (archival memory)."
)
_HUMAN_DESCRIPTION = (
    "What you know about the person you talk with: their name, what they do, people "
    "and places that matter to them, preferences, plans and anything they asked you to "
    "remember. Add a fact as soon as you learn it, one short line each; correct a fact "
    "that changed instead of adding a contradicting one. Move long or rarely needed "
    "detail to archival memory when this block nears its limit."
)


class BlockTemplate(BaseModel):
    """One starting block: the arguments of
    :meth:`~satchel.memory.MemoryStore.create_block`.

    Attributes:
        label: The block's label (unique in a template).
        value: Its starting text; at most ``char_limit`` characters.
        description: What belongs in the block, written for the model that reads it.
        kind: ``core`` (always in context), ``working`` or ``archival``.
        permission: What the agent may do with it (see
            :class:`~satchel.memory.Permission`).
        char_limit: The most characters the value may hold; ``None`` for no limit.
        pinned: A hint to context builders to keep the block in context.
        tags: The block's tags (``global`` shares it into every project).
        metadata: Free-form JSON data kept with the block.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    label: str
    value: str = ""
    description: str = ""
    kind: BlockKind = BlockKind.CORE
    permission: Permission = Permission.READ_WRITE
    char_limit: Annotated[int, Field(ge=0)] | None = None
    pinned: bool = False
    tags: tuple[str, ...] = ()
    metadata: dict[str, Any] = Field(default_factory=dict[str, Any])

    @field_validator("label")
    @classmethod
    def _check_label(cls, label: str) -> str:
        return validate_label(label)

    @model_validator(mode="after")
    def _value_fits(self) -> Self:
        if self.char_limit is not None and len(self.value) > self.char_limit:
            raise InvalidInputError(
                f"the value has {len(self.value)} characters, over char_limit {self.char_limit}"
            )
        return self


class AgentTemplate(BaseModel):
    """The blocks a new agent starts with.

    Attributes:
        name: Recorded with the agent (``satchel memory agents`` shows it); a file's
            name when loaded by :func:`load_template`.
        blocks: The blocks, created in this order; labels must differ. May be empty.

    Example:
        >>> AgentTemplate(name="notes", blocks=[BlockTemplate(label="notes")]).labels
        ('notes',)
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = "custom"
    blocks: tuple[BlockTemplate, ...] = ()

    @model_validator(mode="after")
    def _labels_differ(self) -> Self:
        seen: set[str] = set()
        for block in self.blocks:
            if block.label in seen:
                raise InvalidInputError(f"the label {block.label!r} appears twice")
            seen.add(block.label)
        return self

    @property
    def labels(self) -> tuple[str, ...]:
        """The labels of the blocks, in order."""
        return tuple(block.label for block in self.blocks)


def default_template() -> AgentTemplate:
    """Letta's two core blocks: ``persona`` (who the agent is) and ``human`` (what it
    knows about its user), empty, ``read_write``, each limited to
    :data:`CORE_CHAR_LIMIT` characters, with descriptions telling the model what
    belongs in each."""
    return AgentTemplate(
        name="default",
        blocks=(
            BlockTemplate(
                label="persona", description=_PERSONA_DESCRIPTION, char_limit=CORE_CHAR_LIMIT
            ),
            BlockTemplate(
                label="human", description=_HUMAN_DESCRIPTION, char_limit=CORE_CHAR_LIMIT
            ),
        ),
    )


def empty_template() -> AgentTemplate:
    """No starting blocks: the agent starts with an empty memory."""
    return AgentTemplate(name="none")


def load_template(path: str | Path) -> AgentTemplate:
    """Read a template file: TOML (``.toml``) or JSON (``.json``), a table with an
    optional ``name`` and a ``blocks`` array of :class:`BlockTemplate` tables.

    The template's ``name`` defaults to the file's name.

    Raises:
        SatchelUsageError: The file is missing or unreadable, is not valid TOML or
            JSON, or breaks a rule; the one-line message names the file and the field.
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in (".toml", ".json"):
        raise SatchelUsageError(
            f"{path}: a template must be a .toml or .json file (got {path.name!r})"
        )
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise SatchelUsageError(f"{path}: cannot read the template: {reason}") from exc
    try:
        data: Any = tomllib.loads(text) if suffix == ".toml" else json.loads(text)
    except (tomllib.TOMLDecodeError, json.JSONDecodeError) as exc:
        kind = "TOML" if suffix == ".toml" else "JSON"
        raise SatchelUsageError(f"{path}: not valid {kind}: {exc}") from exc
    if not isinstance(data, dict):
        raise SatchelUsageError(f"{path}: the template must be a table with a 'blocks' array")
    fields: dict[str, Any] = {"name": path.name, **cast(dict[str, Any], data)}
    try:
        return AgentTemplate.model_validate(fields)
    except ValidationError as exc:
        raise SatchelUsageError(f"{path}: {_first_error(exc, fields)}") from exc


def _first_error(exc: ValidationError, data: dict[str, Any]) -> str:
    """The first validation error as ``blocks[1] (label 'x').char_limit: message``."""
    error = exc.errors(include_url=False)[0]
    where = ""
    raw: object = data.get("blocks")
    blocks = cast(list[object], raw) if isinstance(raw, list) else []
    for part in error["loc"]:
        if isinstance(part, int):
            where += f"[{part}]"
            item = blocks[part] if where.startswith("blocks[") and part < len(blocks) else None
            label = cast(dict[str, object], item).get("label") if isinstance(item, dict) else None
            if isinstance(label, str) and where.count("[") == 1:
                where += f" (label {label!r})"
        else:
            where += f".{part}" if where else str(part)
    message = str(error["msg"]).removeprefix("Value error, ")
    return f"{where}: {message}" if where else message
