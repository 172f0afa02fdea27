import threading
from collections.abc import Sequence

import anyio
import numpy as np
import numpy.typing as npt
import pytest

from satchel.embed import MiniLMEmbedder, embed_async


class _ThreadRecordingEmbedder:
    """A real embedder that also notes which thread each call ran in."""

    def __init__(self, inner: MiniLMEmbedder) -> None:
        self.inner = inner
        self.threads: list[int] = []

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def dim(self) -> int:
        return self.inner.dim

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        self.threads.append(threading.get_ident())
        return self.inner.embed(texts)


@pytest.mark.anyio
async def test_embed_async_gives_the_same_vectors_as_embed(embedder: MiniLMEmbedder) -> None:
    texts = ["A man is eating food.", "", "The girl is carrying a baby."]
    with anyio.fail_after(30):
        vectors = await embed_async(embedder, texts)
    np.testing.assert_array_equal(vectors, embedder.embed(texts))


@pytest.mark.anyio
async def test_embed_async_runs_off_the_event_loop_thread(embedder: MiniLMEmbedder) -> None:
    recording = _ThreadRecordingEmbedder(embedder)
    with anyio.fail_after(30):
        await embed_async(recording, ["hello"])
    assert recording.threads
    assert threading.get_ident() not in recording.threads


@pytest.mark.anyio
async def test_concurrent_embed_async_calls_all_complete(embedder: MiniLMEmbedder) -> None:
    results: dict[int, npt.NDArray[np.float32]] = {}

    async def one(i: int) -> None:
        results[i] = await embed_async(embedder, [f"sentence number {i}"])

    with anyio.fail_after(30):
        async with anyio.create_task_group() as tg:
            for i in range(4):
                tg.start_soon(one, i)
    assert sorted(results) == [0, 1, 2, 3]
    for i, vectors in results.items():
        np.testing.assert_allclose(vectors, embedder.embed([f"sentence number {i}"]), atol=1e-6)


def test_embed_async_works_under_plain_anyio_run(embedder: MiniLMEmbedder) -> None:
    vectors = anyio.run(embed_async, embedder, ["hello world"])
    assert vectors.shape == (1, 384)
