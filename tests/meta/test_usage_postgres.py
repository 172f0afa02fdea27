"""Learned pairs in PostgreSQL: the same bounded, per-catalog store as in SQLite, shared
by every process on the database, migrated on its own."""

from __future__ import annotations

from collections.abc import Iterator

import anyio
import psycopg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from postgres_server import PostgresServer
from satchel import InvalidInputError, StorageError
from satchel.meta import PostgresUsageStore, UsageStore
from satchel.meta._usage_postgres import MIGRATIONS

pytestmark = [pytest.mark.anyio, pytest.mark.postgres]


@pytest.fixture
def url(postgres_server: PostgresServer) -> Iterator[str]:
    made = postgres_server.create_database()
    yield made
    postgres_server.drop_database(made)


async def test_it_is_a_usage_store_bounded_per_catalog_least_recently_used_first(
    url: str,
) -> None:
    store = PostgresUsageStore(url, max_pairs=3)
    assert isinstance(store, UsageStore)
    for query in ("a", "b", "c"):
        await store.learn("cat", query, "t")
    again = await store.learn("cat", "a", "t")  # a is used again: b is now the oldest
    await store.learn("cat", "d", "t")
    await store.learn("other", "x", "u")

    pairs = await store.pairs("cat")
    assert [p.query for p in pairs] == ["d", "a", "c"]
    assert again.uses == 2
    assert pairs[1].uses == 2
    assert [p.tool for p in await store.pairs("other")] == ["u"]
    await store.close()


async def test_pairs_are_shared_between_stores_and_forgotten_by_query_or_tool(url: str) -> None:
    one, two = PostgresUsageStore(url), PostgresUsageStore(url)
    await one.learn("cat", "book  a table", "create_event")
    await one.learn("cat", "table for two", "create_event")
    await two.learn("cat", "email mom", "send_email")

    assert {p.query for p in await two.pairs("cat", tool="create_event")} == {
        "book a table",
        "table for two",
    }
    assert await two.forget("cat", query="book a   table") == 1
    assert await one.forget("cat", tool="create_event") == 1
    assert [(p.query, p.tool) for p in await one.pairs("cat")] == [("email mom", "send_email")]
    assert await one.forget("cat") == 1
    await one.close()
    await two.close()


async def test_many_processes_opening_a_new_database_migrate_it_once(url: str) -> None:
    stores = [PostgresUsageStore(url) for _ in range(4)]
    async with anyio.create_task_group() as group:
        for i, store in enumerate(stores):
            group.start_soon(store.learn, "cat", f"query {i}", "t")
    applied = [store.applied_migrations for store in stores]
    assert sorted(applied, key=len) == [[], [], [], [m.name for m in MIGRATIONS]]
    assert len(await stores[0].pairs("cat")) == 4
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            b"SELECT name FROM satchel_migrations WHERE component = 'meta'"
        ).fetchall()
    assert rows == [("0001_meta_learned",)]
    for store in stores:
        await store.close()


async def test_an_unreachable_database_and_a_closed_store_are_storage_errors(
    postgres_server: PostgresServer,
) -> None:
    bad = postgres_server.url("no_such_database").replace("postgresql://", "postgresql://x:pw@")
    store = PostgresUsageStore(bad)
    with pytest.raises(StorageError, match="cannot open the learned-pairs store") as caught:
        await store.learn("cat", "q", "t")
    assert "pw" not in str(caught.value)
    await store.close()
    with pytest.raises(StorageError, match="closed"):
        await store.pairs("cat")


def test_max_pairs_below_one_is_refused() -> None:
    with pytest.raises(InvalidInputError, match="max_pairs"):
        PostgresUsageStore("postgresql://x/y", max_pairs=0)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    query=st.one_of(st.text(max_size=40), st.text(min_size=501, max_size=520), st.none()),
)
async def test_bad_pairs_get_a_clear_error_and_lose_nothing(url: str, query: object) -> None:
    store = PostgresUsageStore(url)
    await store.learn("cat", "keep this one", "get_weather")
    valid = isinstance(query, str) and 0 < len(" ".join(query.split())) <= 500
    valid = valid and "\x00" not in str(query)
    if valid:
        pair = await store.learn("cat", query, "send_email")  # type: ignore[arg-type]
        assert pair.query == " ".join(str(query).split())
    else:
        with pytest.raises(InvalidInputError):
            await store.learn("cat", query, "send_email")  # type: ignore[arg-type]
    kept = [(p.query, p.tool) for p in await store.pairs("cat", tool="get_weather")]
    assert kept == [("keep this one", "get_weather")]
    await store.forget("cat", tool="send_email")
    await store.close()
