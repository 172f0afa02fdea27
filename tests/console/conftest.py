"""Fixtures of the console tests: a seeded memory database, and the console app on it
behind Starlette's test client (a real SQLite file and broker; only the socket is
skipped)."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from satchel.consent import PermissionBroker, SQLiteApprovalStore
from satchel.console import console_app
from satchel.memory import BlockKind, MemoryStore, SQLiteStore

HOSTILE = '<script>window.__xss = 1; alert("x")</script><img src=x onerror="window.__xss = 2">'
"""A stored value a model might write to attack the operator's browser."""


async def seed(store: MemoryStore) -> None:
    """Agent ``ada`` with its starting blocks, a hostile ``human`` block, archival
    entries and a conversation."""
    await store.ensure_agent("ada")
    await store.update_block_text("ada", "human", f"Ada likes green tea. {HOSTILE}")
    await store.create_block(
        "ada", "notes", "Short notes.", description="Scratch pad", char_limit=14
    )
    await store.create_block(
        "ada", "trip", "Kyoto in April, then Osaka.", kind=BlockKind.ARCHIVAL, tags=("travel",)
    )
    await store.create_block(
        "ada", "cello", "Plays the cello on Sundays.", kind=BlockKind.ARCHIVAL, tags=("music",)
    )
    await store.add_message("ada", "user", "Book me a ryokan in Kyoto.")
    await store.add_message("ada", "assistant", "I found three ryokans in Kyoto.")


@dataclass
class Site:
    """The console under the test client, with the store it shows."""

    client: TestClient
    store: MemoryStore
    broker: PermissionBroker

    def csrf(self, path: str = "/agents") -> str:
        page = self.client.get(path)
        found = re.search(r'"X-CSRF-Token": "([0-9a-f]+)"', page.text)
        assert found is not None, page.text
        return found.group(1)


@pytest.fixture
async def site(tmp_path: Path) -> AsyncIterator[Site]:
    db = tmp_path / "memory.db"
    store = SQLiteStore(db, embedder=None)
    await seed(store)
    async with PermissionBroker(SQLiteApprovalStore(db)) as broker:
        app = console_app(store, broker)
        with TestClient(app, base_url="http://127.0.0.1") as client:
            yield Site(client, store, broker)
    await store.close()
