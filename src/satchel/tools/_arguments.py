"""Turning what a model sent into validated arguments, or into words it can act on.

Pydantic's own error text is written for developers (``loc``, ``type``); a model does
better with one line per problem naming the field and what to send instead. This
module does that wording, accepts arguments sent as a JSON string, and decodes a
JSON-encoded string inside the arguments only where the schema expects a list or an
object there (reporting that it did).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar, cast

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from satchel._errors import InvalidInputError
from satchel.tools._result import ErrorInfo

__all__ = [
    "ArgumentsError",
    "decode_arguments",
    "describe_errors",
    "validate_with_coercion",
]

T = TypeVar("T")

_CONTAINER_ERRORS = frozenset(
    {
        "list_type",
        "tuple_type",
        "set_type",
        "frozen_set_type",
        "dict_type",
        "model_type",
        "model_attributes_type",
        "dataclass_type",
        "typed_dict_type",
        "is_instance_of",
    }
)
_MAX_INPUT_SHOWN = 80
_MAX_ERRORS_SHOWN = 20


class ArgumentsError(InvalidInputError):
    """A tool call's arguments are unusable; carries the ``invalid_arguments`` record
    the model will see (``call`` turns it into a result and never lets it escape).

    Args:
        error: The record, with every field error in words a model can act on.
    """

    def __init__(self, error: ErrorInfo) -> None:
        super().__init__(error.message, details=error.details)
        self.error = error


def decode_arguments(args: object) -> dict[str, Any]:
    """Accept a mapping, ``None`` (no arguments) or a JSON object as text.

    Raises:
        ArgumentsError: the text is not JSON, or not a JSON object.
    """
    # isinstance cannot say what a mapping holds; the casts pass the caller's own
    # mapping (or a JSON object, keyed by strings) on as it is, as they always did
    if isinstance(args, dict):
        return cast("dict[str, Any]", args)
    if args is None:
        return {}
    if isinstance(args, Mapping):
        return dict(cast("Mapping[str, Any]", args))
    if isinstance(args, str | bytes | bytearray):
        text = args if isinstance(args, str) else bytes(args).decode("utf-8", "replace")
        if not text.strip():
            return {}
        try:
            value = json.loads(text)
        except (json.JSONDecodeError, RecursionError) as exc:
            msg = str(exc) if isinstance(exc, json.JSONDecodeError) else "nested too deeply"
            raise ArgumentsError(
                ErrorInfo(
                    "invalid_arguments",
                    f"The arguments are not valid JSON ({msg}). Send one JSON object.",
                    {"errors": [{"field": "", "problem": "not valid JSON"}]},
                )
            ) from None
        if isinstance(value, dict):
            return cast("dict[str, Any]", value)
        args = value
    kind = type(args).__name__
    raise ArgumentsError(
        ErrorInfo(
            "invalid_arguments",
            f"The arguments must be a JSON object with named fields, not {kind}.",
            {"errors": [{"field": "", "problem": f"expected an object, got {kind}"}]},
        )
    )


def _loc_text(loc: Sequence[int | str]) -> str:
    parts: list[str] = []
    for item in loc:
        if isinstance(item, int):
            parts.append(f"[{item}]")
        else:
            parts.append(("." if parts else "") + item)
    return "".join(parts)


def _short(value: Any) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError, RecursionError):
        text = repr(value)
    if len(text) > _MAX_INPUT_SHOWN:
        text = text[: _MAX_INPUT_SHOWN - 1] + "…"
    return text


def _problem(err: ErrorDetails) -> str:
    kind = err["type"]
    if kind == "missing":
        return "is required but missing"
    if kind == "extra_forbidden":
        return "is not a known field; remove it"
    if kind == "union_tag_invalid":
        ctx = err.get("ctx") or {}
        return (
            f"must be one of {ctx.get('expected_tags', '?')}, "
            f"got {_short(ctx.get('tag', err.get('input')))}"
        )
    if kind == "union_tag_not_found":
        ctx = err.get("ctx") or {}
        return f"is required: say which {ctx.get('discriminator', 'operation')} to run"
    return f"{err['msg'][0].lower()}{err['msg'][1:]} (got {_short(err.get('input'))})"


def describe_errors(
    exc: ValidationError,
    *,
    operations: Mapping[str, Any] | None = None,
    discriminator: str = "operation",
) -> ErrorInfo:
    """Turn a pydantic ``ValidationError`` into an ``invalid_arguments`` error.

    Every field error is listed, each in plain words. For a multi-operation tool the
    operation's name is taken out of pydantic's location and named in the message.
    """
    items: list[dict[str, str]] = []
    lines: list[str] = []
    for err in exc.errors(include_url=False):
        loc = list(err["loc"])
        op: str | None = None
        if operations and loc and isinstance(loc[0], str) and loc[0] in operations:
            op = str(loc.pop(0))
        if err["type"] in ("union_tag_invalid", "union_tag_not_found"):
            # A union nested in the arguments is named by its path and tag field
            # (`target.type`); the tool's own operation union by ``discriminator``.
            tag = str((err.get("ctx") or {}).get("discriminator", "")).strip("'")
            field = _loc_text([*loc, tag]) if loc and tag.isidentifier() else discriminator
        else:
            field = _loc_text(loc)
        problem = _problem(err)
        item = {"field": field, "problem": problem}
        if op is not None:
            item["operation"] = op
        items.append(item)
        where = f"operation '{op}': " if op else ""
        lines.append(f"- {where}`{field or '(arguments)'}` {problem}")
    shown = lines[:_MAX_ERRORS_SHOWN]
    if len(lines) > _MAX_ERRORS_SHOWN:
        shown.append(f"- … and {len(lines) - _MAX_ERRORS_SHOWN} more")
    count = len(items)
    head = "The arguments have 1 problem" if count == 1 else f"The arguments have {count} problems"
    message = f"{head}; fix and call again:\n" + "\n".join(shown)
    return ErrorInfo("invalid_arguments", message, {"errors": items})


def _set_at(data: Any, loc: Sequence[int | str], value: Any) -> bool:
    target = data
    for key in loc[:-1]:
        try:
            target = target[key]
        except (KeyError, IndexError, TypeError):
            return False
    try:
        target[loc[-1]] = value
    except (KeyError, IndexError, TypeError):
        return False
    return True


def _decodable_containers(exc: ValidationError) -> list[tuple[tuple[int | str, ...], Any]]:
    found: list[tuple[tuple[int | str, ...], Any]] = []
    for err in exc.errors(include_url=False):
        raw = err.get("input")
        if err["type"] in _CONTAINER_ERRORS and isinstance(raw, str) and err["loc"]:
            try:
                decoded = json.loads(raw)
            except (json.JSONDecodeError, RecursionError):
                continue
            if isinstance(decoded, list | dict):
                found.append((tuple(err["loc"]), cast(Any, decoded)))
    return found


def validate_with_coercion(
    validate: Callable[[dict[str, Any]], T],
    args: dict[str, Any],
    *,
    operations: Mapping[str, Any] | None = None,
) -> tuple[T, tuple[str, ...]]:
    """Validate ``args``; on failure, decode JSON-encoded strings where the schema wants
    a list or object, and validate once more.

    Returns:
        The validated value and the paths that were decoded (empty when none).

    Raises:
        ArgumentsError: the arguments are invalid even after decoding.
    """
    try:
        return validate(args), ()
    except ValidationError as first:
        fixes = _decodable_containers(first)
        if not fixes:
            raise ArgumentsError(describe_errors(first, operations=operations)) from None
        patched = copy.deepcopy(args)
        paths: list[str] = []
        for loc, decoded in fixes:
            # A discriminated union puts the operation's tag first in the location.
            real_loc = loc[1:] if operations and loc and loc[0] in operations else loc
            if _set_at(patched, real_loc, decoded):
                paths.append(_loc_text(real_loc))
        try:
            return validate(patched), tuple(paths)
        except ValidationError as second:
            raise ArgumentsError(describe_errors(second, operations=operations)) from None
