"""Memory with a provider's embedder (the official ``openai`` SDK against a local server
speaking the embeddings wire format), on both backends: vectors of the provider's size,
search that survives a failing provider, writes that keep their text, and a move from
one model to another that resumes after an interruption with every row embedded once."""

from __future__ import annotations

import sqlite3
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
import pytest

from agent.fake_openai import serving, silent_server
from embed.fake_embeddings import FakeEmbeddings
from memory.conftest import BACKENDS, HashEmbedder, PostgresDatabases, open_store
from satchel import EmbeddingError
from satchel.embed import OpenAIEmbedder
from satchel.memory import BlockKind, MemoryStore, SQLiteStore

pytestmark = pytest.mark.anyio

PROBE = ["satchel"]
"""What the embedder sends to learn a model's size."""


@dataclass
class Target:
    """One database, reopened at will with any embedder."""

    backend: str
    workdir: Path
    url: str | None

    async def open(self, embedder: Any) -> MemoryStore:
        return await open_store(self.backend, self.workdir, url=self.url, embedder=embedder)

    def dims(self) -> list[tuple[str, int, int]]:
        """``(domain, row, dimensions)`` of every stored vector."""
        if self.backend == "sqlite":
            with sqlite3.connect(self.workdir / "memory.db") as conn:
                rows = conn.execute("SELECT domain, item, length(vec) / 4 FROM embeddings")
                return [("blocks" if d == 0 else "messages", i, n) for d, i, n in rows]
        assert self.url is not None
        with psycopg.connect(self.url) as conn:
            out: list[tuple[str, int, int]] = []
            for domain, table in (
                ("blocks", "satchel_block_vectors"),
                ("messages", "satchel_message_vectors"),
            ):
                rows = conn.execute(
                    f"SELECT pk, vector_dims(embedding) FROM {table} WHERE embedding IS NOT NULL"
                ).fetchall()
                out += [(domain, int(pk), int(n)) for pk, n in rows]
            return out


@pytest.fixture(params=BACKENDS)
def target(request: pytest.FixtureRequest, tmp_path: Path) -> Target:
    url = None
    if request.param == "postgres":
        databases: PostgresDatabases = request.getfixturevalue("postgres_databases")
        url = databases.fresh()
    return Target(request.param, tmp_path, url)


@pytest.fixture
def fake() -> FakeEmbeddings:
    return FakeEmbeddings(dim=32)


@pytest.fixture
def url(fake: FakeEmbeddings) -> Iterator[str]:
    with serving(fake) as base:
        yield base


def provider(url: str) -> OpenAIEmbedder:
    return OpenAIEmbedder("fake-embed", base_url=url, max_retries=0)


@pytest.fixture
async def store(target: Target, url: str) -> AsyncIterator[MemoryStore]:
    opened = await target.open(provider(url))
    yield opened
    await opened.close()


NOTES = [f"note {i} about {animal}" for i, animal in enumerate(["kiwis", "otters", "owls"] * 3)]
SAID = ["kiwis are birds", "otters hold hands", "owls hunt at night", "hello there"]


async def fill(store: MemoryStore) -> int:
    for i, text in enumerate(NOTES):
        await store.create_block("ada", f"note{i}", text, kind=BlockKind.ARCHIVAL)
    for text in SAID:
        await store.add_message("ada", "user", text)
    return len(NOTES) + len(SAID)


def embedded_texts(fake: FakeEmbeddings) -> Counter[str]:
    return Counter(t for body in fake.requests if body["input"] != PROBE for t in body["input"])


async def test_vectors_have_the_providers_size_and_search_uses_them(
    target: Target, store: MemoryStore, fake: FakeEmbeddings
) -> None:
    count = await fill(store)
    dims = target.dims()
    assert len(dims) == count
    assert {n for _, _, n in dims} == {32}
    hits = await store.search("ada", "otters", mode="vector", limit=3)
    assert "otters" in hits[0].text
    assert hits[0].vector_score is not None
    assert hits[0].vector_score > 0.5
    assert ["otters"] in [body["input"] for body in fake.requests]  # the query, embedded
    assert getattr(hits, "warnings", None) == ()


async def test_a_failing_provider_turns_search_to_keywords_with_a_warning(
    store: MemoryStore, fake: FakeEmbeddings, url: str
) -> None:
    await fill(store)
    fake.fail_after = 0
    hits = await store.search("ada", "otters")
    assert {h.text for h in hits} >= {"note 1 about otters", "otters hold hands"}
    assert all(h.vector_score is None for h in hits)
    warnings = getattr(hits, "warnings", ())
    assert warnings == (
        f"searched by keywords only: the embedder failed ({url} failed (500): The server "
        "had an error.)",
    )
    assert list(await store.search("ada", "otters", mode="vector")) == []
    fake.fail_after = None
    assert getattr(await store.search("ada", "otters"), "warnings", None) == ()


async def test_a_write_while_the_provider_fails_is_kept_and_reembed_missing_fills_it(
    target: Target, store: MemoryStore, fake: FakeEmbeddings
) -> None:
    await fill(store)
    fake.fail_after = 0
    await store.create_block("ada", "late", "lemurs sunbathe", kind=BlockKind.ARCHIVAL)
    await store.add_message("ada", "user", "lemurs again")
    assert (await store.get_block("ada", "late")).value == "lemurs sunbathe"
    assert next(h.text for h in await store.search("ada", "lemurs sunbathe")) == "lemurs sunbathe"
    assert len(target.dims()) == len(NOTES) + len(SAID)
    fake.fail_after = None
    before = len(fake.requests)
    assert await store.reembed(missing_only=True) == 2  # type: ignore[call-arg]
    assert sorted(t for body in fake.requests[before:] for t in body["input"]) == [
        "lemurs again",
        "lemurs sunbathe",
    ]
    assert len(target.dims()) == len(NOTES) + len(SAID) + 2


async def test_a_move_to_another_model_is_reported_then_resumes_after_an_interruption(
    target: Target, fake: FakeEmbeddings, url: str
) -> None:
    first = await target.open(HashEmbedder())
    count = await fill(first)
    await first.close()
    assert {n for _, _, n in target.dims()} == {64}

    second = await target.open(provider(url))
    hits = await second.search("ada", "otters")
    assert {h.text for h in hits} >= {"note 1 about otters", "otters hold hands"}
    (warning,) = getattr(hits, "warnings", ())
    assert warning == (
        "the memory database holds vectors of 'test-hash-bow' (64 dimensions), not of the "
        "embedder in use, 'openai:fake-embed' (32 dimensions): vector search is off "
        "(keyword search only) until `satchel memory reembed --embedder openai:fake-embed` "
        "moves them to it (or use --embedder test-hash-bow, as they were written)"
    )
    fake.fail_after = len(fake.requests) + 2  # two pages of three, then the server fails
    with pytest.raises(EmbeddingError):
        await second.reembed(batch_size=3)
    await second.close()
    halfway = target.dims()
    assert {n for _, _, n in halfway} == {32}  # the old vectors are gone, none mixed in
    assert len(halfway) == 6

    fake.fail_after = None
    third = await target.open(provider(url))
    try:
        seen: list[tuple[int, int]] = []
        done = await third.reembed(batch_size=3, progress=lambda d, t: seen.append((d, t)))
        assert done == count - 6
        assert seen[0] == (0, count - 6)
        assert seen[-1] == (count - 6, count - 6)
        hits = await third.search("ada", "otters", mode="vector", limit=3)
        assert "otters" in hits[0].text
        assert getattr(hits, "warnings", None) == ()
        assert await third.reembed(batch_size=3) == count  # no move left: everything again
    finally:
        await third.close()
    dims = target.dims()
    assert len(dims) == count
    assert len({(d, pk) for d, pk, _ in dims}) == count  # one vector per row
    assert {n for _, _, n in dims} == {32}
    texts = embedded_texts(fake)
    assert set(texts) == {*NOTES, *SAID, "otters"}
    assert texts["otters"] == 1  # the vector search's query
    assert {texts[t] for t in [*NOTES, *SAID]} == {2}  # the resumed move once, then the renewal


async def test_a_process_on_the_old_model_stops_using_vectors_after_a_move(
    target: Target, fake: FakeEmbeddings, url: str
) -> None:
    old = await target.open(HashEmbedder())
    try:
        await old.create_block("ada", "a", "kiwis are birds", kind=BlockKind.ARCHIVAL)
        new = await target.open(provider(url))
        try:
            assert await new.reembed() == 1
            await old.create_block("ada", "b", "otters hold hands", kind=BlockKind.ARCHIVAL)
            hits = await old.search("ada", "otters")
            assert [h.text for h in hits] == ["otters hold hands"]
            (warning,) = getattr(hits, "warnings", ())
            assert "holds vectors of 'openai:fake-embed' (32 dimensions)" in warning
            await old.create_block("ada", "c", "owls hunt", kind=BlockKind.ARCHIVAL)
            assert [n for _, _, n in target.dims()] == [32]  # none of the old process's
            assert await new.reembed(missing_only=True) == 2  # type: ignore[call-arg]
            found = await new.search("ada", "owls", mode="vector", limit=1)
            assert [h.text for h in found] == ["owls hunt"]
        finally:
            await new.close()
    finally:
        await old.close()


async def test_an_import_while_the_provider_fails_is_an_error_that_writes_nothing(
    target: Target, store: MemoryStore, fake: FakeEmbeddings, url: str, tmp_path: Path
) -> None:
    source = await SQLiteStore.open(tmp_path / "source.db", embedder=None)
    try:
        await fill(source)
        records = [record async for record in source.export_records("ada")]
    finally:
        await source.close()
    fake.fail_after = 0
    with pytest.raises(EmbeddingError, match="failed \\(500\\)"):
        await store.import_records(records)
    assert await store.list_blocks("ada") == []
    fake.fail_after = None
    report = await store.import_records(records)
    assert report.blocks == len(NOTES)
    assert len(target.dims()) == len(NOTES) + len(SAID)


async def test_a_provider_that_hangs_costs_a_search_its_query_timeout_not_the_query(
    target: Target,
) -> None:
    with silent_server() as url:
        hanging = OpenAIEmbedder(
            "m", base_url=url, dimensions=8, timeout=2, max_retries=0, query_timeout=0.5
        )
        store = await target.open(hanging)
        try:
            await store.create_block("ada", "fact", "otters hold hands", kind=BlockKind.ARCHIVAL)
            hits = await store.search("ada", "otters")
            assert [h.text for h in hits] == ["otters hold hands"]
            assert getattr(hits, "warnings", ()) == (
                "searched by keywords only: the embedder did not answer within 0.5 s",
            )
        finally:
            await store.close()
    assert target.dims() == []
