"""Fixtures for PostgreSQL-only tests: a fresh migrated database, and a store on it
(the server and the database pool come from ``tests/memory/conftest.py``)."""

from __future__ import annotations

import hashlib
import re
from collections.abc import AsyncIterator, Sequence
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt
import pytest

from satchel.memory.postgres import PostgresStore


class WordEmbedder:
    """Hashed bag of words, 32 dimensions: texts sharing words are similar."""

    name = "pg-test-words"
    dim = 32

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        out[:, 0] = 1e-3  # never all zeros
        for row, text in enumerate(texts):
            for word in re.findall(r"\w+", text.lower()):
                out[row, hashlib.sha1(word.encode()).digest()[0] % self.dim] += 1.0
        return out / np.linalg.norm(out, axis=1, keepdims=True)


class Explaining:
    """A real connection that first runs each statement under ``EXPLAIN (ANALYZE)``
    and keeps the plan (then runs it as asked)."""

    def __init__(self, conn: Any) -> None:
        self.conn = conn
        self.plans: list[dict[str, Any]] = []

    async def execute(self, sql: str, params: Any = None) -> Any:
        cursor = await self.conn.execute(f"EXPLAIN (ANALYZE, FORMAT JSON) {sql}", params)
        self.plans.append((await cursor.fetchone())[0][0]["Plan"])
        return await self.conn.execute(sql, params)


def plan_nodes(plan: dict[str, Any]) -> list[dict[str, Any]]:
    """Every node of a JSON plan."""
    return [plan, *(node for child in plan.get("Plans", []) for node in plan_nodes(child))]


class FreshDatabases(Protocol):
    def fresh(self) -> str: ...


@pytest.fixture
def pg_url(postgres_databases: FreshDatabases) -> str:
    """The URL of a fresh database with every migration applied."""
    return postgres_databases.fresh()


@pytest.fixture
async def pg_store(pg_url: str, anyio_backend: str) -> AsyncIterator[PostgresStore]:
    """A store on :func:`pg_url` with :class:`WordEmbedder`."""
    store = await PostgresStore.open(pg_url, embedder=WordEmbedder())
    yield store
    await store.close()
