"""What a tool call returns: :class:`ToolResult`, never an exception."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel
from pydantic_core import to_json, to_jsonable_python

from satchel._errors import ErrorKind

__all__ = ["ToolError", "ToolResult"]


@dataclass(slots=True)
class ToolError:
    """A structured error for a model to act on.

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
            "message": self.message,
            "details": to_jsonable_python(self.details, fallback=str),
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
    """

    tool: str
    output: Any = None
    error: ToolError | None = None
    coerced: tuple[str, ...] = ()
    wrapped: bool = False

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
            return {"result": to_jsonable_python(out, fallback=str)}
        if isinstance(out, BaseModel):
            return out.model_dump(mode="json")
        if isinstance(out, dict):
            return to_jsonable_python(out, fallback=str)
        return None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict: ``{"ok": true, "output": ...}`` or
        ``{"ok": false, "error": {...}}``."""
        if self.error is not None:
            return {"ok": False, "error": self.error.to_dict()}
        data: dict[str, Any] = {"ok": True, "output": self._jsonable_output()}
        if self.coerced:
            data["coerced"] = list(self.coerced)
        return data

    def to_json(self) -> str:
        """:meth:`to_dict` as compact JSON text."""
        if self.error is None and not self.coerced and isinstance(self.output, BaseModel):
            return '{"ok":true,"output":' + self.output.model_dump_json() + "}"
        return to_json(self.to_dict(), fallback=str).decode()

    def to_text(self) -> str:
        """The text to put in a provider's tool-result message.

        A string output is sent as is, other outputs as JSON; an error as
        ``"Error (kind): message"`` followed by its details when there are any.
        """
        if self.error is not None:
            text = f"Error ({self.error.kind}): {self.error.message}"
            if self.error.details:
                details = to_jsonable_python(self.error.details, fallback=str)
                text += "\n" + json.dumps(details, ensure_ascii=False)
            return text
        if isinstance(self.output, str):
            return self.output
        return json.dumps(self._jsonable_output(), ensure_ascii=False)

    def _jsonable_output(self) -> Any:
        out = self.output
        if isinstance(out, BaseModel):
            return out.model_dump(mode="json")
        return to_jsonable_python(out, fallback=str)
