"""Search terms: query sanitising for full-text engines, and tool-search tokens."""

from __future__ import annotations

from satchel.retrieval import (
    MAX_QUERY_TERMS,
    STOPWORDS,
    TOOL_STOPWORDS,
    query_terms,
    split_identifier,
    stem,
    tokenize,
)


def test_query_terms_keeps_words_and_drops_syntax_and_stop_words() -> None:
    assert query_terms('What did "Caroline" research? NEAR/3 AND (x*') == [
        "caroline",
        "research",
        "near",
        "3",
        "x",
    ]
    assert query_terms("🙂 \x00 *** ---") == []
    assert query_terms("the and of") == ["the", "and", "of"]
    assert query_terms("Été CAFÉ café") == ["été", "café"]


def test_query_terms_are_capped_in_number_and_length() -> None:
    many = " ".join(f"w{i}" for i in range(1000))
    assert len(query_terms(many)) == MAX_QUERY_TERMS
    assert query_terms("a" * 100_000) == ["a" * 64]


def test_tokenize_splits_identifiers_drops_stop_words_and_stems() -> None:
    assert tokenize("listPullRequests please") == ["list", "pull", "request"]
    assert split_identifier("get_PR-files2") == ["get", "pr", "files2"]
    assert tokenize("查询天气") == ["查", "询", "天", "气"]


def test_the_stemmer_folds_common_suffixes_and_leaves_short_words() -> None:
    assert [stem(w) for w in ("repositories", "classes", "running", "listed", "bus")] == [
        "repository",
        "class",
        "run",
        "list",
        "bus",
    ]
    assert stem("was") == "was"


def test_tool_stop_words_are_the_shared_list_with_request_words() -> None:
    assert {"also", "please"} <= TOOL_STOPWORDS
    assert TOOL_STOPWORDS - {"also", "please"} < STOPWORDS
