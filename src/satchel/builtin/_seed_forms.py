"""The argument forms of the tool systems satchel's built-ins came from, accepted at
validation and never shown in a schema (docs/compat.md lists each with its seed).

Pattern's Rust tools tag an operation with the enum variant (``"Append"``,
``"LoadFromArchival"``) or its snake-case form (``"load_from_archival"``), and its
``send_message`` takes a bare ``{message}``. A model trained on those prompts sends
them; :func:`operation_names` and :func:`pattern_message` turn them into satchel's own
forms before the input models check them, so the schema a model is shown stays
satchel's alone (the field renames are ``AliasChoices`` on the models' fields, which
pydantic leaves out of the schema too).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final, cast

from pydantic import BeforeValidator

__all__ = ["OPERATION_ALIASES", "operation_names", "pattern_message", "snake_case"]

OPERATION_ALIASES: Final[Mapping[str, Mapping[str, str]]] = {
    "context": {"load_from_archival": "load"},
    "recall": {},
}
"""Per built-in, an operation's seed name (Pattern's, in snake case) and satchel's."""

_CAMEL: Final = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def snake_case(name: str) -> str:
    """``name`` as a snake-case operation name: ``"LoadFromArchival"`` is
    ``"load_from_archival"``, ``"Append"`` is ``"append"``.

    Example:
        >>> snake_case("LoadFromArchival")
        'load_from_archival'
    """
    return _CAMEL.sub("_", name.strip()).lower()


def operation_names(aliases: Mapping[str, str]) -> BeforeValidator:
    """A validator for a multi-operation input that reads its ``operation`` in any case
    (Pattern's enum variants) and under the seed names in ``aliases``.

    Example:
        >>> Op = Annotated[A | B, Field(discriminator="operation"),
        ...                operation_names({"load_from_archival": "load"})]
    """

    def normalise(value: Any) -> Any:
        if not isinstance(value, dict):
            return value
        data = cast(dict[str, Any], value)
        name = data.get("operation")
        if not isinstance(name, str):
            return data
        wanted = snake_case(name)
        wanted = aliases.get(wanted, wanted)
        return data if wanted == name else {**data, "operation": wanted}

    return BeforeValidator(normalise)


def pattern_message(value: Any) -> Any:
    """``send_message``'s input with Pattern's forms turned into satchel's: a bare
    ``{"message": text}`` (seed 002) is ``{"target": {"type": "user"}, "content":
    text}``, and a target tagged with its Rust variant (``{"type": "User"}``, seed 000)
    is tagged in lower case. Anything else is left for validation to judge."""
    if not isinstance(value, dict):
        return value
    data = dict(cast(dict[str, Any], value))
    if "message" in data and "content" not in data:
        data["content"] = data.pop("message")
        data.setdefault("target", {"type": "user"})
    target = data.get("target")
    if isinstance(target, dict):
        fields = cast(dict[str, Any], target)
        kind = fields.get("type")
        if isinstance(kind, str) and kind != kind.lower():
            data["target"] = {**fields, "type": kind.lower()}
    return data
