"""Turning text into search terms: tokenising, stop words and stemming.

Two pipelines share the same word pattern (runs of letters and digits in any script,
the characters SQLite's ``unicode61`` tokenizer keeps) and one stop-word list:

* :func:`query_terms` makes any user text safe for a full-text engine (memory search).
  Users and models type anything: quotes, ``AND (``, ``NEAR/3``, ``col:term``, ``*``,
  emoji, NUL bytes, 100 KB pastes. None of that may reach the engine as syntax, so it
  keeps plain lower-cased words, drops duplicates and stop words (unless nothing else
  is left), and caps their number and length. The engine stems them itself (FTS5's
  Porter tokenizer, PostgreSQL's English dictionary), so they are not stemmed here.
* :func:`tokenize` makes the terms of the in-process BM25 index (tool search), on
  documents and queries alike: identifiers split at ``_``, ``-``, ``.``, digits and
  camel case (``listWorkflowRuns`` → ``list workflow runs``), stop words dropped, and a
  light suffix stemmer (:func:`stem`: plural ``s``/``es``/``ies``, ``ing``, ``ed``) folds
  word forms together; an imperfect stem still matches itself. Chinese, Japanese and
  Korean text has no spaces: each such character is a term.

Tool search drops a slightly different stop-word set (:data:`TOOL_STOPWORDS`): its
weights were tuned with it, and changing it is a measured change, not a tidy-up.
"""

from __future__ import annotations

import re
from typing import Final

from satchel.retrieval._settings import MAX_QUERY_TERMS

__all__ = [
    "STOPWORDS",
    "TOOL_STOPWORDS",
    "is_wide_text",
    "query_terms",
    "split_identifier",
    "stem",
    "tokenize",
]

_MAX_TERM_CHARS: Final = 64
_MAX_SCAN_CHARS: Final = 20_000

_WORD: Final = re.compile(r"[^\W_]+")
_CAMEL: Final = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_CJK_CHAR: Final = re.compile(
    r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]"
)

_STOPWORD_TEXT: Final = """
    a about above after again against all am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for
    from further had has have having he her here hers herself him himself his how i if in
    into is it its itself just me more most my myself no nor not now of off on once only
    or other our ours ourselves out over own same she should so some such than that the
    their theirs them themselves then there these they this those through to too under
    until up very was we were what when where which while who whom why will with would
    you your yours yourself yourselves s t ll re ve d m
"""

STOPWORDS: Final = frozenset(_STOPWORD_TEXT.split())
"""English function words dropped from search terms: they match nearly every entry,
cost the most to rank, and carry almost no BM25 weight."""

_NOT_TOOL_STOPWORDS: Final = """
    against because herself himself now ourselves themselves yourselves s t ll re ve d m
"""

TOOL_STOPWORDS: Final = (STOPWORDS - frozenset(_NOT_TOOL_STOPWORDS.split())) | {"also", "please"}
"""The stop words of tool search: :data:`STOPWORDS` without a few reflexives and
contraction pieces, plus words of requests ("please", "also"); the tool-search weights
were tuned with exactly this set."""


def query_terms(text: str) -> list[str]:
    """The plain, lower-cased, de-duplicated search terms in ``text``.

    Stop words are dropped unless the query has nothing else. At most
    :data:`~satchel.retrieval.MAX_QUERY_TERMS` terms of at most 64 characters each are
    kept, taken from the first 20,000 characters.

    Example:
        >>> query_terms('What did "Caroline" research? NEAR/3 AND (x*')
        ['caroline', 'research', 'near', '3', 'x']
    """
    terms: list[str] = []
    stop: list[str] = []
    seen: set[str] = set()
    for match in _WORD.finditer(text, 0, _MAX_SCAN_CHARS):
        term = match.group().lower()[:_MAX_TERM_CHARS]
        if term in seen:
            continue
        seen.add(term)
        if term in STOPWORDS:
            stop.append(term)
            continue
        terms.append(term)
        if len(terms) >= MAX_QUERY_TERMS:
            break
    return terms or stop[:MAX_QUERY_TERMS]


def split_identifier(name: str) -> list[str]:
    """The words of an identifier, lower-cased.

    Example:
        >>> split_identifier("getPullRequest_files2")
        ['get', 'pull', 'request', 'files2']
    """
    return [w.lower() for w in _WORD.findall(_CAMEL.sub(" ", name))]


def stem(word: str) -> str:
    """A light English suffix stemmer for lower-cased words (plural ``s``/``es``/``ies``,
    ``ing``, ``ed``); short and non-ASCII words are left as they are.

    Example:
        >>> stem("repositories"), stem("running"), stem("listed")
        ('repository', 'run', 'list')
    """
    if len(word) <= 3 or not word.isascii():
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith("sses"):
        return word[:-2]
    if word.endswith("ing") and len(word) > 5:
        word = word[:-3]
        return word[:-1] if len(word) > 3 and word[-1] == word[-2] else word
    if word.endswith("ed") and len(word) > 4:
        word = word[:-2]
        return word[:-1] if len(word) > 3 and word[-1] == word[-2] else word
    if word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def tokenize(text: str) -> list[str]:
    """Search terms of ``text`` for tool search: words split as identifiers,
    lower-cased, :data:`TOOL_STOPWORDS` dropped, stemmed; wide-script characters one by
    one.

    Example:
        >>> tokenize("Lists the open pull requests of a repository")
        ['list', 'open', 'pull', 'request', 'repository']
    """
    terms: list[str] = []
    for raw in _WORD.findall(_CAMEL.sub(" ", text)):
        word = raw.lower()
        if _CJK_CHAR.search(word):
            for piece in re.split(f"({_CJK_CHAR.pattern})", word):
                if not piece:
                    continue
                if _CJK_CHAR.fullmatch(piece):
                    terms.append(piece)
                elif piece not in TOOL_STOPWORDS:
                    terms.append(stem(piece))
            continue
        if word in TOOL_STOPWORDS:
            continue
        terms.append(stem(word))
    return terms


def is_wide_text(text: str) -> bool:
    """Whether more than a third of ``text``'s characters are of a wide script (Chinese,
    Japanese, Korean), where a character costs about a token."""
    return len(_CJK_CHAR.findall(text)) * 3 > len(text)
