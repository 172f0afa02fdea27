"""Which query terms a row contains, as the store's full-text index sees them, for
coverage fusion.

Asking the store's index (``MATCH term AND rowid = ?``) decodes the term's whole
doclist, milliseconds for a common term in a large store. Instead the rows' text (the
first 100,000 characters) is indexed in a private in-memory FTS5 table with the same
tokenizer, and each term is looked up there.

That table is kept between searches (one per thread), keyed by the text itself: the
terms a text contains depend on nothing else, so a row whose text was indexed by an
earlier search is not tokenized again, and a row whose text changed is simply a new
text. A search over a few thousand entries keeps finding the same rows among its
candidates and their neighbours; there this saves most of the cost. The table is
emptied when it would pass :data:`CACHED_TEXTS` texts or :data:`CACHED_CHARS`
characters, so it never holds more than about that (one search's rows at most on
top). It keeps no copy of the text and no column sizes (``content=''``,
``columnsize=0``): only its index is read.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Sequence

from satchel.memory.sqlite._messages import BLOCKS
from satchel.memory.sqlite._migrations import TOKENIZER
from satchel.memory.sqlite._rows import placeholders

__all__ = ["CACHED_CHARS", "CACHED_TEXTS", "matched_terms"]

CACHED_TEXTS = 4_096
"""At most about this many texts stay indexed per thread between searches."""

CACHED_CHARS = 4_000_000
"""At most about this many characters of text stay indexed per thread."""

_COVERAGE_CHARS = 100_000


class _Scratch:
    """One thread's in-memory FTS5 table ``cover`` and the rowid of each text in it."""

    def __init__(self) -> None:
        self.conn = sqlite3.connect(":memory:")
        self.conn.execute(
            "CREATE VIRTUAL TABLE cover USING fts5 "
            f"(text, content = '', columnsize = 0, tokenize = '{TOKENIZER}')"
        )
        self.rowids: dict[str | None, int] = {}
        self.chars = 0

    def add(self, texts: Sequence[str | None]) -> None:
        """Index those of ``texts`` not indexed yet (emptying the table first if they
        would not fit)."""
        new = [text for text in dict.fromkeys(texts) if text not in self.rowids]
        size = sum(len(text) for text in new if text)
        if not new:
            return
        if len(self.rowids) + len(new) > CACHED_TEXTS or self.chars + size > CACHED_CHARS:
            self.conn.execute("INSERT INTO cover (cover) VALUES ('delete-all')")
            self.rowids.clear()
            new = list(dict.fromkeys(texts))
            size = sum(len(text) for text in new if text)
            self.chars = 0
        first = len(self.rowids) + 1
        self.conn.executemany(
            "INSERT INTO cover (rowid, text) VALUES (?, ?)", enumerate(new, start=first)
        )
        self.conn.commit()
        self.rowids.update((text, rowid) for rowid, text in enumerate(new, start=first))
        self.chars += size


_local = threading.local()


def _rows(
    conn: sqlite3.Connection, domain: int, pks: Sequence[int]
) -> list[tuple[int, str | None]]:
    marks = placeholders(len(pks))
    if domain == BLOCKS:
        sql = (
            "SELECT pk, substr(label || ' ' || description || ' ' || value, 1, ?) "
            f"FROM blocks WHERE pk IN ({marks})"
        )
    else:
        sql = f"SELECT pk, substr(content, 1, ?) FROM messages WHERE pk IN ({marks})"
    return [(int(pk), text) for pk, text in conn.execute(sql, (_COVERAGE_CHARS, *pks))]


def matched_terms(
    conn: sqlite3.Connection, domain: int, terms: Sequence[str], pks: Sequence[int]
) -> dict[int, list[str]]:
    """Which of ``terms`` each row of ``pks`` contains (in the order of ``terms``), as
    the store's full-text index sees them; a row that no longer exists contains none."""
    matched: dict[int, list[str]] = {pk: [] for pk in pks}
    if not pks:
        return matched
    rows = _rows(conn, domain, pks)
    scratch: _Scratch | None = getattr(_local, "scratch", None)
    if scratch is None:
        scratch = _local.scratch = _Scratch()
    try:
        scratch.add([text for _, text in rows])
        wanted = {scratch.rowids[text] for _, text in rows}
        found: dict[str, set[int]] = {}
        for term in terms:
            quoted = '"' + term.replace('"', '""') + '"'
            hits = scratch.conn.execute("SELECT rowid FROM cover WHERE cover MATCH ?", (quoted,))
            found[term] = {rowid for (rowid,) in hits if rowid in wanted}
    except sqlite3.Error:
        _local.scratch = None  # rebuilt from nothing by the next search
        raise
    for pk, text in rows:
        rowid = scratch.rowids[text]
        matched[pk] = [term for term in terms if rowid in found[term]]
    return matched
