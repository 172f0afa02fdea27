"""Through a real ``satchel serve`` and the SDK client, a model's first guesses at
field names succeed: ``content`` for ``value`` and back, and ``search`` with no
``domain``."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from mcp import Client

from satchel.memory import SQLiteStore

from .conftest import STARTUP, satchel_stdio

pytestmark = pytest.mark.anyio


async def test_guessed_field_names_and_a_missing_domain_work_over_mcp(tmp_path: Path) -> None:
    db = tmp_path / "memory.db"
    with anyio.fail_after(STARTUP + 60):
        async with Client(satchel_stdio("--db", str(db), "--agent", "alice")) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert "domain" not in tools["search"].input_schema.get("required", [])
            calls = [
                ("context", {"operation": "create", "label": "notes", "content": "Ada."}),
                ("context", {"operation": "append", "label": "notes", "value": "Keeps bees."}),
                ("recall", {"operation": "insert", "content": "Ada's bees live in Lisbon."}),
            ]
            for name, args in calls:
                result = await client.call_tool(name, args)
                assert result.is_error is not True, result.content
            found = await client.call_tool("search", {"query": "bees"})
            assert found.is_error is not True, found.content
            assert found.structured_content is not None
            texts = [r["text"] for r in found.structured_content["results"]]
            assert "Ada's bees live in Lisbon." in texts

    store = await SQLiteStore.open(db, embedder=None)
    try:
        assert (await store.get_block("alice", "notes")).value == "Ada.\nKeeps bees."
    finally:
        await store.close()
