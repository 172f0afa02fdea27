"""Pattern's result shapes (seeds 000 and 002), made from satchel's results: its
``send_message`` answers ``{"success": true, "message": ...}``; the other built-ins
answer as satchel's do."""

from __future__ import annotations

import dataclasses

from pydantic import BaseModel

from satchel.tools import ToolResult

__all__ = ["pattern_result"]


def pattern_result(result: ToolResult, tool: str) -> ToolResult:
    """``result`` of ``tool`` in Pattern's shape: a successful ``send_message`` as
    ``{success: true, message}`` (satchel's sentence saying where it went); every other
    result unchanged.

    Example:
        >>> pattern_result(await registry.call("send_message", {"message": "Hi"}),
        ...                "send_message").output
        {'success': True, 'message': 'Sent to user. Your turn is over.'}
    """
    if tool != "send_message" or result.error is not None:
        return result
    output = result.output
    said = getattr(output, "message", None) if isinstance(output, BaseModel) else None
    message = said if isinstance(said, str) else "Message sent successfully"
    return dataclasses.replace(result, output={"success": True, "message": message}, wrapped=False)
