"""The ``search`` tool on a real store with the real MiniLM embedder (a few texts)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from satchel.embed import MiniLMEmbedder
from satchel.memory import BlockKind
from satchel.tools import ToolContext

from .conftest import Kit, make_kit

pytestmark = pytest.mark.anyio

NOW = datetime.now(UTC)


@pytest.fixture
async def searchable(tmp_path: Path, minilm: MiniLMEmbedder) -> AsyncIterator[Kit]:
    kit = await make_kit(tmp_path / "search.db", embedder=minilm)
    store = kit.store
    await store.create_block(
        "ada", "pets", "Sam has a grey cat called Miso.", kind=BlockKind.ARCHIVAL, tags=["family"]
    )
    await store.create_block(
        "ada", "work", "Sam works as a nurse at the city hospital.", kind=BlockKind.ARCHIVAL
    )
    await store.create_block("ada", "persona", "I am Ada, a helpful assistant.")
    await store.add_message(
        "ada", "user", "My sister visits next week.", created_at=NOW - timedelta(days=3)
    )
    await store.add_message("ada", "assistant", "I will remind you about your sister's visit.")
    await store.add_message(
        "ada", "user", "I adopted a kitten in 2024.", created_at=datetime(2024, 6, 1, tzinfo=UTC)
    )
    await store.create_block("bob", "secret", "Bob's cat is named Shadow.", kind=BlockKind.ARCHIVAL)
    yield kit
    await store.close()


async def test_a_search_by_meaning_returns_labels_and_full_text(searchable: Kit) -> None:
    out = await searchable.ok(
        "search", {"domain": "archival_memory", "query": "What pet does Sam own?"}
    )

    top = out["results"][0]
    assert top["label"] == "pets"
    assert top["text"] == "Sam has a grey cat called Miso."
    assert top["domain"] == "archival_memory"
    assert all(r["label"] != "persona" for r in out["results"])  # core is not archival


async def test_the_conversation_domain_returns_messages_with_role_and_time(searchable: Kit) -> None:
    out = await searchable.ok("search", {"domain": "conversations", "query": "sister visit"})

    assert out["results"]
    assert all(r["domain"] == "conversations" and r["label"] is None for r in out["results"])
    assert {r["role"] for r in out["results"]} <= {"user", "assistant"}


async def test_the_role_filter_keeps_only_that_role(searchable: Kit) -> None:
    out = await searchable.ok(
        "search", {"domain": "all", "query": "sister", "filters": {"role": "assistant"}}
    )

    assert [r["text"] for r in out["results"]] == ["I will remind you about your sister's visit."]


async def test_tag_and_label_filters_narrow_archival_hits(searchable: Kit) -> None:
    tagged = await searchable.ok(
        "search", {"domain": "all", "query": "Sam", "filters": {"tags": ["family"]}}
    )
    labelled = await searchable.ok(
        "search", {"domain": "archival_memory", "query": "Sam", "filters": {"labels": ["work"]}}
    )

    assert [r["label"] for r in tagged["results"]] == ["pets"]
    assert [r["label"] for r in labelled["results"]] == ["work"]


@pytest.mark.parametrize("field", ["labels", "tags"])
async def test_ten_thousand_filter_items_work_and_more_are_refused(
    searchable: Kit, field: str
) -> None:
    wanted = "work" if field == "labels" else "family"
    many = [wanted, *(f"decoy-{i}" for i in range(9_999))]
    query = {"domain": "archival_memory", "query": "Sam"}

    found = await searchable.ok("search", {**query, "filters": {field: many}})
    error = await searchable.error("search", {**query, "filters": {field: [*many, "one more"]}})

    assert [r["label"] for r in found["results"]] == ["work" if field == "labels" else "pets"]
    assert error.kind == "invalid_arguments"
    assert f"filters.{field}" in error.message


async def test_human_dates_filter_by_time(searchable: Kit) -> None:
    old = await searchable.ok(
        "search",
        {"domain": "conversations", "query": "kitten", "filters": {"end_time": "2024-12-31"}},
    )
    recent = await searchable.ok(
        "search",
        {"domain": "conversations", "query": "sister", "filters": {"start_time": "yesterday"}},
    )
    week = await searchable.ok(
        "search",
        {
            "domain": "conversations",
            "query": "sister",
            "filters": {"start_time": "5 days ago", "end_time": "today"},
        },
    )

    assert [r["text"] for r in old["results"]] == ["I adopted a kitten in 2024."]
    assert [r["text"] for r in recent["results"]] == [
        "I will remind you about your sister's visit."
    ]
    assert len(week["results"]) == 2


async def test_an_unreadable_date_gets_a_clear_retry(searchable: Kit) -> None:
    error = await searchable.error(
        "search", {"domain": "all", "query": "x", "filters": {"start_time": "the blue moon"}}
    )

    assert error.kind == "retry"
    assert "start_time" in error.message
    assert "2026-11-01" in error.message


async def test_a_start_after_the_end_is_a_retry(searchable: Kit) -> None:
    error = await searchable.error(
        "search",
        {
            "domain": "all",
            "query": "x",
            "filters": {"start_time": "2026-02-01", "end_time": "2026-01-01"},
        },
    )

    assert error.kind == "retry"
    assert "after end_time" in error.message


@pytest.mark.parametrize("limit", [0, 101])
async def test_a_limit_outside_1_to_100_is_invalid(searchable: Kit, limit: int) -> None:
    error = await searchable.error("search", {"domain": "all", "query": "cat", "limit": limit})

    assert error.kind == "invalid_arguments"
    assert "limit" in error.message


async def test_the_limit_caps_the_results(searchable: Kit) -> None:
    out = await searchable.ok("search", {"domain": "all", "query": "Sam cat sister", "limit": 1})

    assert len(out["results"]) == 1


async def test_search_never_shows_another_agents_unshared_memory(searchable: Kit) -> None:
    out = await searchable.ok(
        "search", {"domain": "all", "query": "cat named Shadow", "limit": 100}
    )

    assert all("Shadow" not in r["text"] for r in out["results"])


async def test_search_syntax_in_a_query_is_plain_text(searchable: Kit) -> None:
    out = await searchable.ok("search", {"domain": "all", "query": 'cat" AND (NEAR/2 * -"'})

    assert "results" in out


async def test_an_unknown_domain_is_invalid(searchable: Kit) -> None:
    error = await searchable.error("search", {"domain": "everything", "query": "cat"})

    assert error.kind == "invalid_arguments"


async def test_a_question_nothing_in_memory_answers_says_so(searchable: Kit) -> None:
    out = await searchable.ok("search", {"query": "Which quantum chromodynamics lecture is on?"})

    assert out["results"] == []
    assert out["message"].startswith(
        "Nothing in memory matches 'Which quantum chromodynamics lecture is on?'"
    )


async def test_a_line_of_a_core_block_is_found_with_its_label(searchable: Kit) -> None:
    await searchable.store.create_block(
        "ada", "human", "Name: Sam\nSam's sister Ana lives in Porto.\nSam likes green tea."
    )
    out = await searchable.ok("search", {"query": "Where does Sam's sister live?"})

    top = out["results"][0]
    assert (top["domain"], top["label"]) == ("core_memory", "human")
    assert top["text"] == "Sam's sister Ana lives in Porto."


async def test_tool_traffic_is_found_only_when_asked_for(searchable: Kit) -> None:
    await searchable.store.add_message(
        "ada", "tool", '{"weather": "hail over Reykjavik"}', metadata={"name": "forecast"}
    )
    query = {"domain": "conversations", "query": "hail over Reykjavik"}
    plain = await searchable.ok("search", query)
    asked = await searchable.ok("search", {**query, "filters": {"tool_traffic": True}})

    assert all(r["role"] != "tool" for r in plain["results"])
    assert asked["results"][0]["role"] == "tool"


async def test_the_turn_named_in_the_context_is_left_out(searchable: Kit) -> None:
    started = datetime.now(UTC)
    await searchable.store.add_message(
        "ada", "user", "What colour is Sam's cat?", conversation_id="c9", created_at=started
    )
    ctx = ToolContext(agent="ada", conversation_id="c9", turn_started_at=started)
    result = await searchable.tools.call("search", {"query": "What colour is Sam's cat?"}, ctx)
    out = result.structured()

    assert out is not None
    assert out["results"][0]["text"] == "Sam has a grey cat called Miso."
    assert "What colour is Sam's cat?" not in {r["text"] for r in out["results"]}


async def test_when_only_earlier_questions_match_the_search_says_nothing_answers(
    searchable: Kit,
) -> None:
    await searchable.store.add_message(
        "ada", "user", "Which train line does Priya ride on Mondays?"
    )
    out = await searchable.ok("search", {"query": "Which train line does Priya ride on Mondays?"})

    assert out["message"].startswith("Nothing in memory answers")
    assert out["results"][0]["text"] == "Which train line does Priya ride on Mondays?"
