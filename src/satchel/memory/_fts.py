"""Turn any user text into a safe full-text query.

Users and models type anything: quotes, ``AND (``, ``NEAR/3``, ``col:term``, ``*``,
``-``, ``^``, emoji, NUL bytes, 100 KB pastes. None of that may reach a full-text
engine as syntax. :func:`query_terms` extracts plain word tokens (runs of letters and
digits in any script, the same characters SQLite's ``unicode61`` tokenizer keeps),
lower-cases them, drops duplicates and common English function words (unless nothing
else is left), and caps their number and length. Each backend then renders the terms in
its own syntax: :func:`fts5_match` quotes every term as an FTS5 string and joins them
with ``OR`` (BM25 ranks documents matching more and rarer terms higher), so the result
can never be a syntax error.
"""

from __future__ import annotations

import re

__all__ = ["MAX_TERMS", "STOPWORDS", "fts5_match", "query_terms"]

MAX_TERMS = 32
"""At most this many distinct terms are kept from a query."""
_MAX_TERM_CHARS = 64
_MAX_SCAN_CHARS = 20_000

_TOKEN_RE = re.compile(r"[^\W_]+")

_STOPWORD_TEXT = """
    a about above after again against all am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for
    from further had has have having he her here hers herself him himself his how i if in
    into is it its itself just me more most my myself no nor not now of off on once only
    or other our ours ourselves out over own same she should so some such than that the
    their theirs them themselves then there these they this those through to too under
    until up very was we were what when where which while who whom why will with would
    you your yours yourself yourselves s t ll re ve d m
"""

STOPWORDS = frozenset(_STOPWORD_TEXT.split())
"""English function words dropped from queries: they match nearly every entry, cost
the most to rank, and carry almost no BM25 weight."""


def query_terms(text: str) -> list[str]:
    """The plain, lower-cased, de-duplicated search terms in ``text``.

    Stop words are dropped unless the query has nothing else. At most
    :data:`MAX_TERMS` terms of at most 64 characters each are kept, taken from the
    first 20,000 characters.

    Example:
        >>> query_terms('What did "Caroline" research? NEAR/3 AND (x*')
        ['caroline', 'research', 'near', '3', 'x']
    """
    terms: list[str] = []
    stop: list[str] = []
    seen: set[str] = set()
    for match in _TOKEN_RE.finditer(text, 0, _MAX_SCAN_CHARS):
        term = match.group().lower()[:_MAX_TERM_CHARS]
        if term in seen:
            continue
        seen.add(term)
        if term in STOPWORDS:
            stop.append(term)
            continue
        terms.append(term)
        if len(terms) >= MAX_TERMS:
            break
    return terms or stop[:MAX_TERMS]


def fts5_match(terms: list[str]) -> str | None:
    """An FTS5 ``MATCH`` expression that ORs ``terms`` as quoted strings, or ``None``
    when there are no terms (the caller then skips full-text search)."""
    if not terms:
        return None
    return " OR ".join('"' + term.replace('"', '""') + '"' for term in terms)
