"""Fixtures for the memory contract suite.

Every contract test takes ``store`` (or ``make_store`` to choose options) and runs once
per backend in :data:`BACKENDS`. To add a backend, add its name there and a branch in
:func:`open_store` that opens a fresh, empty store of that kind.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import anyio
import numpy as np
import numpy.typing as npt
import psycopg
import pytest

from postgres_server import PostgresServer
from satchel.memory import MemoryStore, SQLiteStore
from satchel.memory.postgres import PostgresStore

# --- PostgreSQL backend (issue 6); its tests carry the `postgres` marker ----------------
BACKENDS = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
# ---------------------------------------------------------------------------------------

StoreFactory = Callable[..., Awaitable[MemoryStore]]


class HashEmbedder:
    """A tiny real embedder for contract tests: hashed bag of lower-cased words, so texts
    sharing words are similar. Deterministic and fast; quality tests use MiniLM."""

    name = "test-hash-bow"
    dim = 64

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in re.findall(r"\w+", text.lower()):
                digest = hashlib.blake2b(word.encode(), digest_size=4).digest()
                out[row, int.from_bytes(digest, "little") % self.dim] += 1.0
            norm = float(np.linalg.norm(out[row]))
            if norm == 0:
                out[row, 0] = 1.0
                norm = 1.0
            out[row] /= norm
        return out


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def open_store(
    backend: str, workdir: Path, *, url: str | None = None, **options: Any
) -> MemoryStore:
    """A fresh store of ``backend``; ``options`` are constructor options such as
    ``consent``, ``char_limit_mode`` and ``embedder``; ``url`` is a fresh PostgreSQL
    database for the ``postgres`` backend."""
    options.setdefault("embedder", HashEmbedder())
    if backend == "sqlite":
        return await SQLiteStore.open(workdir / "memory.db", **options)
    if backend == "postgres":
        assert url is not None
        return await PostgresStore.open(url, **options)
    raise ValueError(f"unknown backend {backend!r}")


# --- PostgreSQL backend (issue 6) ------------------------------------------------------
PG_TEMPLATE = "satchel_memory_template"


@pytest.fixture(scope="session")
def postgres_template(postgres_server: PostgresServer) -> str:
    """A database with every migration applied, copied for each test (far cheaper
    than migrating each time). No embedding model is claimed in it, so each test's store
    claims its own."""

    async def prepare() -> None:
        # A conftest elsewhere that imports these fixtures makes its own session copy of
        # this one: whichever runs second finds the template made; make it afresh.
        postgres_server.drop_database(postgres_server.url(PG_TEMPLATE))
        url = postgres_server.create_database(name=PG_TEMPLATE)
        store = await PostgresStore.open(url, embedder=None)
        await store.close()

    # Requested from inside a running event loop: prepare it on a thread of its own.
    with ThreadPoolExecutor(1) as pool:
        pool.submit(anyio.run, prepare).result(timeout=120)
    return PG_TEMPLATE


_RESET = """
    TRUNCATE satchel_block_vectors, satchel_message_vectors, satchel_blocks, satchel_messages,
        satchel_agents RESTART IDENTITY;
    DELETE FROM satchel_meta;
    DO $$ DECLARE r record; BEGIN
        FOR r IN SELECT indexname FROM pg_indexes
                 WHERE schemaname = 'public' AND indexname LIKE '%embedding%hnsw' LOOP
            EXECUTE 'DROP INDEX ' || quote_ident(r.indexname);
        END LOOP;
    END $$;
"""


class PostgresDatabases:
    """Fresh migrated databases for tests: copies of the template, recycled between
    tests (emptied with TRUNCATE, the embedding model and its indexes removed), since
    emptying a database costs a tenth of copying one."""

    def __init__(self, server: PostgresServer, template: str) -> None:
        self.server, self.template = server, template
        self._free: list[tuple[str, psycopg.Connection[Any]]] = []
        self._used: list[tuple[str, psycopg.Connection[Any]]] = []

    def fresh(self) -> str:
        if self._free:
            item = self._free.pop()
        else:
            url = self.server.create_database(template=self.template)
            item = (url, psycopg.connect(url, autocommit=True, connect_timeout=10))
        self._used.append(item)
        return item[0]

    def recycle(self) -> None:
        """Empty the databases the test used and make them available again."""
        for url, conn in self._used:
            try:
                conn.execute(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                    "WHERE datname = current_database() AND pid <> pg_backend_pid()"
                )
                conn.execute(_RESET)
            except psycopg.Error:
                conn.close()
                self.server.drop_database(url)
                continue
            self._free.append((url, conn))
        self._used.clear()

    def close(self) -> None:
        for url, conn in self._free + self._used:
            conn.close()
            self.server.drop_database(url)


@pytest.fixture(scope="session")
def postgres_database_pool(
    postgres_server: PostgresServer, postgres_template: str
) -> Iterator[PostgresDatabases]:
    databases = PostgresDatabases(postgres_server, postgres_template)
    yield databases
    databases.close()


@pytest.fixture
def postgres_databases(postgres_database_pool: PostgresDatabases) -> Iterator[PostgresDatabases]:
    yield postgres_database_pool
    postgres_database_pool.recycle()


# ---------------------------------------------------------------------------------------


@pytest.fixture(params=BACKENDS)
async def make_store(
    request: pytest.FixtureRequest, tmp_path: Path, anyio_backend: str
) -> AsyncIterator[StoreFactory]:
    stores: list[MemoryStore] = []
    counter = iter(range(1_000))
    databases: PostgresDatabases | None = (
        request.getfixturevalue("postgres_databases") if request.param == "postgres" else None
    )

    async def make(**options: Any) -> MemoryStore:
        workdir = tmp_path / f"store{next(counter)}"
        workdir.mkdir()
        if databases is not None:
            options["url"] = databases.fresh()
        store = await open_store(request.param, workdir, **options)
        stores.append(store)
        return store

    yield make
    for store in stores:
        await store.close()


@pytest.fixture
async def store(make_store: StoreFactory) -> MemoryStore:
    return await make_store()
