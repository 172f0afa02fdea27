"""``satchel run --embedder openai:MODEL --embed-base-url URL`` as a real process: the
model (a local Chat Completions server) writes and searches memory, and memory embeds
through a second local server speaking OpenAI's embeddings wire format."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import anyio
import pytest

from agent.fake_openai import FakeOpenAI, completion, scripted, serving
from agent.test_run_cli import satchel_run
from embed.fake_embeddings import FakeEmbeddings

pytestmark = pytest.mark.anyio


async def test_run_embeds_memory_with_the_provider(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    insert = {"operation": "insert", "label": "tea", "content": "Sam likes green tea"}
    steps: list[dict[str, Any]] = [
        completion(calls=[("recall", insert)]),
        completion(calls=[("search", {"query": "green tea", "domain": "archival_memory"})]),
        completion("Sam likes green tea."),
    ]
    chat = FakeOpenAI(scripted(steps))
    embeddings = FakeEmbeddings(dim=24)
    with serving(chat) as chat_url, serving(embeddings) as embed_url:
        done = await anyio.to_thread.run_sync(
            lambda: satchel_run(
                db,
                "--model",
                "openai:fake-model",
                "--base-url",
                chat_url,
                "--embedder",
                "openai:fake-embed",
                "--embed-base-url",
                embed_url,
                "What does Sam like?",
            )
        )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "Sam likes green tea."
    searched = json.loads(chat.requests[2]["messages"][-1]["content"])
    assert searched["results"][0]["label"] == "tea"
    assert "Warning" not in searched["message"]
    assert ["green tea"] in [body["input"] for body in embeddings.requests]
    with sqlite3.connect(db) as conn:
        sizes = {n for (n,) in conn.execute("SELECT length(vec) / 4 FROM embeddings")}
    assert sizes == {24}
