"""Fixtures for the memory contract suite.

Every contract test takes ``store`` (or ``make_store`` to choose options) and runs once
per backend in :data:`BACKENDS`. To add a backend, add its name there and a branch in
:func:`open_store` that opens a fresh, empty store of that kind.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from satchel.memory import MemoryStore, SQLiteStore

BACKENDS = ["sqlite"]

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


async def open_store(backend: str, workdir: Path, **options: Any) -> MemoryStore:
    """A fresh store of ``backend``; ``options`` are constructor options such as
    ``consent``, ``char_limit_mode`` and ``embedder``."""
    options.setdefault("embedder", HashEmbedder())
    if backend == "sqlite":
        return await SQLiteStore.open(workdir / "memory.db", **options)
    raise ValueError(f"unknown backend {backend!r}")


@pytest.fixture(params=BACKENDS)
async def make_store(
    request: pytest.FixtureRequest, tmp_path: Path, anyio_backend: str
) -> AsyncIterator[StoreFactory]:
    stores: list[MemoryStore] = []
    counter = iter(range(1_000))

    async def make(**options: Any) -> MemoryStore:
        workdir = tmp_path / f"store{next(counter)}"
        workdir.mkdir()
        store = await open_store(request.param, workdir, **options)
        stores.append(store)
        return store

    yield make
    for store in stores:
        await store.close()


@pytest.fixture
async def store(make_store: StoreFactory) -> MemoryStore:
    return await make_store()
