"""What a tool call returns: :class:`ToolResult`, never an exception."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, cast

from pydantic import BaseModel
from pydantic_core import PydanticSerializationError, to_json, to_jsonable_python

from satchel._errors import ErrorKind

__all__ = ["ErrorInfo", "ToolResult"]


def _valid_text(text: str) -> str:
    """``text`` with each lone surrogate (which no UTF-8 text can carry, e.g. from a
    ``"\\ud800"`` escape or ``surrogateescape``) replaced by U+FFFD; pairs are joined."""
    try:
        text.encode()
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


def _valid(value: Any) -> Any:
    """``value`` with every string in its dicts and lists, keys included, made valid
    Unicode (other values are left as they are)."""
    if isinstance(value, str):
        return _valid_text(value)
    if isinstance(value, dict):
        items = cast(dict[Any, Any], value).items()
        return {_valid(k): _valid(v) for k, v in items}
    if isinstance(value, list):
        return [_valid(v) for v in cast(list[Any], value)]
    return value


def _dumps(value: Any, **options: Any) -> str:
    """``value`` as JSON text; a NaN or infinity (which JSON has no word for) is
    ``null``, as pydantic writes it."""
    try:
        return json.dumps(value, ensure_ascii=False, allow_nan=False, **options)
    except ValueError:
        return json.dumps(_finite(value), ensure_ascii=False, **options)


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in cast(dict[Any, Any], value).items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in cast(list[Any], value)]
    return value


def _jsonable(value: Any) -> Any:
    """``value`` as JSON-ready data; a dict key holding a lone surrogate (which pydantic
    cannot encode) is made valid Unicode first."""
    try:
        if isinstance(value, BaseModel):
            return value.model_dump(mode="json")
        return to_jsonable_python(value, fallback=str)
    except (UnicodeEncodeError, PydanticSerializationError):
        raw = value.model_dump() if isinstance(value, BaseModel) else value
        return to_jsonable_python(_valid(raw), fallback=str)


@dataclass(slots=True)
class ErrorInfo:
    """The error record of a :class:`ToolResult`: data for a model to act on, not an
    exception (nothing raises it; ``call`` returns it inside the result).

    Attributes:
        kind: What went wrong, one of :data:`satchel.ErrorKind`.
        message: A sentence or two written for a model: what was wrong and what to do.
        details: Structured facts (field errors, suggestions, an approval id).
    """

    kind: ErrorKind
    message: str
    details: Mapping[str, Any] = field(default_factory=dict[str, Any])

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of the error."""
        return {
            "kind": self.kind,
            "message": _valid_text(self.message),
            "details": _valid(_jsonable(dict(self.details))),
        }


@dataclass(slots=True)
class ToolResult:
    """The outcome of one tool call. Treat it as read-only.

    (It is not a frozen dataclass only because a frozen one costs about a microsecond
    more to build, on every call.)

    Attributes:
        tool: The name the call asked for.
        output: The validated output (a model, or a plain value) when the call succeeded.
        error: The structured error when it did not.
        coerced: Argument paths whose JSON-encoded string was decoded to fit the schema.
        wrapped: True when :attr:`output` is a plain value sent as ``{"result": value}``.
        notice: A note for the model beside the outcome, such as a deprecated tool
            version's notice (``"search@1 is deprecated: use search@2"``).
        presented: An error as a compatibility profile shows it (AgenticPal's
            ``{"success": false, "message": ..., "error": ...}``, see docs/compat.md):
            when set, :meth:`to_text` gives it as JSON in place of satchel's own words;
            :attr:`error` still says what went wrong.
    """

    tool: str
    output: Any = None
    error: ErrorInfo | None = None
    coerced: tuple[str, ...] = ()
    wrapped: bool = False
    notice: str | None = None
    presented: Mapping[str, Any] | None = None

    @property
    def ok(self) -> bool:
        """True when the call succeeded."""
        return self.error is None

    def structured(self) -> dict[str, Any] | None:
        """The output as a JSON object (``{"result": value}`` for a plain value), or
        ``None`` for an error or an unstructured text output."""
        if self.error is not None:
            return None
        out = self.output
        if self.wrapped:  # before the model case: a `Model | None` output is wrapped too
            return {"result": _jsonable(out)}
        if isinstance(out, BaseModel):
            return _jsonable(out)
        if isinstance(out, dict):
            return _jsonable(out)
        return None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict: ``{"ok": true, "output": ...}`` or
        ``{"ok": false, "error": {...}}``."""
        if self.error is not None:
            data: dict[str, Any] = {"ok": False, "error": self.error.to_dict()}
        else:
            data = {"ok": True, "output": self._jsonable_output()}
            if self.coerced:
                data["coerced"] = list(self.coerced)
        if self.notice:
            data["notice"] = _valid_text(self.notice)
        return data

    def to_json(self) -> str:
        """:meth:`to_dict` as compact JSON text. Always valid UTF-8: a lone surrogate in
        the output (which JSON text cannot carry) becomes U+FFFD."""
        try:
            if (
                self.error is None
                and not self.coerced
                and not self.notice
                and isinstance(self.output, BaseModel)
            ):
                return '{"ok":true,"output":' + self.output.model_dump_json() + "}"
            return to_json(self.to_dict(), fallback=str, inf_nan_mode="null").decode()
        except (UnicodeEncodeError, PydanticSerializationError):
            return _dumps(_valid(self.to_dict()), separators=(",", ":"))

    def to_text(self) -> str:
        """The text to put in a provider's tool-result message.

        A string output is sent as is, other outputs as JSON; an error as
        ``"Error (kind): message"`` followed by its details when there are any; a
        :attr:`notice` follows on its own line. Always valid Unicode: a lone surrogate
        becomes U+FFFD.
        """
        text = self._text()
        return f"{text}\n\nNotice: {_valid_text(self.notice)}" if self.notice else text

    def _text(self) -> str:
        if self.presented is not None:
            return _valid_text(_dumps(_jsonable(dict(self.presented))))
        if self.error is not None:
            error = self.error.to_dict()
            text = f"Error ({error['kind']}): {error['message']}"
            if error["details"]:
                text += "\n" + _dumps(error["details"])
            return text
        if isinstance(self.output, str):
            return _valid_text(self.output)
        return _valid_text(_dumps(self._jsonable_output()))

    def _jsonable_output(self) -> Any:
        return _jsonable(self.output)
