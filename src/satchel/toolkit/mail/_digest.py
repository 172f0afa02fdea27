"""The weekly digest: counts, senders, subjects and the threads waiting on the user,
computed from message headers alone (no model)."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from datetime import datetime
from email.utils import parseaddr

from satchel.toolkit.mail._models import DigestSender, DigestThread, EmailSummary, WeeklyDigest

__all__ = ["build_digest", "thread_key"]

_PREFIX = re.compile(r"^\s*((re|fwd?|aw|sv|tr)\s*(\[\d+\])?\s*:\s*)+", re.IGNORECASE)
_MAX_SUBJECTS = 30


def thread_key(subject: str) -> str:
    """The subject a conversation is known by: reply and forward prefixes removed,
    spaces collapsed, case folded.

    Example:
        >>> thread_key("RE: Fwd:  Lunch  plans")
        'lunch plans'
    """
    return " ".join(_PREFIX.sub("", subject).split()).casefold()


def _same(address: str, other: str) -> bool:
    return parseaddr(address)[1].casefold() == parseaddr(other)[1].casefold()


def build_digest(
    received: Sequence[EmailSummary],
    sent: Sequence[EmailSummary],
    *,
    address: str,
    since: datetime,
    until: datetime,
) -> WeeklyDigest:
    """Digest ``received`` (the period's inbox) against ``sent`` (what the user sent).

    A thread needs a reply when its latest received message was written to the user by
    someone else and nothing the user sent answers it (by In-Reply-To, or by subject
    after it).
    """
    counts: Counter[str] = Counter()
    unread: Counter[str] = Counter()
    for mail in received:
        counts[mail.sender] += 1
        unread[mail.sender] += mail.unread
    senders = [
        DigestSender(sender=s, count=n, unread=unread[s])
        for s, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    ]
    newest = sorted(received, key=lambda m: m.date or since, reverse=True)
    subjects = list(dict.fromkeys(m.subject for m in newest))[:_MAX_SUBJECTS]
    answered = {m.in_reply_to for m in sent if m.in_reply_to}
    threads: dict[str, list[EmailSummary]] = {}
    for mail in newest:
        threads.setdefault(thread_key(mail.subject), []).append(mail)
    waiting: list[DigestThread] = []
    for key, mails in threads.items():
        last = mails[0]
        if _same(last.sender, address) or not any(_same(t, address) for t in last.to):
            continue
        if last.message_id in answered:
            continue
        when = last.date or since
        if any(thread_key(m.subject) == key and (m.date or since) >= when for m in sent):
            continue
        waiting.append(
            DigestThread(
                subject=last.subject,
                last_from=last.sender,
                last_date=last.date,
                messages=len(mails),
                email_id=last.email_id,
            )
        )
    return WeeklyDigest(
        since=since,
        until=until,
        total=len(received),
        unread=sum(m.unread for m in received),
        senders=senders,
        subjects=subjects,
        threads_needing_reply=waiting,
        sent=len(sent),
    )
