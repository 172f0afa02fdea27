"""Writing the agent's mail: an answer threaded under the mail it answers (``Re:`` once,
``In-Reply-To`` and ``References``), and a new mail with its buttons written out as
lines to answer with."""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import UTC, datetime
from email.message import EmailMessage
from email.policy import SMTP
from email.utils import format_datetime, make_msgid

from satchel.channels._inbound import Action

__all__ = ["new_mail", "reply_subject", "threaded_reply"]

_REPLY_ONLY = re.compile(r"^\s*(?:(?:re|aw|sv|antw)\s*(?:\[\d+\])?\s*:\s*)+", re.IGNORECASE)
_MAX_REFERENCES = 20
_MAX_SUBJECT = 900


def reply_subject(subject: str) -> str:
    """``Re: <subject>``, with one ``Re:`` however many the subject had.

    Example:
        >>> reply_subject("RE: Re: lunch")
        'Re: lunch'
    """
    bare = _REPLY_ONLY.sub("", " ".join(subject.split()))
    return f"Re: {bare}"[:_MAX_SUBJECT] if bare else "Re: your message"


def _base(sender: str, to: str, subject: str, text: str) -> EmailMessage:
    msg = EmailMessage(policy=SMTP)
    msg["From"] = sender
    msg["To"] = to
    msg["Subject"] = subject
    msg["Date"] = format_datetime(datetime.now(UTC))
    msg["Message-ID"] = make_msgid(domain=sender.rpartition("@")[2] or "localhost")
    msg.set_content(text.replace("\r\n", "\n").replace("\r", "\n"))
    return msg


def threaded_reply(
    *, sender: str, to: str, subject: str, text: str, message_id: str, references: str
) -> EmailMessage:
    """The answer to the mail ``message_id``, in its thread.

    ``References`` is the answered mail's References (its last ids) and its Message-ID,
    as RFC 5322 says; ``Auto-Submitted: auto-replied`` keeps an out-of-office answer
    from starting a loop.
    """
    msg = _base(sender, to, reply_subject(subject), text)
    if message_id:
        msg["In-Reply-To"] = message_id
        ids = [i for i in references.split() if i != message_id][-(_MAX_REFERENCES - 1) :]
        msg["References"] = " ".join([*ids, message_id])
    msg["Auto-Submitted"] = "auto-replied"
    return msg


def new_mail(
    *, sender: str, to: str, text: str, actions: Sequence[Action] = (), subject: str = ""
) -> EmailMessage:
    """A new mail (a reminder, a consent request), its ``actions`` written as lines
    saying what to answer (``Reply APPROVE or DENY``); the subject is the text's first
    line unless given."""
    if actions:
        words = " or ".join(action.label.upper() for action in actions)
        text = f"{text.rstrip()}\n\nReply {words}."
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    title = " ".join((subject or first or "A message from your agent").split())
    if len(title) > 78:
        title = title[:75].rstrip() + "…"
    msg = _base(sender, to, title, text)
    msg["Auto-Submitted"] = "auto-generated"
    return msg
