"""What :class:`~satchel.channels.ChannelConsent` writes and reads in a chat: the
announcement of an approval request (which agent, what it wants to change, a bounded
excerpt of the arguments with anything secret-looking hidden, the request id and how to
answer), and the person's answer (a plain yes or no, ``approve <id>``), read without
what a mail client adds to a reply.

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
    "command",
    "excerpt",
    "own_words",
    "verdict",
    "what_is_asked",
]

APPROVE_DATA: Final = "consent:approve:"
"""The start of an Approve button's data; the request id follows."""
DENY_DATA: Final = "consent:deny:"
"""The start of a Deny button's data; the request id follows."""

_SECRET_KEY: Final = re.compile(
    r"pass(word|wd|phrase)|secret|token|api[_-]?key|(^|[_-])auth($|[_-]|orization)|"
    r"credential|cookie|private[_-]?key|^pin$",
    re.IGNORECASE,
)
"""Argument names whose values an announcement never shows (``password``,
``smtp_password``, ``api_key``, ``auth``, ``authorization``...; not ``author``)."""
_HIDDEN: Final = "[hidden]"
_VALUE_CHARS: Final = 120
_EXCERPT_CHARS: Final = 500
_REASON_CHARS: Final = 300

_COMMAND: Final = re.compile(
    r"^\s*(approve|allow|yes|deny|refuse|no)\s+(ap_[A-Za-z0-9_-]{1,64})[\s.!]*$", re.IGNORECASE
)
_YES: Final = frozenset(
    {"yes", "y", "yep", "yeah", "ok", "okay", "sure", "approve", "approved", "allow", "👍", "✅"}
)
_NO: Final = frozenset(
    {"no", "n", "nope", "deny", "denied", "refuse", "reject", "don't", "dont", "cancel"}
    | {"👎", "❌"}
)
_YES_AFTER: Final = frozenset({"please", "go", "ahead", "do", "it", "thanks", "thank", "you"})
"""Words that may follow a yes without making it ambiguous (``yes, go ahead``)."""
_NO_AFTER: Final = frozenset({"please", "thanks", "thank", "you", "not", "now"})
"""Words that may follow a no (``no thanks``, ``no, not now``)."""
_PUNCTUATION: Final = re.compile(r"[.,;:!?]+")
_APPROVING: Final = frozenset({"approve", "allow", "yes"})
_QUOTE_HEAD: Final = re.compile(r"^on .{1,200} wrote:$", re.IGNORECASE)


def own_words(text: str) -> str:
    """``text`` without what a mail client adds to a reply: the quoted message (lines
    starting with ``>``, and the ``On ... wrote:`` line above them) and the signature
    (from a ``-- `` line on)."""
    kept: list[str] = []
    for line in text.splitlines():
        if line.rstrip() == "--":
            break
        stripped = line.strip()
        if stripped.startswith(">") or _QUOTE_HEAD.match(stripped):
            continue
        kept.append(stripped)
    return " ".join(" ".join(kept).split())


def verdict(text: str) -> bool | None:
    """``True`` for a plain yes, ``False`` for a plain no, ``None`` for anything else
    (a mail reply's quote and signature left out).

    Example:
        >>> verdict("Yes, go ahead!"), verdict("no thanks"), verdict("yes but later")
        (True, False, None)
    """
    words = _PUNCTUATION.sub(" ", own_words(text).lower()).split()
    if words == ["go", "ahead"] or words == ["do", "it"]:
        return True
    if not words:
        return None
    first, rest = words[0], set(words[1:])
    if first in _YES and rest <= _YES_AFTER:
        return True
    if first in _NO and rest <= _NO_AFTER:
        return False
    return None


def command(text: str) -> tuple[str, bool] | None:
    """The request id and verdict of ``approve <id>`` or ``deny <id>`` (also ``yes``,
    ``allow``, ``no``, ``refuse``), or ``None``.

    Example:
        >>> command("deny ap_Xw3")
        ('ap_Xw3', False)
    """
    found = _COMMAND.match(own_words(text))
    if found is None:
        return None
    return found.group(2), found.group(1).lower() in _APPROVING


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
        content = {
            key: value
            for key, value in (request.arguments or {}).items()
            if value is not None and key != "separator"  # how, not what
        }
        if content:
            lines.append(f"Content: {excerpt(content)}")
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
