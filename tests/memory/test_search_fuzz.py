"""Contract: any text is a valid query; searching never raises and never changes data."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from satchel.memory import BlockKind, Domain, MemoryStore, SearchFilters

pytestmark = pytest.mark.anyio

FTS_SYNTAX = [
    '"',
    '""',
    "'",
    "AND (",
    "OR",
    "NOT",
    "NEAR/",
    "NEAR(a b, 3)",
    "*",
    "-",
    "^",
    ":",
    "label:",
    "value:x",
    "{label value}:",
    "(",
    ")",
    "+",
    "\\",
    "%",
    "_",
    ";",
    "--",
    "/*",
    "\x00",
    "🙂",
    "👨‍👩‍👧",
    "ß",
    "İ",
    "日本語",
    "\u200b",
    "\ufeff",
]

fragments = st.one_of(st.sampled_from(FTS_SYNTAX), st.text(max_size=20))
queries = st.one_of(
    st.text(),
    st.lists(fragments, max_size=12).map(" ".join),
    st.lists(fragments, max_size=12).map("".join),
    st.tuples(st.sampled_from([*FTS_SYNTAX, "word "]), st.integers(1, 100_000 // 6)).map(
        lambda pair: (pair[0] * pair[1])[:100_000]
    ),
)


@pytest.fixture
async def seeded(store: MemoryStore) -> MemoryStore:
    await store.create_block("ada", "a1", 'he said "AND (" NEAR/3 stars*', kind=BlockKind.ARCHIVAL)
    await store.create_block("ada", "a2", "emoji 🙂 and NUL \x00 inside", kind=BlockKind.ARCHIVAL)
    await store.create_block("ada", "core", "plain core text")
    await store.add_message("ada", "user", "a message with - and ^ and *")
    return store


async def snapshot(store: MemoryStore) -> tuple[object, ...]:
    return (
        tuple(await store.list_blocks("ada")),
        tuple(await store.list_messages("ada", limit=1000)),
    )


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    query=queries,
    domain=st.sampled_from(list(Domain)),
    mode=st.sampled_from(["hybrid", "bm25", "vector"]),
)
@example(query='"AND ( NEAR/3 * - ^', domain=Domain.ALL, mode="hybrid")
@example(query="\x00" * 10, domain=Domain.ALL, mode="hybrid")
@example(query="x" * 100_000, domain=Domain.ALL, mode="hybrid")
@example(query="🙂" * 50_000, domain=Domain.ALL, mode="hybrid")
@example(query="", domain=Domain.ALL, mode="hybrid")
@example(query="   ", domain=Domain.ALL, mode="vector")
async def test_any_query_text_searches_without_raising_and_changes_nothing(
    seeded: MemoryStore, query: str, domain: Domain, mode: str
) -> None:
    before = await snapshot(seeded)
    hits = await seeded.search("ada", query, domains=domain, mode=mode, limit=5)  # type: ignore[arg-type]
    assert len(hits) <= 5
    filtered = await seeded.search(
        "ada",
        query,
        filters=SearchFilters(tags=("no-such " + query[:50],), labels=("no-such " + query[:50],)),
    )
    assert filtered == []
    assert await snapshot(seeded) == before


async def test_fts_syntax_in_a_query_matches_the_words_literally(seeded: MemoryStore) -> None:
    hits = await seeded.search("ada", 'said "AND ( NEAR/3', mode="bm25")
    assert [h.label for h in hits] == ["a1"]
    hits = await seeded.search("ada", "emoji 🙂", mode="bm25")
    assert [h.label for h in hits] == ["a2"]
