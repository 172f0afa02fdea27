"""The personal-facts set (``data/personal_facts.json``) keeps its promise: every
question shares no content word with its fact, as the search engines see words."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from satchel.retrieval import STOPWORDS

DATA = Path(__file__).parent / "data" / "personal_facts.json"


def _stems(text: str) -> set[str]:
    """The words of ``text`` as SQLite's porter tokenizer indexes them, without stop
    words (a PostgreSQL stemmer agrees on these short English words)."""
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(x, tokenize = 'porter unicode61')")
    conn.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'row')")
    stemmed: set[str] = set()
    for word in text.replace("'", " ").split():
        conn.execute("DELETE FROM t")
        conn.execute("INSERT INTO t (x) VALUES (?)", (word,))
        if word.strip(".,?!;:").lower() not in STOPWORDS:
            stemmed.update(row[0] for row in conn.execute("SELECT term FROM v"))
    conn.close()
    return stemmed


def test_the_set_has_eight_people_with_ten_facts_each_naming_the_person() -> None:
    people = json.loads(DATA.read_text())["people"]
    assert len(people) >= 8
    for person in people:
        assert len(person["facts"]) >= 10
        for item in person["facts"]:
            assert person["name"] in item["fact"]
            assert person["name"] in item["question"]


def test_no_question_shares_a_content_word_with_its_fact() -> None:
    shared: list[tuple[str, set[str]]] = []
    for person in json.loads(DATA.read_text())["people"]:
        name = _stems(person["name"])
        for item in person["facts"]:
            common = (_stems(item["fact"]) & _stems(item["question"])) - name
            if common:
                shared.append((item["question"], common))
    assert shared == []
