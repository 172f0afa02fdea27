"""Where a cut summary may end: never on a word that needs the next one.

A ``discover_tools`` row has room for about a dozen words of summary, so long summaries
are cut (:func:`~satchel.meta._text.brief`, :func:`~satchel.meta._text.fit_entry_summary`).
A cut that ends on "the", "and" or "to" reads as a broken sentence, so :func:`clean_cut`
drops such dangling words and punctuation before the ellipsis. Words that carry meaning
on their own stay even at the end: dropping "not", "no", "unless", "without" or "if"
would turn "Do not…" into "Do…".
"""

from __future__ import annotations

from typing import Final

__all__ = ["clean_cut"]

_DANGLING: Final = frozenset(
    """a an the and or nor but of to for with in on at by from into onto as than
    that which who whose your its their this these those is are be""".split()  # noqa: SIM905 (a word list reads better as text)
)
_PUNCTUATION: Final = " ,;:.-–—(/…"


def clean_cut(text: str) -> str:
    """``text`` (the kept start of a longer summary) without trailing punctuation and
    dangling words, followed by ``…``; ``""`` when nothing meaningful is left.

    Example:
        >>> clean_cut("Create a new issue in the")
        'Create a new issue…'
    """
    words = text.rstrip(_PUNCTUATION).split(" ")
    while len(words) > 1 and words[-1].lower().strip(_PUNCTUATION) in _DANGLING:
        words.pop()
    kept = " ".join(words).rstrip(_PUNCTUATION)
    return kept + "…" if kept else ""
