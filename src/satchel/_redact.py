"""Credentials out of URLs before they reach a message, a log or the store.

A service configured by URL may carry its credentials in the URL's user-info part
(``http://ada:PW@host/dav/``, ``https://alice:TOKEN@github.com/org/repo``). The URL is
used as given to connect; everything shown to a model, a person or a log goes through
:func:`strip_userinfo` (one URL) or :func:`redact_urls` (free text such as a third-party
exception's message, which often quotes the URL it failed on).

Hand-written because ``urllib.parse`` and ``httpx.URL`` re-serialise the whole URL
(changing its case and escapes) and reject some of the malformed URLs an error message
may quote, while removing ``userinfo@`` needs only the text between ``://`` and the
authority's end.
"""

from __future__ import annotations

import re

__all__ = ["redact_urls", "strip_userinfo"]

_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://)([^\s/?#\\\"'<>]*)@")
"""A scheme and ``://``, then the user-info part up to its last ``@`` before the
authority ends (``/``, ``?``, ``#``, a quote or whitespace)."""

_SSH_USER = re.compile(r"[A-Za-z0-9._-]+")
"""An SSH login name (``ssh://git@host``): no secret, and part of how to connect."""


def _without(match: re.Match[str]) -> str:
    scheme, userinfo = match.group(1), match.group(2)
    if "ssh" in scheme.lower() and _SSH_USER.fullmatch(userinfo):
        return match.group(0)
    return scheme


def strip_userinfo(url: str) -> str:
    """``url`` without a ``user:password@`` part (an SSH URL keeps a bare login name
    such as ``git@``); any other text is unchanged.

    Example:
        >>> strip_userinfo("http://ada:PW@host/dav/")
        'http://host/dav/'
    """
    return redact_urls(url)


def redact_urls(text: str) -> str:
    """``text`` with the user-info part of every URL in it removed.

    Example:
        >>> redact_urls("GET https://u:p@x.org/a failed")
        'GET https://x.org/a failed'
    """
    if "@" not in text:
        return text
    return _USERINFO.sub(_without, text)
