"""The terms a row contains, read from a scratch FTS5 index
(``satchel.memory.sqlite._term_match``), agree with the store's own full-text index,
across calls, edits and deletes."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from satchel.memory import BlockKind, SQLiteStore
from satchel.memory.sqlite._messages import BLOCKS
from satchel.memory.sqlite._migrations import TOKENIZER
from satchel.memory.sqlite._term_match import matched_terms

pytestmark = pytest.mark.anyio

# Word forms the Porter stemmer folds together, diacritics, digits and other scripts.
WORDS = [
    "run", "running", "runs", "ran", "connect", "connected", "connection", "happy",
    "happiness", "café", "cafe", "naïve", "naive", "résumé", "2024", "x1", "東京", "москва",
    "Straße", "strasse", "ÉCOLE", "ecole", "don't", "e-mail", "email",
]  # fmt: skip


def truth(conn: sqlite3.Connection, terms: list[str], pk: int) -> list[str]:
    """Which terms the store's own index finds in row ``pk``."""
    return [
        term
        for term in terms
        if conn.execute(
            "SELECT 1 FROM blocks_fts WHERE blocks_fts MATCH ? AND rowid = ?",
            ('"' + term.replace('"', '""') + '"', pk),
        ).fetchone()
    ]


async def test_terms_follow_edits_and_deletes(tmp_path: Path) -> None:
    async with await SQLiteStore.open(tmp_path / "m.db", embedder=None) as store:
        await store.create_block("ada", "a", "Running to the café", kind=BlockKind.ARCHIVAL)
        await store.create_block("ada", "b", "a quiet evening", kind=BlockKind.ARCHIVAL)
    terms = ["run", "cafe", "quiet", "evening"]
    with sqlite3.connect(tmp_path / "m.db") as conn:
        pks = [
            int(r[0])
            for r in conn.execute("SELECT pk FROM blocks WHERE kind = 'archival' ORDER BY pk")
        ]
        first = matched_terms(conn, BLOCKS, terms, pks)
        assert first == {pks[0]: ["run", "cafe"], pks[1]: ["quiet", "evening"]}
    async with await SQLiteStore.open(tmp_path / "m.db", embedder=None) as store:
        await store.update_block_text("ada", "a", "a quiet café")
    with sqlite3.connect(tmp_path / "m.db") as conn:
        conn.execute("DELETE FROM blocks WHERE pk = ?", (pks[1],))
        assert matched_terms(conn, BLOCKS, terms, pks) == {pks[0]: ["cafe", "quiet"], pks[1]: []}


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    texts=st.lists(
        st.lists(st.sampled_from(WORDS), min_size=1, max_size=8), min_size=1, max_size=12
    ),
    asks=st.lists(
        st.tuples(
            st.lists(st.sampled_from(WORDS), min_size=1, max_size=4, unique=True),
            st.lists(st.integers(0, 11), min_size=1, max_size=12),
        ),
        min_size=1,
        max_size=6,
    ),
)
def test_terms_agree_with_the_stores_index(
    tmp_path_factory: pytest.TempPathFactory,
    texts: list[list[str]],
    asks: list[tuple[list[str], list[int]]],
) -> None:
    path = tmp_path_factory.mktemp("terms") / "t.db"
    with sqlite3.connect(path) as conn:
        conn.executescript(
            "CREATE TABLE blocks (pk INTEGER PRIMARY KEY, label, description, value);"
            "CREATE VIRTUAL TABLE blocks_fts USING fts5 (label, description, value, "
            f"tokenize = '{TOKENIZER}');"
        )
        for pk, words in enumerate(texts, start=1):
            row = (pk, f"note-{pk}", "", " ".join(words))
            conn.execute("INSERT INTO blocks VALUES (?, ?, ?, ?)", row)
            conn.execute(
                "INSERT INTO blocks_fts (rowid, label, description, value) VALUES (?, ?, ?, ?)", row
            )
        for terms, picks in asks:
            pks = list(dict.fromkeys(p % len(texts) + 1 for p in picks))
            got = matched_terms(conn, BLOCKS, terms, pks)
            assert got == {pk: truth(conn, terms, pk) for pk in pks}
