""":class:`ToolCall`, the one shape every provider's tool call is parsed into, and the
duck-typed field access the parsers share.

Two kinds of malformed payload are told apart on purpose:

* the **arguments** are the model's own text. Whatever arrives there (JSON that does not
  parse, JSON that is not an object, a value of the wrong type) is kept in
  :attr:`ToolCall.arguments`, so that :meth:`~satchel.ToolRegistry.call` answers with an
  ``invalid_arguments`` result the model can read and correct;
* the **envelope** (the call's id, its name, the list around it) comes from the provider
  or its SDK. When it is missing or of the wrong type, the code handed the parser the
  wrong object, and the parser raises :class:`~satchel.SatchelUsageError` at once.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, cast

from satchel._errors import SatchelUsageError

__all__ = [
    "ToolCall",
    "answer_id",
    "as_list",
    "get_field",
    "is_record",
    "item_list",
    "normalize_arguments",
    "optional_id",
    "require_id",
    "require_name",
]


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One tool call a model asked for, in a provider-neutral shape.

    Attributes:
        id: The provider's id for the call (``call_...``, ``toolu_...``); ``None`` when the
            provider gave none (Gemini's ids are optional).
        name: The tool's name, as the model wrote it.
        arguments: The arguments as a dict; or, when the model sent text that is not a
            JSON object, that raw text, so that running the call reports
            ``invalid_arguments`` to the model instead of failing here.

    Example:
        >>> call = ToolCall("call_1", "add", {"a": 1, "b": 2})
        >>> result = await registry.call(call.name, call.arguments)
    """

    id: str | None
    name: str
    arguments: dict[str, Any] | str = field(default_factory=dict[str, Any])


def get_field(obj: object, *names: str) -> Any:
    """The first of ``names`` that ``obj`` has and that is not ``None``: a key of a mapping,
    or an attribute of any other object (an SDK model). ``None`` when none is present."""
    for name in names:
        if isinstance(obj, Mapping):
            value = cast(Mapping[str, Any], obj).get(name)
        else:
            value = getattr(obj, name, None)
        if value is not None:
            return value
    return None


def is_record(obj: object) -> bool:
    """True for a mapping or an object with attributes; false for text, numbers and lists."""
    return not isinstance(obj, str | bytes | bytearray | int | float | bool | list | tuple) and (
        obj is not None
    )


def as_list(value: object) -> list[Any] | None:
    """``value`` as a list when it is a list or a tuple, else ``None``."""
    if isinstance(value, list | tuple):
        return list(cast(list[Any] | tuple[Any, ...], value))
    return None


def item_list(value: object, where: str) -> list[Any]:
    """``value`` as a list of items (``None`` is no items), or :class:`SatchelUsageError`
    naming ``where``."""
    if value is None:
        return []
    items = as_list(value)
    if items is not None:
        return items
    raise SatchelUsageError(f"{where} must be a list, got {type(value).__name__}.")


def require_name(value: object, where: str) -> str:
    """A call's tool name, which must be a non-empty string."""
    if isinstance(value, str) and value:
        return value
    got = "nothing" if value is None else f"{type(value).__name__} {value!r}"
    raise SatchelUsageError(f"{where} must be the tool's name as a non-empty string, got {got}.")


def require_id(value: object, where: str, provider: str) -> str:
    """A call's id, which ``provider`` needs to match the result to the call."""
    if isinstance(value, str) and value:
        return value
    got = "nothing" if value is None else f"{type(value).__name__} {value!r}"
    raise SatchelUsageError(
        f"{where} must be the call's id as a non-empty string, got {got}; {provider} needs "
        "it to match the tool's result to the call."
    )


def optional_id(value: object, where: str) -> str | None:
    """An id that may be absent, but must be a string when present."""
    if value is None or value == "":
        return None
    if isinstance(value, str):
        return value
    raise SatchelUsageError(f"{where} must be a string when present, got {type(value).__name__}.")


def normalize_arguments(value: object) -> dict[str, Any] | str:
    """The model's arguments as a dict when they are a JSON object; otherwise kept as text
    for the registry to reject with ``invalid_arguments``.

    ``None`` means no arguments. A mapping is copied. Text is decoded when it holds a JSON
    object and kept as it is when not. Any other value (a list, a number) is encoded as
    JSON text, so the model is told it sent the wrong type.
    """
    if value is None:
        return {}
    if isinstance(value, Mapping):
        return dict(cast(Mapping[str, Any], value))
    if isinstance(value, bytes | bytearray):
        value = bytes(value).decode("utf-8", "replace")
    if isinstance(value, str):
        try:
            decoded = json.loads(value)
        except (json.JSONDecodeError, RecursionError):
            return value
        return cast(dict[str, Any], decoded) if isinstance(decoded, dict) else value
    return json.dumps(value, ensure_ascii=False, default=str)


def answer_id(call: ToolCall, fn: str) -> str:
    """The id a result must carry to answer ``call``; ``fn`` names the caller."""
    if call.id is None:
        raise SatchelUsageError(
            f"{fn}() needs each call's id to answer it, and the call to {call.name!r} has none."
        )
    return call.id
