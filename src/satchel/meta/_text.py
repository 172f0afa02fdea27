"""Turning tool definitions and queries into search terms and embedding texts.

* Identifiers are split at ``_``, ``-``, ``.``, digits-to-letters and camel case
  (``listWorkflowRuns`` → ``list workflow runs``), so a tool's name is searchable by
  its words.
* Terms are lower-cased, common English words dropped, and a light suffix stemmer
  (plural ``s``/``es``/``ies``, ``ing``, ``ed``) folds word forms together. The same
  pipeline runs on documents and queries, so an imperfect stem still matches itself.
* Chinese, Japanese and Korean text has no spaces: each such character is a term.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any, Final, cast

from satchel.tools import ToolSpec

__all__ = ["brief", "document_terms", "embedding_text", "split_identifier", "tokenize"]

_CAMEL: Final = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_WORD: Final = re.compile(r"[^\W_]+")
_CJK_CHAR: Final = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")
_STOPWORDS: Final = frozenset(
    """a about above after again all also am an and any are as at be been before being
    below between both but by can could did do does doing down during each few for from
    further had has have having he her here hers him his how i if in into is it its itself
    just me more most my myself no nor not of off on once only or other our ours out over
    own same she should so some such than that the their theirs them then there these
    they this those through to too under until up very was we were what when where which
    while who whom why will with would you your yours yourself please""".split()
)
_MAX_EMBED_CHARS: Final = 1200
"""The embedder reads at most 256 tokens; more text would only cost tokenising time."""
_BRIEF_CHARS: Final = 72
_BRIEF_WIDE_CHARS: Final = 24
"""Summaries in ``discover_tools`` entries are cut to this many characters (fewer for
text in wide scripts, where a character costs about a token)."""


def split_identifier(name: str) -> list[str]:
    """The words of an identifier, lower-cased.

    Example:
        >>> split_identifier("getPullRequest_files2")
        ['get', 'pull', 'request', 'files2']
    """
    return [w.lower() for w in _WORD.findall(_CAMEL.sub(" ", name))]


def _stem(word: str) -> str:
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
    """Search terms of ``text``: words split as identifiers, lower-cased, stop words
    dropped, stemmed; wide-script characters one by one.

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
                elif piece not in _STOPWORDS:
                    terms.append(_stem(piece))
            continue
        if word in _STOPWORDS:
            continue
        terms.append(_stem(word))
    return terms


def _parameter_names(schema: Mapping[str, Any]) -> list[str]:
    """Top-level argument names, and the values of an ``operation`` enum."""
    props = schema.get("properties")
    if not isinstance(props, dict):
        return []
    names: list[str] = []
    for key, value in cast(dict[str, Any], props).items():
        names.append(key)
        if key == "operation" and isinstance(value, dict):
            enum = cast(dict[str, Any], value).get("enum")
            if isinstance(enum, list):
                names.extend(str(v) for v in cast(list[Any], enum))
    return names


def document_terms(spec: ToolSpec, *, name_weight: int = 2) -> list[str]:
    """The BM25 terms of a tool: its name (counted ``name_weight`` times), summary,
    description, category, actions and parameter names."""
    name_terms = tokenize(" ".join(split_identifier(spec.name)))
    terms = name_terms * max(1, name_weight)
    flat = " ".join(spec.description.split())
    if spec.summary and not flat.startswith(spec.summary.rstrip("…")):
        terms += tokenize(spec.summary)
    terms += tokenize(spec.description)
    extra: Iterable[str] = (
        *(spec.category or "",),
        *spec.actions,
        *_parameter_names(spec.input_schema),
    )
    for item in extra:
        terms += tokenize(" ".join(split_identifier(item)))
    return terms


def embedding_text(spec: ToolSpec) -> str:
    """The text a tool is embedded from: its name's words, then its description."""
    words = " ".join(split_identifier(spec.name))
    text = f"{words}: {' '.join(spec.description.split())}"
    return text[:_MAX_EMBED_CHARS]


def brief(summary: str) -> str:
    """``summary`` cut for a ``discover_tools`` entry (about 72 characters, or 24 of a
    wide script), at a word boundary where there is one.

    Example:
        >>> brief("Add two integers.")
        'Add two integers.'
    """
    text = " ".join(summary.split())
    limit = _BRIEF_WIDE_CHARS if len(_CJK_CHAR.findall(text)) * 3 > len(text) else _BRIEF_CHARS
    if len(text) <= limit:
        return text
    head = text[: limit - 1]
    cut = head.rfind(" ")
    if cut > limit // 2:
        head = head[:cut]
    return head.rstrip(" ,;:.…") + "…"
