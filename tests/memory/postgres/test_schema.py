"""The PostgreSQL store's schema: named migrations recorded once, extensions, the
embedding model's indexes, and clear errors when the server cannot serve."""

from __future__ import annotations

from typing import Any

import anyio
import numpy as np
import numpy.typing as npt
import psycopg
import pytest

from postgres_server import PostgresServer
from satchel import StorageError
from satchel.memory import BlockKind
from satchel.memory.postgres import PostgresStore, _migrations, is_postgres_url
from satchel.memory.postgres._migrations import MIGRATIONS

from .conftest import WordEmbedder

pytestmark = [pytest.mark.anyio, pytest.mark.postgres]


def rows(url: str, sql: str) -> list[tuple[Any, ...]]:
    with psycopg.connect(url) as conn:
        return conn.execute(sql.encode()).fetchall()


@pytest.fixture
def empty_url(postgres_server: PostgresServer) -> Any:
    """A brand-new database with nothing in it (not even the extensions)."""
    url = postgres_server.create_database()
    yield url
    postgres_server.drop_database(url)


async def test_a_new_database_gets_the_extensions_and_every_migration_in_order(
    empty_url: str,
) -> None:
    store = await PostgresStore.open(empty_url, embedder=None)
    await store.close()
    names = [m.name for m in MIGRATIONS]
    assert store.applied_migrations == names
    recorded = rows(empty_url, "SELECT position, name FROM satchel_migrations ORDER BY position")
    assert [name for _, name in recorded] == names
    assert [position for position, _ in recorded] == list(range(1, len(names) + 1))
    extensions = {name for (name,) in rows(empty_url, "SELECT extname FROM pg_extension")}
    assert {"vector", "unaccent"} <= extensions


async def test_reopening_applies_nothing_and_keeps_the_data(empty_url: str) -> None:
    async with await PostgresStore.open(empty_url, embedder=None) as store:
        await store.create_block("ada", "persona", "kept")
    async with await PostgresStore.open(empty_url, embedder=None) as again:
        assert again.applied_migrations == []
        assert (await again.get_block("ada", "persona")).value == "kept"


async def test_stores_opened_at_once_on_a_new_database_migrate_it_once(empty_url: str) -> None:
    stores: list[PostgresStore] = []

    async def open_one() -> None:
        stores.append(await PostgresStore.open(empty_url, embedder=WordEmbedder()))

    with anyio.fail_after(60):
        async with anyio.create_task_group() as group:
            for _ in range(4):
                group.start_soon(open_one)
    applied = sorted(name for store in stores for name in store.applied_migrations)
    assert applied == [m.name for m in MIGRATIONS]
    for store in stores:
        await store.close()
    assert rows(empty_url, "SELECT value FROM satchel_meta") == [("pg-test-words:32",)]


async def test_migration_names_are_unique_and_ordered() -> None:
    names = [m.name for m in MIGRATIONS]
    assert len(names) == len(set(names))
    assert names == sorted(names)


async def test_a_user_who_may_not_create_pgvector_gets_told_to_ask_a_superuser(
    postgres_server: PostgresServer, empty_url: str
) -> None:
    database = empty_url.rsplit("/", 1)[1]
    postgres_server.admin("DROP ROLE IF EXISTS satchel_plain")
    postgres_server.admin("CREATE ROLE satchel_plain LOGIN")
    postgres_server.admin(f"ALTER DATABASE {database} OWNER TO satchel_plain")
    url = empty_url.replace("postgres@", "satchel_plain@")
    with pytest.raises(StorageError, match=r"CREATE EXTENSION vector") as info:
        await PostgresStore.open(url, embedder=None)
    assert info.value.details == {"extension": "vector"}
    postgres_server.admin(f"ALTER DATABASE {database} OWNER TO postgres")
    postgres_server.admin("DROP ROLE satchel_plain")


async def test_a_server_without_the_extension_says_how_to_install_it(
    empty_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_migrations, "REQUIRED_EXTENSIONS", ("vector_not_installed_here",))
    with pytest.raises(StorageError, match="Install") as info:
        await PostgresStore.open(empty_url, embedder=None)
    assert "vector_not_installed_here" in info.value.message


async def test_an_unreachable_server_is_a_storage_error_without_the_password() -> None:
    url = "postgresql://ada:s3cret@127.0.0.1:1/nowhere"
    with pytest.raises(StorageError, match="cannot connect") as info:
        await PostgresStore.open(url, embedder=None, timeout=2)
    assert "s3cret" not in info.value.message


async def test_postgres_urls_are_recognised() -> None:
    assert is_postgres_url("postgresql://h/db")
    assert is_postgres_url("postgres://h/db")
    assert not is_postgres_url("/home/ada/satchel.db")


async def test_the_embedding_model_gets_an_hnsw_index_the_planner_uses(
    pg_store: PostgresStore, pg_url: str
) -> None:
    indexes = rows(
        pg_url,
        "SELECT indexname, indexdef FROM pg_indexes WHERE indexname LIKE '%hnsw' "
        "ORDER BY indexname",
    )
    assert [name for name, _ in indexes] == [
        "satchel_blocks_embedding_32_hnsw",
        "satchel_messages_embedding_32_hnsw",
    ]
    assert all("vector_cosine_ops" in definition for _, definition in indexes)
    for i in range(300):
        await pg_store.create_block("ada", f"e{i}", f"entry number {i}", kind=BlockKind.ARCHIVAL)
    vector = "[" + ",".join(["0.125"] * 32) + "]"
    with psycopg.connect(pg_url) as conn:
        conn.execute("ANALYZE satchel_blocks")
        conn.execute("SET enable_seqscan = off")
        plan = conn.execute(
            "EXPLAIN SELECT pk FROM satchel_blocks AS b WHERE b.agent = 'ada' "
            "AND b.kind = 'archival' ORDER BY (b.embedding::vector(32)) <=> %s::vector "
            "LIMIT 50",
            (vector,),
        ).fetchall()
    assert "satchel_blocks_embedding_32_hnsw" in "\n".join(line for (line,) in plan)


class OtherEmbedder:
    name = "other-model"
    dim = 16

    def embed(self, texts: list[str]) -> npt.NDArray[np.float32]:
        return WordEmbedder().embed(texts)[:, :16] + 0.01


async def test_a_different_embedder_searches_without_vectors_until_reembed_adopts_it(
    pg_store: PostgresStore, pg_url: str
) -> None:
    await pg_store.create_block("ada", "note", "zebra crossing", kind=BlockKind.ARCHIVAL)
    async with await PostgresStore.open(pg_url, embedder=OtherEmbedder()) as other:
        assert await other.search("ada", "zebra crossing", mode="vector") == []
        assert [h.label for h in await other.search("ada", "zebra", mode="bm25")] == ["note"]
        progress: list[tuple[int, int]] = []
        assert await other.reembed(progress=lambda done, total: progress.append((done, total))) == 1
        assert progress[-1] == (1, 1)
        hits = await other.search("ada", "zebra crossing", mode="vector")
        assert [h.label for h in hits] == ["note"]
    names = [name for (name,) in rows(pg_url, "SELECT indexname FROM pg_indexes")]
    assert "satchel_blocks_embedding_16_hnsw" in names
    assert "satchel_blocks_embedding_32_hnsw" not in names
    # The first store's model is no longer the database's: its vectors stay off.
    await pg_store.create_block("ada", "late", "zebra again", kind=BlockKind.ARCHIVAL)
    assert rows(pg_url, "SELECT count(*) FROM satchel_blocks WHERE embedding IS NULL") == [(1,)]


async def test_upgrading_marks_agents_that_own_records_as_set_up(
    empty_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    position = [m.name for m in MIGRATIONS].index("0002_agents_initialised")
    monkeypatch.setattr(_migrations, "MIGRATIONS", MIGRATIONS[:position])
    async with await PostgresStore.open(empty_url, embedder=None) as old:
        await old.create_block("ada", "notes", "x")
        await old.add_message("bob", "user", "hi")
    monkeypatch.setattr(_migrations, "MIGRATIONS", MIGRATIONS)

    async with await PostgresStore.open(empty_url, embedder=None) as store:
        assert store.applied_migrations == [m.name for m in MIGRATIONS[position:]]
        summaries = await store.describe_agents()
        used = [await store.ensure_agent(name) for name in ("ada", "bob")]
        fresh = await store.ensure_agent("cyd")

    assert [(s.name, s.initialised, s.template) for s in summaries] == [
        ("ada", True, None),
        ("bob", True, None),
    ]
    assert used == [[], []]
    assert [b.label for b in fresh] == ["persona", "human"]
