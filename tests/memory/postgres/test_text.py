"""Text PostgreSQL would otherwise refuse or choke on: NUL characters, the escape
character itself, emoji, huge values, and full-text syntax in queries."""

from __future__ import annotations

import random

import pytest

from satchel import NotFoundError
from satchel.memory import BlockKind, Domain, SearchFilters
from satchel.memory.postgres import PostgresStore
from satchel.memory.postgres._rows import dec, enc

pytestmark = [pytest.mark.anyio, pytest.mark.postgres]

ESC = "\ue000"


@pytest.mark.parametrize(
    "text", ["", "plain", "\x00", "a\x00b", ESC, ESC + "0", "\x00" + ESC + "1\x00", "🙂\x00🙂"]
)
def test_the_nul_escape_round_trips_and_concatenates(text: str) -> None:
    assert "\x00" not in enc(text)
    assert dec(enc(text)) == text
    assert enc(text + "x" + text) == enc(text) + enc("x") + enc(text)


async def test_nul_and_escape_characters_survive_every_field(pg_store: PostgresStore) -> None:
    odd = f"a\x00b{ESC}0c{ESC}"
    await pg_store.create_block(
        "ada", "odd", odd, description=odd, tags=[odd, "t"], metadata={"k": odd}
    )
    block = await pg_store.append_to_block("ada", "odd", odd, separator="\x00")
    assert block.value == odd + "\x00" + odd
    assert block.chars == 2 * len(odd) + 1
    assert (block.description, block.tags, block.metadata) == (odd, (odd, "t"), {"k": odd})
    block = await pg_store.replace_in_block("ada", "odd", f"c{ESC}\x00a", "-")
    assert block.value == f"a\x00b{ESC}0-\x00b{ESC}0c{ESC}"
    message = await pg_store.add_message(
        "ada", "user", odd, conversation_id=odd, tags=[odd], metadata={"k": odd}
    )
    assert (message.content, message.conversation_id, message.tags) == (odd, odd, (odd,))
    assert (await pg_store.list_messages("ada", conversation_id=odd)) == [message]
    hits = await pg_store.search(
        "ada", "a b", domains=Domain.CONVERSATIONS, filters=SearchFilters(tags=(odd,))
    )
    assert [h.text for h in hits] == [odd]


async def test_a_label_with_a_nul_is_simply_not_found(pg_store: PostgresStore) -> None:
    with pytest.raises(NotFoundError):
        await pg_store.get_block("ada", "x\x00y")
    with pytest.raises(NotFoundError):
        await pg_store.get_block("ada", "bob/x\x00y")


async def test_huge_values_are_stored_whole_and_their_start_is_searchable(
    pg_store: PostgresStore,
) -> None:
    rng = random.Random(3)
    words = ["".join(rng.choices("abcdefghijklmnopqrstuvwxyz", k=9)) for _ in range(60_000)]
    huge = "needle " + " ".join(words)  # 600 KB of distinct words: past a tsvector's 1 MB
    await pg_store.create_block("ada", "huge", huge, kind=BlockKind.ARCHIVAL)
    emoji = "🙂" * 100_000
    await pg_store.create_block("ada", "emoji", emoji, kind=BlockKind.ARCHIVAL)
    assert (await pg_store.get_block("ada", "huge")).value == huge
    assert (await pg_store.get_block("ada", "emoji")).chars == 100_000
    hits = await pg_store.search("ada", "needle", mode="bm25")
    assert [h.label for h in hits] == ["huge"]
    block = await pg_store.append_to_block("ada", "huge", "tail " * 20_000)
    assert block.chars == len(huge) + 1 + 100_000


@pytest.mark.parametrize(
    "query",
    [
        "' & | ! <-> :* ( ) \\",
        "a:* & !b | (c <-> d)",
        "'quoted' \"double\" -not OR or AND and",
        "x" * 100_000,
        "\x00" * 1000,
        "🙂 日本語 ß İ",
    ],
)
async def test_tsquery_syntax_in_a_query_never_raises(pg_store: PostgresStore, query: str) -> None:
    await pg_store.create_block("ada", "n", "not or and quoted double", kind=BlockKind.ARCHIVAL)
    for mode in ("hybrid", "bm25", "vector"):
        await pg_store.search("ada", query, mode=mode)  # type: ignore[arg-type]


async def test_accents_and_word_forms_match_like_on_sqlite(pg_store: PostgresStore) -> None:
    await pg_store.create_block("ada", "cafe", "Visiting cafés in Zürich", kind=BlockKind.ARCHIVAL)
    for query in ("cafe", "CAFÉS", "zurich", "visit", "visited"):
        hits = await pg_store.search("ada", query, mode="bm25")
        assert [h.label for h in hits] == ["cafe"], query
