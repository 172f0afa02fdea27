"""``satchel serve --embedder openai:MODEL --embed-base-url URL`` as a real MCP process,
against a local server speaking OpenAI's embeddings wire format: what the agent writes
is stored with vectors of the provider's size, search embeds its query there, and a
provider that fails turns search to keywords with a warning instead of an error. On
SQLite and on PostgreSQL."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import psycopg
import pytest
from mcp import Client

from agent.fake_openai import serving
from embed.fake_embeddings import FakeEmbeddings
from postgres_server import PostgresServer

from .conftest import STARTUP, satchel_stdio

pytestmark = pytest.mark.anyio

DIM = 48


def _ok(result: types.CallToolResult) -> dict[str, Any]:
    assert result.is_error is not True, result.content
    assert result.structured_content is not None
    return result.structured_content


def _sqlite_sizes(db: str) -> list[int]:
    with sqlite3.connect(db) as conn:
        return [n for (n,) in conn.execute("SELECT length(vec) / 4 FROM embeddings")]


def _postgres_sizes(url: str) -> list[int]:
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT vector_dims(embedding) FROM satchel_block_vectors WHERE embedding IS NOT NULL"
        ).fetchall()
        return [int(n) for (n,) in rows]


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def db(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return str(tmp_path / "memory.db")
    server: PostgresServer = request.getfixturevalue("postgres_server")
    return server.create_database()


async def test_serve_stores_the_providers_vectors_and_searches_with_them(db: str) -> None:
    fake = FakeEmbeddings(dim=DIM)
    with serving(fake) as url:
        params = satchel_stdio(
            "--db", db, "--agent", "alice", "--template", "none",
            "--embedder", "openai:fake-embed", "--embed-base-url", url,
        )  # fmt: skip
        with anyio.fail_after(STARTUP + 120):
            async with Client(params, mode="legacy") as client:
                for label, text in (
                    ("otters", "otters hold hands while they sleep"),
                    ("kiwis", "kiwis are birds that cannot fly"),
                ):
                    _ok(
                        await client.call_tool(
                            "recall", {"operation": "insert", "label": label, "content": text}
                        )
                    )
                query = {"query": "sleeping otters", "domain": "archival_memory"}
                found = _ok(await client.call_tool("search", query))
                assert found["results"][0]["label"] == "otters"
                assert "Warning" not in found["message"]
                assert ["sleeping otters"] in [body["input"] for body in fake.requests]

                fake.fail_after = 0  # the provider goes down
                degraded = _ok(await client.call_tool("search", query))
                assert degraded["results"][0]["label"] == "otters"
                assert degraded["message"] == (
                    "1 result from archival memory, best first. Warning: searched by keywords "
                    f"only: the embedder failed ({url} failed (500): The server had an error.)."
                )
    sizes = _sqlite_sizes(db) if not db.startswith("postgresql") else _postgres_sizes(db)
    assert sizes == [DIM, DIM]
