"""Cutting a file's text into passages that search can return with their lines.

A passage is a run of whole lines, at most :data:`CHUNK_CHARS` characters (a line
longer than that is cut), that ends where the text has a natural break when one is
near: a Markdown heading starts a new passage, and so does a blank line once a passage
is more than half full. Passages overlap by a couple of lines, so an answer that
straddles a break is still found whole in one of them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

__all__ = ["CHUNK_CHARS", "Chunk", "chunk_text"]

CHUNK_CHARS: Final = 1_200
"""The longest passage, in characters."""

_OVERLAP_LINES: Final = 2
_HEADING = re.compile(r"^#{1,6}\s")


@dataclass(frozen=True, slots=True)
class Chunk:
    """A passage of a file: its text and the (1-based, inclusive) lines it spans."""

    text: str
    start: int
    end: int


def _pieces(text: str) -> list[tuple[int, str]]:
    """The file's lines with their numbers, a line longer than a passage cut in parts."""
    out: list[tuple[int, str]] = []
    for number, line in enumerate(text.split("\n"), start=1):
        while len(line) > CHUNK_CHARS:
            out.append((number, line[:CHUNK_CHARS]))
            line = line[CHUNK_CHARS:]
        out.append((number, line))
    return out


def chunk_text(text: str) -> list[Chunk]:
    """The passages of ``text``, in order; none for a text of only blank lines."""
    pieces = _pieces(text)
    chunks: list[Chunk] = []
    current: list[int] = []  # indices into pieces
    size = 0
    fresh = False  # current holds a non-blank piece no passage has yet

    def close(overlap: bool) -> None:
        nonlocal current, size, fresh
        lines = [pieces[i] for i in current]
        while lines and not lines[-1][1].strip():
            lines.pop()
        while lines and not lines[0][1].strip():
            lines.pop(0)
        if fresh and lines:
            body = "\n".join(line for _, line in lines)
            chunks.append(Chunk(text=body, start=lines[0][0], end=lines[-1][0]))
        kept = current[-_OVERLAP_LINES:] if overlap and len(current) > _OVERLAP_LINES else []
        while kept and sum(len(pieces[i][1]) for i in kept) > CHUNK_CHARS // 4:
            kept = kept[1:]  # a short overlap only: long lines are not repeated
        current = [i for i in kept if pieces[i][1].strip()]
        size = sum(len(pieces[i][1]) + 1 for i in current)
        fresh = False

    for index, (_, line) in enumerate(pieces):
        heading = _HEADING.match(line) is not None
        if current and (
            size + len(line) + 1 > CHUNK_CHARS
            or heading
            or (not line.strip() and size > CHUNK_CHARS // 2)
        ):
            close(overlap=not heading)  # a heading starts afresh, without overlap
        current.append(index)
        size += len(line) + 1
        fresh = fresh or bool(line.strip())  # a blank line alone makes no new passage
    if current:
        close(overlap=False)
    return chunks
