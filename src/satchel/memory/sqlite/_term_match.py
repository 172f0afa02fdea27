"""Which query terms a row contains, as the store's full-text index sees them, for
coverage fusion.

Asking the store's index (``MATCH term AND rowid = ?``) decodes the term's whole
doclist, milliseconds for a common term in a large store. Instead the rows' text (the
first 100,000 characters) is indexed in a private in-memory FTS5 table with the same
tokenizer, each term is looked up there, and the table is emptied again (a rollback).
The table keeps no copy of the text and no column sizes (``content=''``,
``columnsize=0``): only its index is read, and filling it costs a quarter less.

Keeping the table between searches (keyed by text, so that rows seen before need no
tokenizing) was measured and was slower, on LoCoMo as at 100,000 entries: a table
grown by many small commits answers each term more slowly than a fresh one, and the
text has to be read anyway to know it is unchanged (``bench/README.md``).
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Sequence

from satchel.memory.sqlite._messages import BLOCKS
from satchel.memory.sqlite._migrations import TOKENIZER
from satchel.memory.sqlite._rows import placeholders

__all__ = ["matched_terms"]

_COVERAGE_CHARS = 100_000

_local = threading.local()


def _scratch() -> sqlite3.Connection:
    """This thread's in-memory database with the empty FTS5 table ``cover``."""
    conn: sqlite3.Connection | None = getattr(_local, "conn", None)
    if conn is None:
        conn = sqlite3.connect(":memory:")
        conn.execute(
            "CREATE VIRTUAL TABLE cover USING fts5 "
            f"(text, content = '', columnsize = 0, tokenize = '{TOKENIZER}')"
        )
        _local.conn = conn
    return conn


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
    scratch = _scratch()
    try:
        scratch.executemany("INSERT INTO cover (rowid, text) VALUES (?, ?)", rows)
        for term in terms:
            quoted = '"' + term.replace('"', '""') + '"'
            for (pk,) in scratch.execute("SELECT rowid FROM cover WHERE cover MATCH ?", (quoted,)):
                matched[int(pk)].append(term)
    finally:
        scratch.rollback()
    return matched
