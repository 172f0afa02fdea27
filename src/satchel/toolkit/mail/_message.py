"""Reading and writing RFC 5322 messages with the stdlib ``email`` package: turning a
parsed message into the tools' records, checking addresses, building what
``send_email`` sends, and the small search language both backends understand."""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.errors import MessageError
from email.header import Header, decode_header, make_header
from email.headerregistry import Address
from email.message import EmailMessage, Message
from email.policy import default as default_policy
from email.utils import format_datetime, getaddresses, make_msgid, parsedate_to_datetime

from satchel._errors import InvalidInputError
from satchel.toolkit.mail._models import EmailDetails, EmailSummary, SentEmail

__all__ = [
    "MailQuery",
    "build_message",
    "check_addresses",
    "details_of",
    "message_date",
    "receipt_of",
    "summary_of",
]

_SNIPPET_CHARS = 160
_TAG = re.compile(r"<[^>]+>")
_SPACE = re.compile(r"\s+")
_QUERY_TOKEN = re.compile(r'(?:(from|to|subject|cc):)?(?:"([^"]*)"|(\S+))', re.IGNORECASE)


def _eight_bit(value: Header) -> str:
    """A header that arrived as raw 8-bit bytes (not RFC 2047), which ``compat32`` hands
    over as an ``unknown-8bit`` :class:`Header`: its bytes read as UTF-8 (what every
    current mailer writes), else as Windows-1252, never as replacement characters."""
    raw = b"".join(
        part if isinstance(part, bytes) else part.encode("ascii", "replace")
        for part, _ in decode_header(value)
    )
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("cp1252", errors="replace")


def _header(msg: Message, name: str) -> str:
    """A header as text: RFC 2047 encoded words decoded, raw UTF-8 read as UTF-8,
    whitespace collapsed."""
    value = msg.get(name)
    if value is None:
        return ""
    if isinstance(value, Header):
        value = _eight_bit(value)
    try:
        text = str(make_header(decode_header(str(value))))
    except (ValueError, LookupError, UnicodeError):  # a broken encoded word: keep it raw
        text = str(value)
    return " ".join(text.split())


def _addresses(msg: Message, name: str) -> list[str]:
    values = [str(v) for v in msg.get_all(name) or []]
    return [addr for _, addr in getaddresses(values) if addr]


def message_date(msg: Message) -> datetime | None:
    """The Date header as an aware time (UTC when it has no offset); ``None`` when
    missing or unreadable."""
    raw = msg.get("Date")
    if raw is None:
        return None
    try:
        when = parsedate_to_datetime(str(raw))
    except (TypeError, ValueError, IndexError):
        return None
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)


def _decode(part: Message) -> str:
    payload = part.get_payload(decode=True)
    if not isinstance(payload, bytes):
        return ""
    charset = part.get_content_charset() or "utf-8"
    try:
        text = payload.decode(charset, errors="replace")
    except LookupError:
        text = payload.decode("utf-8", errors="replace")
    return text.replace("\r\n", "\n")


def _text_of(msg: Message) -> tuple[str, list[str]]:
    """The plain-text body (or HTML reduced to text) and the attachments' file names."""
    plain: list[str] = []
    rich: list[str] = []
    attachments: list[str] = []
    for part in msg.walk():
        if part.is_multipart():
            continue
        filename = part.get_filename()
        if filename or part.get_content_disposition() == "attachment":
            attachments.append(filename or "(unnamed)")
            continue
        ctype = part.get_content_type()
        if ctype == "text/plain":
            plain.append(_decode(part))
        elif ctype == "text/html":
            rich.append(_SPACE.sub(" ", html.unescape(_TAG.sub(" ", _decode(part)))).strip())
    return ("\n".join(plain) if plain else "\n".join(rich)).strip(), attachments


def summary_of(email_id: str, folder: str, msg: Message, *, unread: bool) -> EmailSummary:
    """The :class:`EmailSummary` of a parsed message."""
    body, _ = _text_of(msg)
    return EmailSummary(
        email_id=email_id,
        folder=folder,
        sender=_header(msg, "From"),
        to=_addresses(msg, "To"),
        subject=_header(msg, "Subject"),
        date=message_date(msg),
        snippet=_SPACE.sub(" ", body)[:_SNIPPET_CHARS],
        unread=unread,
        message_id=_header(msg, "Message-ID") or None,
        in_reply_to=_header(msg, "In-Reply-To") or None,
    )


def details_of(email_id: str, folder: str, msg: Message, *, unread: bool) -> EmailDetails:
    """The :class:`EmailDetails` of a parsed message."""
    body, attachments = _text_of(msg)
    summary = summary_of(email_id, folder, msg, unread=unread)
    return EmailDetails(
        **summary.model_dump(),
        cc=_addresses(msg, "Cc"),
        body=body,
        references=_header(msg, "References").split(),
        attachments=attachments,
    )


def check_addresses(value: str) -> list[str]:
    """Split a comma-separated address list and check each address.

    Raises:
        ValueError: An address is not ``name@domain`` (the message names it).
    """
    parts = [p.strip() for p in value.split(",") if p.strip()]
    if not parts:
        raise InvalidInputError("give at least one email address, such as ada@example.org")
    found: list[str] = []
    for part in parts:
        pairs = getaddresses([part])
        addr = pairs[0][1] if len(pairs) == 1 else ""
        local, at, domain = addr.rpartition("@")
        if not at or not local or "." not in domain or any(c.isspace() for c in addr):
            raise InvalidInputError(f"{part!r} is not an email address (expected name@domain.tld)")
        try:
            Address(addr_spec=addr)
        except (ValueError, IndexError, MessageError) as exc:  # HeaderParseError: b@x..y
            raise InvalidInputError(f"{part!r} is not an email address: {exc}") from None
        found.append(addr)
    return found


def build_message(
    sender: str, to: Sequence[str], subject: str, body: str, cc: Sequence[str] = ()
) -> EmailMessage:
    """The message ``send_email`` sends, with a fresh Message-ID and the current date."""
    msg = EmailMessage(policy=default_policy)
    msg["From"] = sender
    msg["To"] = ", ".join(to)
    if cc:
        msg["Cc"] = ", ".join(cc)
    msg["Subject"] = subject
    msg["Date"] = format_datetime(datetime.now(UTC))
    domain = sender.rpartition("@")[2] or "localhost"
    msg["Message-ID"] = make_msgid(domain=domain)
    msg.set_content(body)
    return msg


def receipt_of(message: EmailMessage, saved_as: str | None) -> SentEmail:
    """The :class:`SentEmail` for a message that went out."""
    return SentEmail(
        message_id=str(message["Message-ID"]),
        sender=str(message["From"]),
        to=_addresses(message, "To"),
        cc=_addresses(message, "Cc"),
        subject=str(message["Subject"]),
        saved_as=saved_as,
    )


@dataclass(frozen=True, kw_only=True, slots=True)
class MailQuery:
    """A parsed search: free words (matched anywhere) and ``from:``, ``to:``, ``cc:`` and
    ``subject:`` terms, all of which must match (case-insensitive substrings).

    Example:
        >>> MailQuery.parse('from:ada subject:"lunch plan" friday').fields
        (('from', 'ada'), ('subject', 'lunch plan'))
    """

    words: tuple[str, ...] = ()
    fields: tuple[tuple[str, str], ...] = field(default=())

    @classmethod
    def parse(cls, text: str) -> MailQuery:
        """Parse the user's search text. Any text is valid."""
        words: list[str] = []
        fields: list[tuple[str, str]] = []
        for match in _QUERY_TOKEN.finditer(text):
            name, quoted, bare = match.groups()
            value = (quoted if quoted is not None else bare or "").strip()
            if not value:
                continue
            if name:
                fields.append((name.lower(), value))
            else:
                words.append(value)
        return cls(words=tuple(words), fields=tuple(fields))

    @property
    def empty(self) -> bool:
        """True when the query matches everything."""
        return not self.words and not self.fields

    def matches(self, msg: Message) -> bool:
        """Whether a parsed message matches (used where no server searches for us)."""
        if self.empty:
            return True
        for name, value in self.fields:
            if value.casefold() not in _header(msg, name).casefold():
                return False
        if self.words:
            heads = " ".join(_header(msg, h) for h in ("From", "To", "Cc", "Subject"))
            text = (heads + "\n" + _text_of(msg)[0]).casefold()
            return all(w.casefold() in text for w in self.words)
        return True
