"""What :class:`~satchel.channels.ChannelConsent` writes in a chat: the announcement of
an approval request (which agent, what it wants to change, a bounded excerpt of the
arguments with anything secret-looking hidden, the request id and how to answer), and
the short answers to a person's reply.

The excerpt is built from the request's ``arguments`` and never from its ``reason``: a
tool call's reason quotes its arguments whole, secrets included.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

from satchel._redact import redact_urls
from satchel.channels._inbound import Action
from satchel.consent import ApprovalRequest

__all__ = [
    "APPROVE_DATA",
    "DENY_DATA",
    "announcement",
    "answer_buttons",
    "excerpt",
    "what_is_asked",
]

APPROVE_DATA: Final = "consent:approve:"
"""The start of an Approve button's data; the request id follows."""
DENY_DATA: Final = "consent:deny:"
"""The start of a Deny button's data; the request id follows."""

_SECRET_KEY: Final = re.compile(
    r"pass(word|wd|phrase)?|secret|token|api[_-]?key|auth|credential|cookie|session|"
    r"private[_-]?key",
    re.IGNORECASE,
)
_HIDDEN: Final = "[hidden]"
_VALUE_CHARS: Final = 120
_EXCERPT_CHARS: Final = 500
_REASON_CHARS: Final = 300


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _value(value: Any, depth: int = 0) -> str:
    """One argument's value, short, with secret-looking keys of nested objects hidden
    and credentials out of URLs."""
    if isinstance(value, Mapping):
        if depth > 2:
            return "{…}"
        items: list[str] = []
        for key, item in value.items():  # pyright: ignore[reportUnknownVariableType]
            shown = _HIDDEN if _SECRET_KEY.search(str(key)) else _value(item, depth + 1)  # pyright: ignore[reportUnknownArgumentType]
            items.append(f"{key}: {shown}")
        return _cut("{" + ", ".join(items) + "}", _VALUE_CHARS)
    if isinstance(value, list | tuple):
        if depth > 2:
            return "[…]"
        parts = [_value(item, depth + 1) for item in value]  # pyright: ignore[reportUnknownVariableType]
        return _cut("[" + ", ".join(parts) + "]", _VALUE_CHARS)
    if isinstance(value, str):
        return _cut(repr(redact_urls(value)), _VALUE_CHARS)
    return _cut(repr(value), _VALUE_CHARS)


def excerpt(arguments: Mapping[str, Any] | None) -> str:
    """A bounded, one-line excerpt of a call's arguments for a person: ``key=value``
    pairs, each value cut short, the values of secret-looking keys (``password``,
    ``token``, ``api_key``...) hidden, and credentials removed from URLs.

    Example:
        >>> excerpt({"to": "bob@example.org", "password": "hunter2"})
        "to='bob@example.org', password=[hidden]"
    """
    if not arguments:
        return ""
    pairs = [
        f"{key}={_HIDDEN if _SECRET_KEY.search(key) else _value(value)}"
        for key, value in arguments.items()
    ]
    return _cut(", ".join(pairs), _EXCERPT_CHARS)


def what_is_asked(request: ApprovalRequest) -> str:
    """A short phrase for what the request would allow: ``append to memory block
    'human'`` or ``run wipe (operation delete)``."""
    scope = request.scope
    if scope.kind == "tool_execution":
        operation = (request.arguments or {}).get("operation")
        return f"run {scope.tool}" + (
            f" (operation {_cut(str(operation), 40)})" if operation is not None else ""
        )
    return scope.describe().removesuffix(f" (by {scope.agent})")


def announcement(request: ApprovalRequest) -> str:
    """The text that announces ``request`` in a chat."""
    lines = [f"Approval needed: agent {request.agent!r} wants to {what_is_asked(request)}."]
    if request.scope.kind == "memory_edit":
        lines.append(f"What: {_cut(redact_urls(request.reason), _REASON_CHARS)}")
        if request.arguments:
            lines.append(f"Content: {excerpt(request.arguments)}")
    elif request.arguments:
        lines.append(f"Arguments: {excerpt(request.arguments)}")
    expires = request.expires_at.strftime("%H:%M UTC")
    lines.append(f"Request: {request.id} (expires {expires}; no answer means no)")
    lines.append(
        "Answer: reply yes or no to this message, press a button, or write "
        f"'approve {request.id}' or 'deny {request.id}'."
    )
    return "\n".join(lines)


def answer_buttons(request_id: str) -> tuple[Action, Action]:
    """The Approve and Deny buttons of an announcement."""
    return (
        Action("Approve", APPROVE_DATA + request_id),
        Action("Deny", DENY_DATA + request_id),
    )
