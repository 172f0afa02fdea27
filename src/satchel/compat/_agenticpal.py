"""AgenticPal's result shapes (seed 004), made from satchel's results.

AgenticPal's tools answer ``{"success": true, "message": ..., "data": ...}``, fail
with ``{"success": false, "message": ..., "error": ...}``, and hold a destructive call
with ``{"status": "pending_confirmation", "tool_name", "parameters", "message"}``.
:func:`agenticpal_result` turns a :class:`~satchel.ToolResult` into those: an output
becomes the envelope; an error stays an error (``ok`` is false, MCP's ``isError``
is set) whose text is the seed's dict (:attr:`ToolResult.presented
<satchel.ToolResult.presented>`). A held call also carries satchel's ``approval_id``,
without which it could never run.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel
from pydantic_core import to_jsonable_python

from satchel.tools import ToolResult

__all__ = ["agenticpal_error", "agenticpal_result"]


def _data(result: ToolResult) -> Any:
    output = result.output
    if isinstance(output, BaseModel):
        return output.model_dump(mode="json")
    return to_jsonable_python(output, fallback=str)


def _message(tool: str, data: Any) -> str:
    if isinstance(data, Mapping):
        said = data.get("message")  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
        if isinstance(said, str) and said:
            return said
    return f"{tool} succeeded."


def agenticpal_error(result: ToolResult) -> dict[str, Any]:
    """The seed's dict for a failed ``result``: ``pending_confirmation`` for a call
    held for approval, otherwise ``{success: false, message, error}`` with the error's
    kind as ``error``."""
    error = result.error
    assert error is not None
    details = error.details
    if error.kind == "needs_approval" and details.get("status") == "pending_confirmation":
        return {
            "status": "pending_confirmation",
            "tool_name": details.get("tool", result.tool),
            "parameters": details.get("arguments", {}),
            "message": error.message,
            "approval_id": details.get("approval_id"),
        }
    return {"success": False, "message": error.message, "error": error.kind}


def agenticpal_result(result: ToolResult) -> ToolResult:
    """``result`` in AgenticPal's shape (see the module docstring). An output that is
    already such an envelope (a dict with ``success``) is left as it is.

    Example:
        >>> agenticpal_result(ToolResult("add", 3)).output
        {'success': True, 'message': 'add succeeded.', 'data': 3}
    """
    if result.error is not None:
        return dataclasses.replace(result, presented=agenticpal_error(result))
    data = _data(result)
    if isinstance(data, Mapping) and "success" in data:
        return result
    envelope: dict[str, Any] = {
        "success": True,
        "message": _message(result.tool, data),
        "data": data,
    }
    return dataclasses.replace(result, output=envelope, wrapped=False)
