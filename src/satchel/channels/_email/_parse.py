"""Reading one incoming mail: its headers as text (RFC 2047 encoded words, and the raw
UTF-8 that current mailers write without them), and the words the person wrote, without
the quoted mail they answer or their signature.

The stdlib's modern policy reads raw 8-bit header bytes as replacement characters, so
the header block is decoded here first (UTF-8, else Windows-1252) and the body parts are
decoded by their own charsets. Nothing here raises on a malformed mail: whatever cannot
be read is left out.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from email import message_from_bytes
from email.header import decode_header, make_header
from email.message import Message
from email.parser import HeaderParser
from email.policy import compat32
from email.utils import getaddresses

__all__ = ["MAX_TEXT_CHARS", "ParsedMail", "parse_mail", "trim_reply"]

MAX_TEXT_CHARS = 16_000
"""The most of a mail's text handed to the agent; the rest is cut, and said to be."""

_MAX_REFERENCES = 20
_BLANK_LINE = re.compile(rb"\r?\n\r?\n")
_TAG = re.compile(r"<[^<>]*>")
_BLOCK_TAG = re.compile(r"<\s*(?:br|/p|/div|/li|/tr|/h\d)\b[^<>]*>", re.IGNORECASE)
_INVISIBLE = re.compile(r"<(script|style|head)\b", re.IGNORECASE)
_ENCODED_WORD = re.compile(r"=\?[^?\s]+\?[QqBb]\?[^?\s]*\?=")
_MSG_ID = re.compile(r"<[^<>\s]{1,500}>")
_WROTE = re.compile(
    r"^(?:On\b.{0,300}\bwrote|Am\b.{0,300}\bschrieb|Le\b.{0,300}\bécrit|El\b.{0,300}\bescribió)"
    r"\s*:\s*$",
    re.IGNORECASE,
)
_ORIGINAL = re.compile(
    r"^(?:-{2,}\s*(?:Original Message|Forwarded message|Ursprüngliche Nachricht)\s*-{2,}"
    r"|_{20,})\s*$",
    re.IGNORECASE,
)
_OUTLOOK_FROM = re.compile(r"^\*?(?:From|Von|De)\s*:\*?\s+\S", re.IGNORECASE)
_SENT_FROM = re.compile(r"^(?:Sent from|Get Outlook for|Envoyé de|Gesendet von)\b", re.I)
_SPACES = re.compile(r"[ \t\u00a0]+")


@dataclass(frozen=True, kw_only=True, slots=True)
class ParsedMail:
    """What the channel needs of one incoming mail.

    Attributes:
        sender: The From address, lower-cased (empty when it has none).
        subject: The Subject as text.
        message_id: The Message-ID (``<...>``), or empty.
        in_reply_to: The first id of In-Reply-To, or empty.
        references: The References ids, space-separated (the last 20), else the
            In-Reply-To id.
        text: What the sender wrote, quoted text and signature trimmed, at most
            :data:`MAX_TEXT_CHARS`.
        attachments: The attached files' names.
        automatic: The mail says it was sent by a machine (``Auto-Submitted``, a bulk
            or list ``Precedence``, a bounce): never answered.
    """

    sender: str
    subject: str
    message_id: str
    in_reply_to: str
    references: str
    text: str
    attachments: tuple[str, ...]
    automatic: bool


def parse_mail(raw: bytes, *, truncated: bool = False) -> ParsedMail:
    """Read one mail as the IMAP server holds it.

    Args:
        raw: The message's bytes (perhaps only its beginning).
        truncated: ``raw`` is only the beginning of a bigger mail: the text says so.
    """
    head = _headers(raw)
    body = message_from_bytes(raw, policy=compat32)
    text, attachments = _body(body)
    text = trim_reply(text)
    if not text and attachments:
        text = f"(no text; attached: {', '.join(attachments)[:500]})"
    if truncated:
        text += "\n\n[The mail was too long; only its beginning was read.]"
    if len(text) > MAX_TEXT_CHARS:
        cut = len(text) - MAX_TEXT_CHARS
        text = text[:MAX_TEXT_CHARS] + f"\n\n[{cut} more characters were cut.]"
    in_reply_to = next(iter(_ids(_text_header(head, "In-Reply-To"))), "")
    # RFC 5322 3.6.4: a parent without References is threaded by its In-Reply-To
    references = _ids(_text_header(head, "References")) or ([in_reply_to] if in_reply_to else [])
    return ParsedMail(
        sender=_from(head),
        subject=_text_header(head, "Subject")[:1000],
        message_id=next(iter(_ids(_text_header(head, "Message-ID"))), ""),
        in_reply_to=in_reply_to,
        references=" ".join(references[-_MAX_REFERENCES:]),
        text=text,
        attachments=tuple(attachments),
        automatic=_automatic(head),
    )


def _headers(raw: bytes) -> Message:
    """The header block, its bytes read as UTF-8 (else Windows-1252) before parsing."""
    found = _BLANK_LINE.search(raw)
    block = raw[: found.start()] if found else raw
    try:
        text = block.decode("utf-8")
    except UnicodeDecodeError:
        text = block.decode("cp1252", errors="replace")
    return HeaderParser(policy=compat32).parsestr(text + "\n\n", headersonly=True)


def _text_header(head: Message, name: str) -> str:
    """One header as one line of text, encoded words decoded."""
    value = head.get(name)
    if value is None:
        return ""
    return " ".join(_decode_words(str(value)).split())


def _decode_words(value: str) -> str:
    """``value`` with its RFC 2047 encoded words decoded one by one (so raw UTF-8 around
    them stays as it is), the space between two adjacent words dropped as RFC 2047 says,
    and a word that cannot be decoded kept as written."""
    parts: list[str] = []
    last = 0
    for match in _ENCODED_WORD.finditer(value):
        between = value[last : match.start()]
        if not (parts and between.isspace()):  # parts: a word came before this one
            parts.append(between)
        parts.append(_decode_word(match.group(0)))
        last = match.end()
    parts.append(value[last:])
    return "".join(parts)


def _decode_word(word: str) -> str:
    try:
        return str(make_header(decode_header(word)))
    except (ValueError, LookupError, UnicodeError, AssertionError):
        return word


def _from(head: Message) -> str:
    pairs = getaddresses([_text_header(head, "From")])
    address = pairs[0][1] if pairs else ""
    return address.strip().lower() if "@" in address else ""


def _ids(value: str) -> list[str]:
    return _MSG_ID.findall(value)


def _automatic(head: Message) -> bool:
    """RFC 3834: answer nothing a machine sent (an auto-reply, a bounce, a list)."""
    auto = _text_header(head, "Auto-Submitted").lower()
    precedence = _text_header(head, "Precedence").lower()
    sender = _from(head)
    return (
        (auto != "" and auto != "no")
        or precedence in ("bulk", "list", "junk", "auto_reply")
        or sender.startswith(("mailer-daemon@", "postmaster@"))
        or _text_header(head, "X-Autoreply") != ""
    )


def _body(msg: Message) -> tuple[str, list[str]]:
    """The plain-text body (else the HTML one as text) and the attachments' names."""
    plain: list[str] = []
    rich: list[str] = []
    attachments: list[str] = []
    for part in msg.walk():
        if part.is_multipart():
            continue
        name = _filename(part)
        disposition = str(part.get("Content-Disposition", "")).split(";")[0].strip().lower()
        if name or disposition == "attachment":
            attachments.append(name or "(unnamed)")
            continue
        kind = part.get_content_type()
        if kind == "text/plain":
            plain.append(_unflow(_decoded(part), part))
        elif kind == "text/html":
            rich.append(_html_text(_decoded(part)))
        elif not kind.startswith(("text/", "message/")):
            attachments.append(f"({kind})")
    return "\n".join(plain or rich).strip(), attachments


def _filename(part: Message) -> str:
    try:
        name = part.get_filename()
    except (ValueError, LookupError, UnicodeError, AssertionError):
        return "(unnamed)"
    if not name:
        return ""
    return " ".join(_decode_words(name).split())[:200]


def _decoded(part: Message) -> str:
    """A leaf part's text, by its charset (UTF-8 when it names none or an unknown one,
    Windows-1252 when the bytes are not UTF-8)."""
    try:
        payload = part.get_payload(decode=True)
    except (ValueError, LookupError, UnicodeError, AssertionError):
        return ""
    if not isinstance(payload, bytes):
        return ""
    charset = part.get_content_charset() or "utf-8"
    try:
        text = payload.decode(charset)
    except (LookupError, UnicodeError):
        try:
            text = payload.decode("utf-8")
        except UnicodeDecodeError:
            text = payload.decode("cp1252", errors="replace")
    return text.replace("\r\n", "\n").replace("\r", "\n").replace("\x00", "")


def _unflow(text: str, part: Message) -> str:
    """RFC 3676 ``format=flowed``: a line ending in a space goes on in the next one."""
    if str(part.get_param("format", "", header="content-type")).lower() != "flowed":
        return text
    delsp = str(part.get_param("delsp", "", header="content-type")).lower() == "yes"
    lines: list[str] = []
    carry = ""
    for line in text.split("\n"):
        if line.startswith(" "):  # space-stuffed
            line = line[1:]
        if line.endswith(" ") and line.rstrip() != "--":
            carry += line[:-1] if delsp else line
            continue
        lines.append(carry + line)
        carry = ""
    if carry:
        lines.append(carry)
    return "\n".join(lines)


def _visible(markup: str) -> str:
    """``markup`` without its scripts, styles and head, in one pass (an element never
    closed hides the rest)."""
    lower = markup.lower()
    kept: list[str] = []
    at = 0
    while (found := _INVISIBLE.search(markup, at)) is not None:
        kept.append(markup[at : found.start()])
        close = lower.find(f"</{found.group(1).lower()}", found.end())
        if close < 0:
            return " ".join(kept)
        end = lower.find(">", close)
        at = len(markup) if end < 0 else end + 1
    kept.append(markup[at:])
    return " ".join(kept)


def _html_text(markup: str) -> str:
    markup = _visible(markup)
    markup = _BLOCK_TAG.sub("\n", markup)
    markup = re.sub(r"<\s*blockquote\b", "\n<blockquote", markup, flags=re.IGNORECASE)
    text = html.unescape(_TAG.sub("", markup))
    lines = [_SPACES.sub(" ", line).strip() for line in text.split("\n")]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()


def trim_reply(text: str) -> str:
    """What a person wrote in a mail, without the mail it quotes or their signature.

    Cut: a signature after a ``-- `` line, a "Sent from my phone" last line, everything
    from an "On ... wrote:" line followed by quoted lines, an "Original Message" or
    Outlook ``From:`` block to the end, and ``>`` quoted lines. An answer written
    between quoted lines stays. A mail that is nothing but quotes is kept whole.

    Example:
        >>> trim_reply("Yes, 3pm works.\\n\\nOn Mon, Ada wrote:\\n> Lunch at 3?\\n-- \\nBob")
        'Yes, 3pm works.'
    """
    lines = text.split("\n")
    kept: list[str] = []
    wrote = False  # a line of the person's own is kept
    number = 0
    while number < len(lines):
        line = lines[number]
        bare = line.strip()
        if bare == "--" or _ORIGINAL.match(bare):
            break
        if _OUTLOOK_FROM.match(bare) and _looks_like_header_block(lines, number):
            break
        said = 1 if _WROTE.match(bare) else 2 if _wrote_on_two_lines(lines, number) else 0
        if said:
            following = [ln for ln in lines[number + said : number + said + 3] if ln.strip()]
            if not following or following[0].lstrip().startswith(">"):
                if wrote:
                    break
                number += said
                continue
        if not bare.startswith(">"):
            kept.append(line.rstrip())
            wrote = wrote or bool(bare)
        number += 1
    while kept and not kept[-1].strip():
        kept.pop()
    if kept and _SENT_FROM.match(kept[-1].strip()):
        kept.pop()
    trimmed = re.sub(r"\n{3,}", "\n\n", "\n".join(kept)).strip()
    return trimmed or text.strip()


def _wrote_on_two_lines(lines: list[str], number: int) -> bool:
    """Gmail wraps a long "On <date>, <name> <address> wrote:" over two lines."""
    if number + 1 >= len(lines) or not lines[number].strip().lower().startswith("on "):
        return False
    return bool(_WROTE.match(lines[number].strip() + " " + lines[number + 1].strip()))


def _looks_like_header_block(lines: list[str], number: int) -> bool:
    """An Outlook quote starts ``From:`` then ``Sent:``/``Date:`` (and ``To:``)."""
    nearby = " ".join(ln.strip().lower() for ln in lines[number + 1 : number + 4])
    return any(f"{name}:" in nearby for name in ("sent", "date", "gesendet", "envoyé"))
