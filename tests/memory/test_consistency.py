"""Contract: the gate cannot be raced, and vectors follow the embedder."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from satchel import PermissionDeniedError
from satchel.memory import BlockKind, ConsentRequest, MemoryStore, Permission

from .conftest import HashEmbedder, StoreFactory, open_store

pytestmark = pytest.mark.anyio


async def test_a_permission_lowered_while_consent_is_pending_is_enforced(
    make_store: StoreFactory,
) -> None:
    store: MemoryStore | None = None

    async def consent(request: ConsentRequest, /) -> bool:
        assert store is not None
        # While the human thinks, the owner lowers bob's share to read-only.
        await store.share_block("ada", "plan", "bob", Permission.READ_ONLY)
        return True

    store = await make_store(consent=consent)
    await store.create_block("ada", "plan", "step 1", permission=Permission.ADMIN)
    await store.share_block("ada", "plan", "bob", Permission.HUMAN)
    with pytest.raises(PermissionDeniedError):
        await store.append_to_block("bob", "plan", "step 2")
    assert (await store.get_block("ada", "plan")).value == "step 1"


async def test_reembed_reports_progress_and_keeps_search_working(store: MemoryStore) -> None:
    for i in range(5):
        await store.create_block(
            "ada", f"note{i}", f"note number {i} about kiwis", kind=BlockKind.ARCHIVAL
        )
    await store.create_block("ada", "empty", "")
    await store.add_message("ada", "user", "kiwis are birds")
    seen: list[tuple[int, int]] = []
    count = await store.reembed(
        progress=lambda done, total: seen.append((done, total)), batch_size=2
    )
    assert count == 6
    assert seen[0] == (0, 6)
    assert seen[-1] == (6, 6)
    assert [done for done, _ in seen] == sorted(done for done, _ in seen)
    hits = await store.search("ada", "kiwis", mode="vector", limit=10)
    assert len(hits) == 6


class OtherEmbedder(HashEmbedder):
    name = "another-model"


@pytest.mark.parametrize("backend", ["sqlite"])
async def test_a_store_reopened_with_another_model_searches_by_bm25_until_reembedded(
    tmp_path: Path, backend: str, caplog: pytest.LogCaptureFixture
) -> None:
    first = await open_store(backend, tmp_path, embedder=HashEmbedder())
    await first.create_block("ada", "fact", "penguins cannot fly", kind=BlockKind.ARCHIVAL)
    await first.close()
    with caplog.at_level(logging.WARNING, logger="satchel.memory"):
        second = await open_store(backend, tmp_path, embedder=OtherEmbedder())
    assert "reembed" in caplog.text
    try:
        assert await second.search("ada", "penguins", mode="vector") == []
        assert [h.text for h in await second.search("ada", "penguins")] == ["penguins cannot fly"]
        assert await second.reembed() == 1
        hits = await second.search("ada", "penguins", mode="vector")
        assert [h.text for h in hits] == ["penguins cannot fly"]
    finally:
        await second.close()


async def test_a_store_without_embedder_searches_by_bm25(make_store: StoreFactory) -> None:
    store = await make_store(embedder=None)
    await store.create_block("ada", "fact", "otters hold hands", kind=BlockKind.ARCHIVAL)
    assert [h.text for h in await store.search("ada", "otters")] == ["otters hold hands"]
    assert await store.search("ada", "otters", mode="vector") == []
    assert await store.reembed() == 0
