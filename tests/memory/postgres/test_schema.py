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
        "satchel_block_vectors_embedding_32_hnsw",
        "satchel_message_vectors_embedding_32_hnsw",
    ]
    assert all("vector_cosine_ops" in definition for _, definition in indexes)
    for i in range(300):
        await pg_store.create_block("ada", f"e{i}", f"entry number {i}", kind=BlockKind.ARCHIVAL)
    vector = "[" + ",".join(["0.125"] * 32) + "]"
    with psycopg.connect(pg_url) as conn:
        conn.execute("ANALYZE satchel_blocks, satchel_block_vectors")
        conn.execute("SET enable_seqscan = off")
        plan = conn.execute(
            "EXPLAIN SELECT b.pk FROM satchel_block_vectors AS v JOIN satchel_blocks AS b "
            "ON b.pk = v.pk WHERE b.agent = 'ada' AND b.kind = 'archival' "
            "ORDER BY (v.embedding::vector(32)) <=> %s::vector LIMIT 50",
            (vector,),
        ).fetchall()
    assert "satchel_block_vectors_embedding_32_hnsw" in "\n".join(line for (line,) in plan)


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
    assert "satchel_block_vectors_embedding_16_hnsw" in names
    assert "satchel_block_vectors_embedding_32_hnsw" not in names
    # The first store's model is no longer the database's: its vectors stay off.
    await pg_store.create_block("ada", "late", "zebra again", kind=BlockKind.ARCHIVAL)
    assert rows(pg_url, "SELECT count(*) FROM satchel_block_vectors WHERE embedding IS NULL") == [
        (1,)
    ]


async def migrate_up_to(url: str, last: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Give the database the schema of an older satchel: the migrations up to ``last``."""
    names = [m.name for m in MIGRATIONS]
    monkeypatch.setattr(_migrations, "MIGRATIONS", MIGRATIONS[: names.index(last) + 1])
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        await _migrations.migrate(conn)
    monkeypatch.setattr(_migrations, "MIGRATIONS", MIGRATIONS)


async def test_upgrading_marks_agents_that_own_records_as_set_up(
    empty_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    await migrate_up_to(empty_url, "0001_blocks_messages_fts", monkeypatch)
    with psycopg.connect(empty_url) as conn:  # what satchel of that schema wrote
        conn.execute(
            "INSERT INTO satchel_blocks (id, agent, label, value, chars, kind, permission, "
            "created_at, updated_at) VALUES ('b1', 'ada', 'notes', 'x', 1, 'working', "
            "'read_write', now(), now())"
        )
        conn.execute(
            "INSERT INTO satchel_messages (id, agent, conversation_id, role, content, "
            "created_at) VALUES ('m1', 'bob', 'default', 'user', 'hi', now())"
        )

    async with await PostgresStore.open(empty_url, embedder=None) as store:
        assert store.applied_migrations == [m.name for m in MIGRATIONS[1:]]
        assert store.applied_migrations[0] == "0002_agents_initialised"
        summaries = await store.describe_agents()
        used = [await store.ensure_agent(name) for name in ("ada", "bob")]
        fresh = await store.ensure_agent("cyd")

    assert [(s.name, s.initialised, s.template) for s in summaries] == [
        ("ada", True, None),
        ("bob", True, None),
    ]
    assert used == [[], []]
    assert [b.label for b in fresh] == ["persona", "human"]


NOTES = {
    "zebra": "a zebra crossing near the station",
    "tea": "green tea with lemon in the afternoon",
    "log": "first line of the log",
}


async def test_upgrading_moves_stored_vectors_to_the_side_tables_and_search_is_unchanged(
    empty_url: str, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The same records through today's API, as the reference.
    async with await PostgresStore.open(pg_url, embedder=WordEmbedder()) as fresh:
        for label, text in NOTES.items():
            await fresh.create_block("ada", label, text, kind=BlockKind.ARCHIVAL)
        await fresh.add_message("ada", "user", "the zebra crossed the road")
        expected = await fresh.search("ada", "zebra crossing road", mode="vector", limit=10)
        expected_hybrid = await fresh.search("ada", "zebra tea", mode="hybrid", limit=10)
    # A database of the previous schema: vectors in the records' embedding columns, with
    # the HNSW index the previous store built on it.
    await migrate_up_to(empty_url, "0002_agents_initialised", monkeypatch)
    model, embedder = "pg-test-words:32", WordEmbedder()
    with psycopg.connect(empty_url) as conn:
        conn.execute(
            "INSERT INTO satchel_meta (key, value) VALUES ('embedding_model', %s)", (model,)
        )
        conn.execute(
            "CREATE INDEX satchel_blocks_embedding_32_hnsw ON satchel_blocks USING hnsw "
            "((embedding::vector(32)) vector_cosine_ops)"
        )
        for label, text in NOTES.items():
            conn.execute(
                "INSERT INTO satchel_blocks (id, agent, label, value, chars, kind, permission, "
                "created_at, updated_at, embedding) VALUES (%s, 'ada', %s, %s, %s, 'archival', "
                "'read_write', now(), now(), %s::vector)",
                (label, label, text, len(text), str(embedder.embed([text])[0].tolist())),
            )
        message = "the zebra crossed the road"
        conn.execute(
            "INSERT INTO satchel_messages (id, agent, conversation_id, role, content, "
            "created_at, embedding) VALUES ('m1', 'ada', 'default', 'user', %s, now(), "
            "%s::vector)",
            (message, str(embedder.embed([message])[0].tolist())),
        )
        stored = dict(conn.execute("SELECT pk, embedding::text FROM satchel_blocks").fetchall())

    async with await PostgresStore.open(empty_url, embedder=WordEmbedder()) as store:
        assert store.applied_migrations == [
            "0003_block_history",
            "0004_vector_side_tables",
            "0005_block_neighbours",
            "0006_one_block_owner_index",
        ]
        moved = dict(rows(empty_url, "SELECT pk, embedding::text FROM satchel_block_vectors"))
        assert moved == stored
        assert rows(empty_url, "SELECT count(*) FROM satchel_message_vectors") == [(1,)]
        columns = rows(
            empty_url,
            "SELECT table_name FROM information_schema.columns WHERE column_name = 'embedding'",
        )
        assert sorted(name for (name,) in columns) == [
            "satchel_block_vectors",
            "satchel_message_vectors",
        ]
        # The same hits in the same order; scores equal to float32 precision (the
        # reference's vectors went over the wire in binary, these as text).
        found = await store.search("ada", "zebra crossing road", mode="vector", limit=10)
        assert [h.text for h in found] == [h.text for h in expected]
        assert [h.score for h in found] == pytest.approx([h.score for h in expected], rel=1e-6)
        hybrid = await store.search("ada", "zebra tea", mode="hybrid", limit=10)
        assert [h.text for h in hybrid] == [h.text for h in expected_hybrid]
        assert [h.score for h in hybrid] == pytest.approx(
            [h.score for h in expected_hybrid], rel=1e-6
        )
        # A migrated block is written and re-embedded like any other.
        await store.append_to_block("ada", "log", "zebra stripes")
        vectors = embedder.embed(["zebra stripes", "first line of the log\nzebra stripes"])
        hits = await store.search("ada", "zebra stripes", mode="vector", limit=3)
        score = next(h.score for h in hits if h.label == "log")
        assert score == pytest.approx(float(vectors[0] @ vectors[1]), rel=1e-5)
    names = {name for (name,) in rows(empty_url, "SELECT indexname FROM pg_indexes")}
    assert "satchel_block_vectors_embedding_32_hnsw" in names
    assert "satchel_blocks_embedding_32_hnsw" not in names


async def test_a_vector_stored_late_never_overwrites_a_newer_write(
    pg_store: PostgresStore, pg_url: str
) -> None:
    block = await pg_store.create_block("ada", "log", "old text", kind=BlockKind.ARCHIVAL)
    await pg_store.append_to_block("ada", "log", "new line")
    pk = rows(pg_url, f"SELECT pk FROM satchel_blocks WHERE id = '{block.id}'")[0][0]
    before = rows(pg_url, f"SELECT embedding::text FROM satchel_block_vectors WHERE pk = {pk}")
    # An embedding of the old text arriving after the append is dropped.
    stale = WordEmbedder().embed(["old text"])
    await pg_store.backend.store_vectors("blocks", [(pk, "old text")], stale)
    after = rows(pg_url, f"SELECT embedding::text FROM satchel_block_vectors WHERE pk = {pk}")
    assert after == before
    assert before[0][0] is not None
    with psycopg.connect(pg_url) as conn:  # a record's side row goes with it
        conn.execute(f"DELETE FROM satchel_blocks WHERE pk = {pk}")
    assert rows(pg_url, "SELECT count(*) FROM satchel_block_vectors") == [(0,)]
