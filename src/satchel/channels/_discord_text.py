"""What the inbound Discord channel reads and writes, apart from the wire: a Discord
message object turned into an :class:`~satchel.channels.InboundMessage` (or left out),
text fitted to Discord's 2,000-character limit, and buttons rendered as words to reply
with."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, Final, cast

from satchel.channels._discord import DISCORD_MAX_CHARS
from satchel.channels._inbound import Action, InboundMessage

__all__ = [
    "SNOWFLAKE",
    "action_for",
    "dump_actions",
    "fit_content",
    "inbound_message",
    "load_actions",
    "render_actions",
]

SNOWFLAKE: Final = re.compile(r"^[0-9]{1,20}$")
"""A Discord id (a snowflake, as the API writes it: its decimal digits)."""

_PERSON_TYPES: Final = frozenset({0, 19})
"""Message types a person writes: ``DEFAULT`` and ``REPLY`` (the others are joins, pins,
boosts and the like)."""
_EMPTY: Final = "(empty message)"


def _valid(text: str) -> str:
    """``text`` with any lone surrogate (which no UTF-8 wire can carry) replaced."""
    return text.encode("utf-8", "replace").decode("utf-8")


def _utf16(text: str) -> int:
    """``text``'s length in UTF-16 code units: never less than its code points, so a
    text within Discord's limit by this count is within it however Discord counts."""
    return len(text) + sum(1 for char in text if ord(char) > 0xFFFF)


def _cut(text: str, units: int) -> str:
    """The longest start of ``text`` of at most ``units`` UTF-16 code units."""
    used = 0
    for index, char in enumerate(text):
        used += 2 if ord(char) > 0xFFFF else 1
        if used > units:
            return text[:index]
    return text


def fit_content(text: str, *, reserve: int = 0, limit: int = DISCORD_MAX_CHARS) -> str:
    """``text`` as message content Discord accepts: at most ``limit - reserve``
    characters, never empty.

    A longer text is cut at a line or word break near the limit and ends with a note
    of how long it was; a code block the cut leaves open is closed.

    Example:
        >>> len(fit_content("word " * 2000)) <= 2000
        True
    """
    budget = max(limit - reserve, 1)
    text = _valid(text)
    if not text.strip():
        return _EMPTY[:budget]
    if _utf16(text) <= budget:
        return text
    note = f"\n… (cut short: {len(text):,} characters in all)"
    if _utf16(note) + 40 > budget:
        return _cut(text, budget)
    room = budget - _utf16(note) - len("\n```")
    head = _cut(text, room)
    brk = max(head.rfind("\n"), head.rfind(" "))
    if brk > room * 0.8:
        head = head[:brk]
    head = head.rstrip()
    if head.count("```") % 2:
        head += "\n```"
    return head + note


def render_actions(text: str, actions: Sequence[Action]) -> str:
    """``text`` with its buttons as words to reply with: the bot reads messages, not
    button presses (see :mod:`satchel.channels._discord_inbound`).

    Example:
        >>> render_actions("Approve?", [Action("Approve", "a"), Action("Deny", "d")])
        'Approve?\\n\\nReply to this message with **Approve** or **Deny**.'
    """
    if not actions:
        return fit_content(text)
    labels = [f"**{_plain_label(action.label)}**" for action in actions]
    words = labels[0] if len(labels) == 1 else ", ".join(labels[:-1]) + " or " + labels[-1]
    footer = f"\n\nReply to this message with {words}."
    footer = _cut(footer, DISCORD_MAX_CHARS // 2)
    return fit_content(text, reserve=_utf16(footer)) + footer


def _plain_label(label: str) -> str:
    """A label without the characters that would break its bold markup."""
    return re.sub(r"[*_~`|\\\n\r]+", " ", _valid(label)).strip()[:80] or "?"


def _norm(text: str) -> str:
    return re.sub(r"[\W_]+", " ", text.casefold()).strip()


def action_for(text: str, actions: Sequence[Action]) -> str | None:
    """The :attr:`Action.data` whose label ``text`` answers (the label alone, in any
    case, with any punctuation around it), else ``None``.

    Example:
        >>> action_for("approve!", [Action("Approve", "consent:approve:1")])
        'consent:approve:1'
    """
    said = _norm(text)
    if not said:
        return None
    for action in actions:
        if _norm(_plain_label(action.label)) == said:
            return action.data
    return None


def _snowflake(value: Any) -> str | None:
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        value = str(value)
    return value if isinstance(value, str) and SNOWFLAKE.match(value) else None


def _timestamp(value: Any) -> datetime:
    if isinstance(value, str):
        try:
            moment = datetime.fromisoformat(value)
        except ValueError:
            return datetime.now(UTC)
        return moment.astimezone(UTC) if moment.tzinfo else moment.replace(tzinfo=UTC)
    return datetime.now(UTC)


def _attachments(raw: Mapping[str, Any]) -> list[str]:
    found = raw.get("attachments")
    if not isinstance(found, list):
        return []
    lines: list[str] = []
    for item in cast(list[Any], found)[:10]:
        if isinstance(item, dict):
            item = cast(dict[str, Any], item)
            name, url = item.get("filename"), item.get("url")
            if isinstance(name, str) and isinstance(url, str):
                lines.append(_valid(f"[attachment: {name[:200]} {url[:500]}]"))
    return lines


def _replied_to(reference: Any, channel_id: str) -> str | None:
    """The id a message reference answers: a reply (type 0, the default) in the same
    channel; a forward (type 1) or a reference elsewhere answers nothing here."""
    if not isinstance(reference, dict):
        return None
    reference = cast(dict[str, Any], reference)
    if reference.get("type", 0) != 0 or reference.get("channel_id", channel_id) != channel_id:
        return None
    return _snowflake(reference.get("message_id"))


def inbound_message(
    raw: Any, *, channel_id: str, bot_id: str, dm: bool
) -> InboundMessage | str | None:
    """The :class:`InboundMessage` a Discord message object holds.

    Returns:
        The message; else the id of a message to pass over (the bot's own, another
        bot's or a webhook's, a system message, one with no text), or ``None`` for
        something without an id.
    """
    if not isinstance(raw, dict):
        return None
    raw = cast(dict[str, Any], raw)
    message_id = _snowflake(raw.get("id"))
    if message_id is None:
        return None
    author: dict[str, Any] = (
        cast(dict[str, Any], raw["author"]) if isinstance(raw.get("author"), dict) else {}
    )
    sender = _snowflake(author.get("id"))
    kind = raw.get("type", 0)
    if (
        sender is None
        or sender == bot_id
        or author.get("bot") is True
        or author.get("system") is True
        or raw.get("webhook_id") is not None
        or isinstance(kind, bool)
        or not (isinstance(kind, int) and kind in _PERSON_TYPES)
    ):
        return message_id
    content = raw.get("content")
    text = _valid(content) if isinstance(content, str) else ""
    text = re.sub(rf"<@!?{bot_id}>", "", text).strip() if bot_id else text.strip()
    text = "\n".join([text, *_attachments(raw)]).strip()
    if not text:
        return message_id
    reply_to = _replied_to(raw.get("message_reference"), channel_id)
    meta: dict[str, str] = {"dm": "true"} if dm else {}
    username = author.get("username")
    if isinstance(username, str) and username:
        meta["author"] = _valid(username[:100])
    return InboundMessage(
        channel="discord",
        chat=channel_id,
        sender=sender,
        text=text,
        message_id=message_id,
        reply_to=reply_to,
        received_at=_timestamp(raw.get("timestamp")),
        meta=meta,
    )


def dump_actions(actions: Sequence[Action]) -> str:
    """``actions`` as text to keep in a :class:`~satchel.channels.CursorStore`."""
    return json.dumps([[a.label, a.data] for a in actions])


def load_actions(stored: str) -> tuple[Action, ...]:
    """The actions :func:`dump_actions` wrote (none, for anything else)."""
    try:
        pairs = json.loads(stored)
    except ValueError:
        return ()
    if not isinstance(pairs, list):
        return ()
    found: list[Action] = []
    for pair in cast(list[Any], pairs):
        if isinstance(pair, list) and len(cast(list[Any], pair)) == 2:
            label, data = cast(list[Any], pair)
            if isinstance(label, str) and isinstance(data, str):
                found.append(Action(label=label, data=data))
    return tuple(found)
